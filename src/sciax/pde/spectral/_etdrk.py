"""Exponential time differencing Runge–Kutta steppers ETDRK1, ETDRK2, ETDRK4.

References:
- S. M. Cox and P. C. Matthews, "Exponential time differencing for stiff
  systems", J. Comput. Phys. 176 (2002) 430–455 (the schemes).
- A.-K. Kassam and L. N. Trefethen, "Fourth-order time-stepping for stiff PDEs",
  SIAM J. Sci. Comput. 26 (2005) 1214–1233 (the phi-function coefficients by a
  contour integral, accurate also where `|dt L|` is small).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ..._step_counts import check_dt
from ._stepper import AbstractSpectralStepper


def contour_mean(fn: Callable, z: Array, num_points: int) -> tuple[Array, ...]:
    """Kassam–Trefethen contour average of the analytic functions `fn(w) -> tuple`.

    Returns `mean_j fn(z + r_j)` over `num_points` points `r_j = exp(2 pi i (j + 1/2) / M)`
    on the unit circle around each entry of `z`: by the mean value property this
    is `fn(z)`, free of the cancellation that evaluating e.g. `(e^z - 1) / z`
    directly suffers for small `|z|`. For real `z` the real part is returned.
    Differentiable in `z`.
    """
    roots = jnp.asarray(np.exp(2j * np.pi * (np.arange(num_points) + 0.5) / num_points))
    w0 = z.astype(jnp.result_type(z.dtype, roots.dtype))
    shapes = jax.eval_shape(fn, w0)
    init = tuple(jnp.zeros(s.shape, s.dtype) for s in shapes)

    def body(acc, r):
        return tuple(a + v for a, v in zip(acc, fn(w0 + r))), None

    total, _ = jax.lax.scan(body, init, roots)
    means = tuple(t / num_points for t in total)
    return means if jnp.iscomplexobj(z) else tuple(m.real for m in means)


class AbstractETDRK(AbstractSpectralStepper):
    """An exponential time differencing Runge–Kutta method for a `sciax.pde.SemilinearPDE`.

    Advances the Fourier coefficients `v = rfft(u)` of `u_t = L u + N(u)` with
    the linear part integrated exactly (`exp(dt L)`), so the step is limited by
    the nonlinear term only, not by the stiffness of `L`.

    **Fields:**

    - `dt`: the fixed step (time units), a Python number > 0 (static). Every
      interval of the output times `ts` must be a whole number of steps.
    - `contour_points`: points on the Kassam–Trefethen contour (default 32).

    Subclasses give `etd_coefficients(z)` for `z = dt * L` and one `step`.
    """

    dt: float = eqx.field(static=True)
    contour_points: int = eqx.field(static=True)

    def __init__(self, dt: float, *, contour_points: int = 32):
        name = type(self).__name__
        if isinstance(contour_points, bool) or not isinstance(contour_points, (int, np.integer)) or contour_points < 8:
            raise ValueError(f"{name}: contour_points must be an integer >= 8, got {contour_points!r}")
        self.dt = check_dt(name, dt)
        self.contour_points = int(contour_points)

    def coefficients(self, symbol: Array) -> tuple[Array, ...]:
        return self.etd_coefficients(self.dt * symbol)

    @abc.abstractmethod
    def etd_coefficients(self, z: Array) -> tuple[Array, ...]:
        """The scheme's coefficient arrays for `z = dt * L` (rfft layout)."""


class ETDRK1(AbstractETDRK):
    """Exponential Euler (ETD1), order 1: `v+ = e^{hL} v + h phi1(hL) N(v)` (Cox & Matthews 2002, eq. 4)."""

    stages: ClassVar[int] = 1

    def etd_coefficients(self, z):
        h = self.dt
        (phi1,) = contour_mean(lambda w: ((jnp.exp(w) - 1) / w,), z, self.contour_points)
        return jnp.exp(z), h * phi1

    def step(self, coeffs, nonlinear, v, t):
        e, p1 = coeffs
        return e * v + p1 * nonlinear(t, v)


class ETDRK2(AbstractETDRK):
    """ETD2RK, order 2 (Cox & Matthews 2002, eq. 22): a predictor by ETD1, then a correction with `phi2`."""

    stages: ClassVar[int] = 2

    def etd_coefficients(self, z):
        h = self.dt

        def phis(w):
            ew = jnp.exp(w)
            return (ew - 1) / w, (ew - 1 - w) / w**2

        phi1, phi2 = contour_mean(phis, z, self.contour_points)
        return jnp.exp(z), h * phi1, h * phi2

    def step(self, coeffs, nonlinear, v, t):
        e, p1, p2 = coeffs
        nv = nonlinear(t, v)
        a = e * v + p1 * nv
        return a + p2 * (nonlinear(t + self.dt, a) - nv)


class ETDRK4(AbstractETDRK):
    """ETDRK4, order 4 (Cox & Matthews 2002, eqs. 26–29), coefficients as in Kassam & Trefethen 2005.

    Four nonlinear evaluations per step; the linear part is exact, so a model
    with `nonlinear=None` is integrated exactly (to round-off) for any `dt`.
    """

    stages: ClassVar[int] = 4

    def etd_coefficients(self, z):
        h = self.dt

        def fns(w):
            ew, w3 = jnp.exp(w), w**3
            return (
                (jnp.exp(w / 2) - 1) / w,
                (-4 - w + ew * (4 - 3 * w + w**2)) / w3,
                (2 + w + ew * (w - 2)) / w3,
                (-4 - 3 * w - w**2 + ew * (4 - w)) / w3,
            )

        q, f1, f2, f3 = contour_mean(fns, z, self.contour_points)
        return jnp.exp(z), jnp.exp(z / 2), h * q, h * f1, h * f2, h * f3

    def step(self, coeffs, nonlinear, v, t):
        e, e2, q, f1, f2, f3 = coeffs
        h = self.dt
        nv = nonlinear(t, v)
        a = e2 * v + q * nv
        na = nonlinear(t + h / 2, a)
        b = e2 * v + q * na
        nb = nonlinear(t + h / 2, b)
        c = e2 * a + q * (2 * nb - nv)
        nc = nonlinear(t + h, c)
        return e * v + f1 * nv + 2 * f2 * (na + nb) + f3 * nc
