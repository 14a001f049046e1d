"""Elastic wave fields on a block of a sharded grid: the points past a block's sides, from its
neighbours across inner sides and zero past the grid's edges (`ElasticWave`'s boundary rule)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...grid import AbstractHalo, BoundaryHalo, fold, take


def pad_zero(halo: AbstractHalo, shape: tuple[int, ...], u, axis: int, widths: tuple[int, int], periodic: bool):
    """`u` (a field on the block of `shape` that `halo` fills) extended by `widths = (low, high)` points
    along `axis`: zeros past the grid's edges (wrapped when `periodic`) and, on a block of a sharded grid,
    the neighbouring blocks' points across its inner sides."""
    low, high = widths
    if isinstance(halo, BoundaryHalo):
        pad = [(0, 0)] * u.ndim
        pad[axis] = (low, high)
        return jnp.pad(u, pad, mode="wrap" if periodic else "constant")
    width, n = max(low, high), u.shape[axis]
    padded = take(halo.pad(u, width, axes=(axis,)), axis, width - low, width + n + high)
    if periodic:
        return padded
    # The halo's ghosts past the grid's edges follow its boundary conditions; the elastic fields vanish there.
    offsets, whole = halo.placement(shape)
    position = offsets[axis] - low + jnp.arange(n + low + high)
    inside = ((position >= 0) & (position < whole[axis])).reshape([-1 if b == axis else 1 for b in range(u.ndim)])
    return jnp.where(inside, padded, 0)


def exchange_ghosts(halo: AbstractHalo, shape: tuple[int, int], u):
    """The padded field `u`, `(nx + 2r, c, nz + 2r)` on the block of `shape = (nx, nz)` (`r` ghost points
    around the components' grid), with the ghosts across the block's inner sides from the neighbouring
    blocks of a sharded grid (zero past the grid's edges); `u` as it is on a whole grid, whose ghosts stay
    zero. The corners, which no staggered difference reads, as they are."""
    r = (u.shape[0] - shape[0]) // 2
    offsets, whole = halo.placement(shape)
    pieces = []
    for axis, at in ((0, 0), (1, 2)):  # the grid's axis, and where it sits in the padded layout
        n = shape[axis]
        if isinstance(offsets[axis], int) and whole[axis] == n:  # not split: the ghosts stay zero
            continue
        # The rows next to the block's two edges side by side (components and the other axis flattened,
        # so that the halo pads them as a grid field): the halo brings the neighbours' rows past them.
        edges = fold(u[r:-r, :, r:-r], at, r)
        flat = edges.reshape((2 * r, -1) if axis == 0 else (-1, 2 * r))
        ghosts = halo.pad(flat, r, axes=(axis,))
        low = jnp.where(offsets[axis] == 0, 0, take(ghosts, axis, 0, r)).reshape(take(edges, at, 0, r).shape)
        high = jnp.where(offsets[axis] + n == whole[axis], 0, take(ghosts, axis, 3 * r, 4 * r))
        corner = (0, 0, r) if axis == 0 else (r, 0, 0)
        far = (n + r, 0, r) if axis == 0 else (r, 0, n + r)
        pieces += [(low, corner), (high.reshape(low.shape), far)]
    if not pieces:  # a whole grid: no barrier, which would keep XLA from fusing across it
        return u
    pieces = jax.lax.optimization_barrier(pieces)  # read before the writes below: no copy of `u`
    for ghost, start in pieces:
        u = jax.lax.dynamic_update_slice(u, ghost.astype(u.dtype), start)
    return u
