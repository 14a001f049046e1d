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
from jaxtyping import Array, Float, PyTree, Real

from .._method import AbstractMethod
from .._solution import Solution
from . import _fourier
from ._semilinear import SemilinearPDE

_NONFINITE = (
    "sciax.simulate: the PDE state became NaN or inf during exponential time differencing. "
    "The solution blew up: reduce dt, check the model and params (a linear symbol with a large "
    "positive real part overflows exp(dt * L)), or set dealias=True for an under-resolved "
    "quadratic nonlinearity."
)


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


class AbstractETDRK(AbstractMethod):
    """An exponential time differencing Runge–Kutta method for a `sciax.pde.SemilinearPDE`.

    Advances the Fourier coefficients `v = rfft(u)` of `u_t = L u + N(u)` with
    the linear part integrated exactly (`exp(dt L)`), so the step is limited by
    the nonlinear term only, not by the stiffness of `L`.

    **Fields:**

    - `dt`: the fixed step (time units), a Python number > 0 (static). Every
      interval of the output times `ts` must be a whole number of steps.
    - `contour_points`: points on the Kassam–Trefethen contour (default 32).

    Subclasses give `coefficients(z, dt)` for `z = dt * L` and one `step`.
    """

    dt: float = eqx.field(static=True)
    contour_points: int = eqx.field(static=True)
    stages: ClassVar[int]

    def __init__(self, dt: float, *, contour_points: int = 32):
        name = type(self).__name__
        if isinstance(dt, jax.core.Tracer) or not isinstance(dt, (int, float, np.integer, np.floating)) or isinstance(dt, bool):
            raise TypeError(f"{name}: dt must be a Python number (the step is static configuration), got {dt!r}")
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"{name}: dt must be > 0 and finite, got dt={dt!r}")
        if isinstance(contour_points, bool) or not isinstance(contour_points, (int, np.integer)) or contour_points < 8:
            raise ValueError(f"{name}: contour_points must be an integer >= 8, got {contour_points!r}")
        self.dt = float(dt)
        self.contour_points = int(contour_points)

    @abc.abstractmethod
    def coefficients(self, z: Array) -> tuple[Array, ...]:
        """The scheme's coefficient arrays for `z = dt * L` (rfft layout)."""

    @abc.abstractmethod
    def step(self, coeffs: tuple[Array, ...], nonlinear: Callable, v: Array, t: Array) -> Array:
        """One step of size `dt` from Fourier coefficients `v` at time `t`; `nonlinear(t, v)` is `rfft(N)`."""

    def solve(
        self,
        model: SemilinearPDE,
        y0: Float[Array, "..."],
        ts: Real[Array, " T"],
        params: PyTree,
        *,
        throw: bool = True,
    ) -> Solution:
        """Integrate `model` with fixed steps `dt` and return the state at every time in `ts`.

        `y0` is real of shape `model.grid.shape`; `ts` must be concrete (not traced)
        with every interval a whole multiple of `dt`. Returns a `Solution` with
        `ys` of shape `(len(ts), *grid.shape)`, `stats` (`num_steps`,
        `num_accepted_steps`, `num_rejected_steps` = 0, `num_rhs_evals` = nonlinear
        evaluations) and `success` (state finite). With `throw=True` (default) a
        non-finite state raises at run time (`equinox.error_if`).

        Differentiable (reverse and forward mode) with respect to `y0` and `params`,
        which may enter both the linear symbol and the nonlinear term.
        """
        name = type(self).__name__
        if not isinstance(model, SemilinearPDE):
            raise TypeError(
                f"simulate: {name} integrates a sciax.pde.SemilinearPDE (u_t = L u + N(u)), got "
                f"{type(model).__name__}; use a sciax.ode method such as sciax.ode.Tsit5() for other models"
            )
        y0 = jnp.asarray(y0)
        model.check_state(y0, "y0")
        counts = _step_counts(ts, self.dt, name)
        return _etd_solve(self, model, y0, jnp.asarray(ts), params, counts, bool(throw))


