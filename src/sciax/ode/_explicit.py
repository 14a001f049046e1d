"""Explicit Runge–Kutta methods (non-stiff problems), thin modules over diffrax."""

from __future__ import annotations

from typing import ClassVar

import diffrax
import equinox as eqx

from ._diffrax_method import AbstractDiffraxMethod
from ._rk4_tableau import ClassicalRK4
from ._unrolled_rk import UNROLL_MAX_STATE, UnrolledDopri5, UnrolledTsit5, state_size


def _check_unroll(method: str, unroll) -> None:
    if unroll is not None and not isinstance(unroll, bool):
        raise TypeError(f"{method}: unroll must be True, False or None (automatic), got {unroll!r}")


def _unrolls(unroll: bool | None, y0) -> bool:
    return state_size(y0) <= UNROLL_MAX_STATE if unroll is None else unroll


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

    **Arguments:** `unroll`: run the seven stages of a step unrolled (one fused
    program per step) rather than in diffrax's stage loop (`False`, default).
    Unrolled runs faster for small systems, markedly so under `jax.vmap` and
    `jax.jacfwd`, but traces the right-hand side seven times, so a single solve
    compiles longer (docs/benchmarks.md, "ODEs"). `None`: unrolled when the
    state has at most 1024 scalars. Same tableau and interpolation either way:
    results agree to round-off.
    """

    unroll: bool | None = eqx.field(default=False, static=True)
    adaptive_capable: ClassVar[bool] = True
    rhs_evals_per_step: ClassVar[int] = 6
    fsal: ClassVar[bool] = True

    def __check_init__(self):
        _check_unroll("Tsit5", self.unroll)

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Tsit5()

    def solver_for(self, y0, rtol, atol, adaptive):
        return UnrolledTsit5() if _unrolls(self.unroll, y0) else diffrax.Tsit5()


class Dopri5(AbstractDiffraxMethod):
    """Dormand–Prince 5(4) (Dormand & Prince 1980), as in MATLAB's ode45 and scipy's RK45.

    **Arguments:** `unroll`: as for `Tsit5` (default `False`: diffrax's stage loop).
    """

    unroll: bool | None = eqx.field(default=False, static=True)
    adaptive_capable: ClassVar[bool] = True
    rhs_evals_per_step: ClassVar[int] = 6
    fsal: ClassVar[bool] = True

    def __check_init__(self):
        _check_unroll("Dopri5", self.unroll)

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Dopri5()

    def solver_for(self, y0, rtol, atol, adaptive):
        return UnrolledDopri5() if _unrolls(self.unroll, y0) else diffrax.Dopri5()


class Dopri8(AbstractDiffraxMethod):
    """Dormand–Prince 8(7) (Prince & Dormand 1981): for tight tolerances on smooth problems."""

    adaptive_capable: ClassVar[bool] = True
    rhs_evals_per_step: ClassVar[int] = 13
    fsal: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Dopri8()
