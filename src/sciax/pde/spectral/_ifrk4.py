"""`IFRK4`: the integrating-factor fourth-order Runge–Kutta method for a `SemilinearPDE`.

With `w = exp(-t L) v` the equation `v_t = L v + N(v)` becomes `w_t = exp(-t L) N(exp(t L) w)`,
which has no stiff linear part; classical RK4 on `w`, written back in terms of `v`,
gives the step below (Kassam & Trefethen 2005, section 2; Trefethen, "Spectral
Methods in MATLAB", SIAM 2000, program 27). Simpler than ETDRK4 but less accurate
when `|dt L|` is large, because the integrating factor multiplies the error of the
nonlinear stages by the stiff exponential.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ..._step_counts import check_dt
from ._stepper import AbstractSpectralStepper


class IFRK4(AbstractSpectralStepper):
    """Integrating-factor RK4, order 4, four nonlinear evaluations per step.

    `v+ = E v + dt/6 (E k1 + 2 E2 (k2 + k3) + k4)` with `E = exp(dt L)`, `E2 = exp(dt L / 2)`,
    `k1 = N(v)`, `k2 = N(E2 (v + dt/2 k1))`, `k3 = N(E2 v + dt/2 k2)`, `k4 = N(E v + dt E2 k3)`.
    Exact for a linear model; refuses (`ValueError`) a `dt` whose `exp(dt L)` overflows.

    **Fields:** `dt`, the fixed step (time units), a Python number > 0.
    """

    dt: float = eqx.field(static=True)
    stages: ClassVar[int] = 4

    def __init__(self, dt: float):
        self.dt = check_dt("IFRK4", dt)

    def coefficients(self, symbol):
        z = self.dt * symbol
        return jnp.exp(z), jnp.exp(z / 2)

    def step(self, coeffs, nonlinear, v, t):
        e, e2 = coeffs
        h = self.dt
        k1 = nonlinear(t, v)
        k2 = nonlinear(t + h / 2, e2 * (v + h / 2 * k1))
        k3 = nonlinear(t + h / 2, e2 * v + h / 2 * k2)
        k4 = nonlinear(t + h, e * v + h * e2 * k3)
        return e * v + h / 6 * (e * k1 + 2 * e2 * (k2 + k3) + k4)