def _step_counts(ts, dt: float, name: str) -> tuple[int, ...]:
    if isinstance(ts, jax.core.Tracer):
        raise ValueError(
            f"simulate: {name} needs concrete output times ts (the number of steps per interval is fixed "
            "at trace time); close over ts instead of passing it as a traced argument of jax.jit/vmap"
        )
    ts = np.asarray(ts)
    eps = np.finfo(ts.dtype).eps if np.issubdtype(ts.dtype, np.floating) else 0.0
    diffs = np.diff(ts.astype(np.float64))
    counts = np.rint(diffs / dt)
    tol = np.maximum(1e-9 * np.abs(diffs), 8 * eps * np.maximum(np.abs(ts[:-1]), np.abs(ts[1:])))
    bad = (counts < 1) | (np.abs(counts * dt - diffs) > tol)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(
            f"simulate: {name}(dt={dt}) takes fixed steps, so every interval of ts must be a whole "
            f"number of steps; ts[{i + 1}] - ts[{i}] = {float(diffs[i])!r} is {float(diffs[i] / dt)!r} steps. "
            "Choose dt dividing every interval (or ts on a multiple of dt)"
        )
    return tuple(int(c) for c in counts)


@eqx.filter_jit
def _etd_solve(method: AbstractETDRK, model: SemilinearPDE, y0, ts, params, counts: tuple[int, ...], throw: bool):
    grid, dt = model.grid, method.dt
    coeffs = method.coefficients(dt * model.linear_symbol(params))

    def nonlinear(t, v):
        return model.nonlinear_hat(t, v, params)

    n_max, uniform = max(counts), len(set(counts)) == 1
    t_dtype = jnp.result_type(ts.dtype, float)

    def interval(v, inputs):
        t0, n = inputs

        def one_step(v, j):
            new = method.step(coeffs, nonlinear, v, t0 + j.astype(t_dtype) * dt)
            return (new if uniform else jnp.where(j < n, new, v)), None

        v, _ = jax.lax.scan(one_step, v, jnp.arange(n_max))
        return v, _fourier.to_physical(v, grid).astype(y0.dtype)

    v0 = _fourier.to_spectral(y0, grid)
    _, ys = jax.lax.scan(interval, v0, (ts[:-1].astype(t_dtype), jnp.asarray(counts)))
    ys = jnp.concatenate([y0[None], ys])
    success = jnp.all(jnp.isfinite(ys))
    if throw:
        ys = eqx.error_if(ys, ~success, _NONFINITE)
    num_steps = jnp.asarray(sum(counts))
    stats = {
        "num_steps": num_steps,
        "num_accepted_steps": num_steps,
        "num_rejected_steps": jnp.zeros_like(num_steps),
        "num_rhs_evals": num_steps * method.stages,
    }
    return Solution(ts=ts, ys=ys, stats=stats, success=success)


class ETDRK1(AbstractETDRK):
    """Exponential Euler (ETD1), order 1: `v+ = e^{hL} v + h phi1(hL) N(v)` (Cox & Matthews 2002, eq. 4)."""

    stages: ClassVar[int] = 1

    def coefficients(self, z):
        h = self.dt
        (phi1,) = contour_mean(lambda w: ((jnp.exp(w) - 1) / w,), z, self.contour_points)
        return jnp.exp(z), h * phi1

    def step(self, coeffs, nonlinear, v, t):
        e, p1 = coeffs
        return e * v + p1 * nonlinear(t, v)


class ETDRK2(AbstractETDRK):
    """ETD2RK, order 2 (Cox & Matthews 2002, eq. 22): a predictor by ETD1, then a correction with `phi2`."""

    stages: ClassVar[int] = 2

    def coefficients(self, z):
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

    def coefficients(self, z):
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
