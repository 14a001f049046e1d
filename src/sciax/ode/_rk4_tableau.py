"""The classical fourth-order Runge–Kutta method as a diffrax solver (diffrax has none)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from diffrax import AbstractERK, ButcherTableau, LocalLinearInterpolation

# Kutta (1901); Hairer, Nørsett & Wanner, Solving ODEs I, Table II.1.2 ("the" RK method).
_RK4_TABLEAU = ButcherTableau(
    c=np.array([0.5, 0.5, 1.0]),
    b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
    b_error=np.zeros(4),  # no embedded pair: constant steps only
    a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
)


def _linear_interpolation(*, t0, t1, y0, y1, k):
    del k
    return LocalLinearInterpolation(t0=t0, t1=t1, y0=y0, y1=y1)


class ClassicalRK4(AbstractERK):
    """Classical RK4 for diffrax: 4 stages, order 4, no error estimate.

    Dense output between steps is linear; put output times on the step grid
    for fourth-order accurate output.
    """

    tableau: ClassVar[ButcherTableau] = _RK4_TABLEAU
    # staticmethod, so the class attribute is not bound as a method (a functools.partial
    # here warns on Python 3.13: partial becomes a method descriptor in later versions).
    interpolation_cls: ClassVar[Callable[..., LocalLinearInterpolation]] = staticmethod(_linear_interpolation)

    def order(self, terms):
        return 4
