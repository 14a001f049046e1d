"""Grid transfers for cell-centred multigrid: coarsening, prolongation, restriction.

Points of a `Grid` are cell centres whose boundary faces lie half a spacing
beyond the edge points (see `sciax.pde.Dirichlet`). Coarsening merges pairs of
cells along every axis, so coarse faces coincide with fine faces. Prolongation
is (bi/tri)linear interpolation between coarse centres (weights 3/4, 1/4), with
the coarse values beyond the edges taken from the homogeneous boundary
conditions; restriction is its transpose divided by `2**ndim`, so a V-cycle with
symmetric smoothing is a symmetric preconditioner (as CG needs).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..grid import BoundaryHalo, Grid, Sides


def can_coarsen(grid: Grid) -> bool:
    """Every axis has an even number of points, at least 4 (the coarse grid keeps >= 2)."""
    return all(n % 2 == 0 and n >= 4 for n in grid.shape)


def coarse_grid(grid: Grid) -> Grid:
    """Half the points per axis, same box and walls: each coarse point is the centre of a merged pair."""
    shape = tuple(n // 2 for n in grid.shape)
    points = getattr(grid, "points", "start")
    if points != "start":  # cell centres of the same box: the origin (lower wall) stays
        return Grid(shape, grid.lengths, grid.origin, points=points)
    # Points at cell starts: the first coarse point sits half a fine spacing after the first fine one.
    return Grid(shape, grid.lengths, tuple(o + h / 2 for o, h in zip(grid.origin, grid.spacing)))


def restrict_field(u):
    """Cell average over `2**ndim` blocks (for coefficients such as a diffusivity)."""
    shape = []
    for n in u.shape:
        shape += [n // 2, 2]
    return jnp.mean(u.reshape(shape), axis=tuple(range(1, 2 * u.ndim, 2)))


def prolong(e, coarse: Grid, sides: Sides):
    """Linear interpolation of the coarse field `e` (shape `coarse.shape`) to the fine grid."""
    halo = BoundaryHalo(coarse, sides)
    for axis in range(e.ndim):
        n = e.shape[axis]
        ep = halo.pad(e, 1, axes=(axis,))
        centre = jax.lax.slice_in_dim(ep, 1, n + 1, axis=axis)
        left = jax.lax.slice_in_dim(ep, 0, n, axis=axis)
        right = jax.lax.slice_in_dim(ep, 2, n + 2, axis=axis)
        even, odd = 0.75 * centre + 0.25 * left, 0.75 * centre + 0.25 * right
        both = jnp.stack([even, odd], axis=axis + 1)
        e = both.reshape(e.shape[:axis] + (2 * n,) + e.shape[axis + 1 :])
    return e


def restrict(r, coarse: Grid, sides: Sides):
    """`prolong` transposed, divided by `2**ndim`: the fine residual `r` to the coarse grid."""
    zero = jax.ShapeDtypeStruct(coarse.shape, r.dtype)
    (out,) = jax.linear_transpose(lambda e: prolong(e, coarse, sides), zero)(r)
    return out / np.float64(2**coarse.ndim).astype(r.dtype)
