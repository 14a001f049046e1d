"""Explicit Runge–Kutta methods (non-stiff problems), thin modules over diffrax."""

from __future__ import annotations

from typing import ClassVar

import diffrax

from ._diffrax_method import AbstractDiffraxMethod
from ._rk4_tableau import ClassicalRK4


class Euler(AbstractDiffraxMethod):
    """Forward Euler: order 1, 1 evaluation per step, fixed step (`dt0=` required)."""

    adaptive_capable: ClassVar[bool] = False
    rhs_evals_per_step: ClassVar[int] = 1

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Euler()


class Heun(AbstractDiffraxMethod):
    """Heun's method (explicit trapezoidal rule): order 2, 2 evaluations per step.

    Fixed step by default (`dt0=`); its embedded Euler estimate allows
    `adaptive=True`.
    """

    adaptive_capable: ClassVar[bool] = True
    adaptive_by_default: ClassVar[bool] = False
    rhs_evals_per_step: ClassVar[int] = 2

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Heun()


class RK4(AbstractDiffraxMethod):
    """The classical fourth-order Runge–Kutta method: 4 evaluations per step, fixed step (`dt0=`)."""

    adaptive_capable: ClassVar[bool] = False
    rhs_evals_per_step: ClassVar[int] = 4

    def diffrax_solver(self, rtol, atol, adaptive):
        return ClassicalRK4()


class Tsit5(AbstractDiffraxMethod):
    """Tsitouras' 5(4) pair (Tsitouras 2011): the default for non-stiff problems.

    Adaptive, FSAL (6 evaluations per step), fifth-order dense output.
    """

    adaptive_capable: ClassVar[bool] = True
    rhs_evals_per_step: ClassVar[int] = 6
    fsal: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Tsit5()


class Dopri5(AbstractDiffraxMethod):
    """Dormand–Prince 5(4) (Dormand & Prince 1980), as in MATLAB's ode45 and scipy's RK45."""

    adaptive_capable: ClassVar[bool] = True
    rhs_evals_per_step: ClassVar[int] = 6
    fsal: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Dopri5()


class Dopri8(AbstractDiffraxMethod):
    """Dormand–Prince 8(7) (Prince & Dormand 1981): for tight tolerances on smooth problems."""

    adaptive_capable: ClassVar[bool] = True
    rhs_evals_per_step: ClassVar[int] = 13
    fsal: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Dopri8()
