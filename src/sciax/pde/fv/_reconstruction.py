"""`AbstractReconstruction` (cell averages to face values) and `PiecewiseConstant`, the first-order one."""

from __future__ import annotations

import abc

import equinox as eqx
from jax import lax
from jaxtyping import Array, Float


class AbstractReconstruction(eqx.Module):
    """From cell averages to the two values at each cell's faces, along one axis (the last by
    default).

    A reconstruction reads `radius` cells on each side of a cell. Given `v` of length `m`
    along `axis` it returns `(right, left)`, each of length `m - 2 radius` along it: the value
    of cell `i` at its right face `i + 1/2` (the left state of the Riemann problem there) and
    at its left face `i - 1/2`, for the cells `radius .. m - radius - 1`. The finite-volume
    models pad the cell averages by `ghost_cells = radius + 1` so that every face of the grid
    gets both states. Applied component by component (each field of a system separately).

    Subclass it (with `radius` and `edges`) to plug another reconstruction in, a learned one
    included; `edges` must be differentiable for `jax.grad` through the solver. Slicing along
    `axis` in place (`shifted`) rather than moving it last spares the multi-dimensional models a
    transpose of every field.
    """

    @property
    @abc.abstractmethod
    def radius(self) -> int:
        """How many cells past a cell the reconstruction reads on each side."""

    @abc.abstractmethod
    def edges(self, v: Float[Array, "..."], axis: int = -1) -> tuple[Float[Array, "..."], Float[Array, "..."]]:
        """`(right, left)` face values along `axis` of the cells whose stencil lies inside `v` (see the class)."""

    @property
    def ghost_cells(self) -> int:
        """Ghost cells needed on each side of the grid: `radius + 1`."""
        return self.radius + 1


class PiecewiseConstant(AbstractReconstruction):
    """Godunov's first-order reconstruction: both face values are the cell average."""

    @property
    def radius(self) -> int:
        return 0

    def edges(self, v, axis=-1):
        return v, v


def shifted(v: Array, axis: int, count: int) -> list[Array]:
    """The `count` windows `v[k : m - count + 1 + k]` along `axis`, `k = 0 .. count - 1` (the
    stencil's points of every cell, as arrays of the same shape)."""
    axis = axis % v.ndim
    m = v.shape[axis]
    return [lax.slice_in_dim(v, k, m - count + 1 + k, axis=axis) for k in range(count)]
