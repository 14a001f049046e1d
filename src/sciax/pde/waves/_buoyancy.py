"""The density across a staggered grid's faces: `1 / rho` at the half points `i + 1/2` by one of two rules
(`density_average`), stored or computed where read (`FaceBuoyancy`)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array

from ...grid import take

_DENSITY_AVERAGES = ("arithmetic", "harmonic")


def check_density_average(name: str, density_average: str) -> str:
    """`density_average`, or a `ValueError` naming the model `name` and the choices."""
    if density_average not in _DENSITY_AVERAGES:
        raise ValueError(f"{name}: density_average must be one of {_DENSITY_AVERAGES}, got {density_average!r}")
    return density_average


class FaceBuoyancy(NamedTuple):
    """`1 / rho` at the half points `i + 1/2` of one axis (`at(axis)`): `values` itself (grid-shaped), or with
    `points` (`1 / rho` at the points, `density_average="harmonic"`) the mean of `points` at `i` and `i + 1`,
    `values` then holding the ghost `1 / rho_n` beyond the last point (extent 1 along the axis). The harmonic
    rule's face values are computed where they are read: no array of them is stored (nor faulted in) per solve,
    and on folded blocks (`split_evaluate`) from the folded points and the grid's own ghosts."""

    values: Array
    points: Array | None = None

    def at(self, axis: int) -> Array:
        if self.points is None:
            return self.values
        return mean(self.points, next_point(self.points, self.values, axis))


def mean(a, b):
    """`(a + b) / 2`, one expression for every route, so that each rounds it alike."""
    return 0.5 * (a + b)


def next_point(x, ghost, axis: int):
    """`x` at index `i + 1` along `axis`, `ghost` (extent 1 there) past the last point."""
    n = x.shape[axis]
    if n == 1:
        return jnp.broadcast_to(ghost, x.shape)
    # `lax.pad` and a select fuse into their consumer; a `concatenate` here is a pass of its own.
    config = [(0, 1 if b == axis else 0, 0) for b in range(x.ndim)]
    shifted = jax.lax.pad(take(x, axis, 1, n), jnp.zeros((), x.dtype), config)
    return jnp.where(jax.lax.broadcasted_iota(jnp.int32, x.shape, axis) == n - 1, ghost, shifted)


def points_with_ghosts(faces: tuple[FaceBuoyancy, ...]) -> Array | None:
    """For the harmonic rule (`FaceBuoyancy` with `points`), `1 / rho` at the points with each axis's ghost
    `1 / rho_n` one past its last point (extent `n + 1` along every axis, the corner values unused), from which
    every face value is the mean of two shifted slices; `None` for stored face values."""
    if faces[0].points is None:
        return None
    x = faces[0].points
    padded = jax.lax.pad(x, jnp.zeros((), x.dtype), [(0, 1, 0)] * x.ndim)
    for axis, face in enumerate(faces):
        padded = jax.lax.dynamic_update_slice(
            padded, face.values, tuple(x.shape[axis] if b == axis else 0 for b in range(x.ndim))
        )
    return padded
