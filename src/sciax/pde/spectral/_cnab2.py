"""`CNAB2`: the Crank–Nicolson / Adams–Bashforth IMEX method for a `SemilinearPDE`.

The stiff linear part is treated implicitly by the trapezoidal rule (a division
per Fourier mode, since `L` is diagonal) and the nonlinear part explicitly by the
two-step Adams–Bashforth formula (Ascher, Ruuth & Wetton, "Implicit-explicit
methods for time-dependent PDEs", SIAM J. Numer. Anal. 32 (1995) 797–823, the
CNAB scheme). The first step takes `N^{-1} = N^0` (a Crank–Nicolson / forward
Euler step), whose local error O(dt^2) keeps the global order 2.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx

from ..._step_counts import check_dt
from ._stepper import AbstractSpectralStepper


class CNAB2(AbstractSpectralStepper):
    """Crank–Nicolson / Adams–Bashforth 2, order 2, one nonlinear evaluation per step.

    `(1 - dt/2 L) v^{n+1} = (1 + dt/2 L) v^n + dt (3/2 N^n - 1/2 N^{n-1})`.
    A-stable in `L` (no exponential, so no overflow check), but the trapezoidal
    factor tends to -1 for stiff modes, which ring rather than decay: prefer
    `ETDRK4` for very stiff symbols (e.g. Kuramoto–Sivashinsky at large `dt`).

    **Fields:** `dt`, the fixed step (time units), a Python number > 0.
    """

    dt: float = eqx.field(static=True)
    stages: ClassVar[int] = 1
    startup_evals: ClassVar[int] = 1
    exponential: ClassVar[bool] = False

    def __init__(self, dt: float):
        self.dt = check_dt("CNAB2", dt)

    def coefficients(self, symbol):
        half = self.dt / 2 * symbol
        return (1 + half) / (1 - half), self.dt / (1 - half)

    def init(self, coeffs, nonlinear, v, t):
        return v, nonlinear(t, v)

    def step(self, coeffs, nonlinear, carry, t):
        amplify, gain = coeffs
        v, n_prev = carry
        n = nonlinear(t, v)
        return amplify * v + gain * (1.5 * n - 0.5 * n_prev), n

    def state(self, carry):
        return carry[0]
