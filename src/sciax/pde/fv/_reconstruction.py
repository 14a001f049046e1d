"""`AbstractReconstruction` (cell averages to face values) and `PiecewiseConstant`, the first-order one."""

from __future__ import annotations

import abc

import equinox as eqx
from jaxtyping import Array, Float


class AbstractReconstruction(eqx.Module):
    """From cell averages to the two values at each cell's faces, along the last axis.

    A reconstruction reads `radius` cells on each side of a cell. Given `v` of length `m`
    along the last axis it returns `(right, left)`, each of length `m - 2 radius`: the value
    of cell `i` at its right face `i + 1/2` (the left state of the Riemann problem there) and
    at its left face `i - 1/2`, for the cells `radius .. m - radius - 1`. The finite-volume
    models pad the cell averages by `ghost_cells = radius + 1` so that every face of the grid
    gets both states. Applied component by component (each field of a system separately).

    Subclass it (with `radius` and `edges`) to plug another reconstruction in, a learned one
    included; `edges` must be differentiable for `jax.grad` through the solver.
    """

    @property
    @abc.abstractmethod
    def radius(self) -> int:
        """How many cells past a cell the reconstruction reads on each side."""

    @abc.abstractmethod
    def edges(self, v: Float[Array, "... m"]) -> tuple[Float[Array, "... m-2r"], Float[Array, "... m-2r"]]:
        """`(right, left)` face values of the cells whose stencil lies inside `v` (see the class)."""

    @property
    def ghost_cells(self) -> int:
        """Ghost cells needed on each side of the grid: `radius + 1`."""
        return self.radius + 1


class PiecewiseConstant(AbstractReconstruction):
    """Godunov's first-order reconstruction: both face values are the cell average."""

    @property
    def radius(self) -> int:
        return 0

    def edges(self, v):
        return v, v
