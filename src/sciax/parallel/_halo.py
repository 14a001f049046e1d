"""`ShardedHalo`: the halo of one block of a sharded grid, filled by `lax.ppermute` from neighbours."""

from __future__ import annotations

import math
from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, ArrayLike, Float

from ..grid import AbstractHalo, BoundaryHalo, Grid, Periodic, Sides, edges_only, take


class ShardedHalo(AbstractHalo):
    """Fills the halo of a block inside `jax.shard_map`: interior sides from the neighbouring
    blocks (`lax.ppermute`), outer sides from the boundary conditions.

    Every finite-difference stencil of `sciax.pde.fd` takes its halo from an
    `AbstractHalo`, so with this one the same stencil code runs on a block, at any
    order (the halo width is the stencil's radius). The result equals the
    unsharded stencil to round-off (the same arithmetic on the same values):
    ghost values at the outer edges are those of a `BoundaryHalo` on the block,
    selected on the first/last block by `lax.axis_index`.

    Build it with `sciax.parallel.shard`, which also makes the block `grid`. Only
    usable inside `jax.shard_map` over the mesh axes in `names`.

    **Fields (static):** `grid` (the block: local shape, global spacing); `sides`
    (the global boundary conditions, `(low, high)` per axis); `names` (the mesh
    axis sharding each grid axis, or `None`); `sizes` (shards per axis).
    """

    grid: Grid = eqx.field(static=True)
    sides: Sides = eqx.field(static=True)
    names: tuple[str | None, ...] = eqx.field(static=True)
    sizes: tuple[int, ...] = eqx.field(static=True)

    def __init__(self, grid: Grid, sides: Sides, names: Sequence[str | None], sizes: Sequence[int]):
        if len(sides) != grid.ndim or len(names) != grid.ndim or len(sizes) != grid.ndim:
            raise ValueError(f"ShardedHalo: sides, names and sizes need one entry per grid axis ({grid.ndim})")
        self.grid, self.sides, self.names, self.sizes = grid, tuple(sides), tuple(names), tuple(int(s) for s in sizes)

    @property
    def foldable(self) -> bool:
        # Neighbours exchange the `width` points next to their edges; outer sides as a BoundaryHalo.
        return edges_only(self.sides)

    @property
    def pads_from_edges(self) -> bool:
        # Neighbours send the `width` points next to their edges along the padded axis, whatever else `u` holds.
        return True

    def zero_ghosts(self, axis: int) -> bool:
        # Along an axis not split over the mesh, the ghosts are the boundary conditions' alone.
        unsplit = self.names[axis] is None or self.sizes[axis] == 1
        return unsplit and all(b.zero_ghosts for b in self.sides[axis])

    @property
    def blocks(self) -> int:
        return math.prod(self.sizes)

    def _used(self) -> tuple[str, ...]:
        return tuple(name for name, size in zip(self.names, self.sizes) if name is not None and size > 1)

    def placement(self, shape):
        offsets = tuple(
            lax.axis_index(name) * n if name is not None and size > 1 else 0
            for name, size, n in zip(self.names, self.sizes, shape)
        )
        return offsets, tuple(n * size for n, size in zip(shape, self.sizes))

    def all_max(self, x):
        return lax.pmax(x, self._used()) if self._used() else x

    def all_sum(self, x):
        return lax.psum(x, self._used()) if self._used() else x

    def pad(
        self, u: Float[Array, "..."], width: int, *, t: ArrayLike = 0.0, flux: bool = False, axes=None
    ) -> Float[Array, "..."]:
        if u.ndim != self.grid.ndim:
            raise ValueError(f"halo: field has {u.ndim} axes but the grid has {self.grid.ndim}")
        if width == 0:
            return u
        boundary = BoundaryHalo(self.grid, self.sides)
        for axis in range(u.ndim) if axes is None else axes:
            name, size = self.names[axis], self.sizes[axis]
            if name is None or size == 1:
                u = boundary.pad(u, width, t=t, flux=flux, axes=(axis,))
                continue
            n = u.shape[axis]
            if width > n:
                raise ValueError(
                    f"halo: width {width} is wider than a shard: grid axis {axis} is split over mesh axis {name!r} "
                    f"into {size} shards of {n} points; use fewer shards along it or a lower stencil order"
                )
            low, high = self.sides[axis]
            periodic = isinstance(low, Periodic)  # only then are the first and last blocks neighbours
            to_high = [(i, i + 1) for i in range(size - 1)] + ([(size - 1, 0)] if periodic else [])
            to_low = [(i + 1, i) for i in range(size - 1)] + ([(0, size - 1)] if periodic else [])
            from_low = lax.ppermute(take(u, axis, n - width, n), name, to_high)
            from_high = lax.ppermute(take(u, axis, 0, width), name, to_low)
            if not periodic:
                # Ghosts of the physical boundary, as a BoundaryHalo makes them; kept only on the edge blocks.
                ghosts = boundary.pad(u, width, t=t, flux=flux, axes=(axis,))
                index = lax.axis_index(name)
                from_low = jnp.where(index == 0, take(ghosts, axis, 0, width), from_low)
                from_high = jnp.where(index == size - 1, take(ghosts, axis, n + width, n + 2 * width), from_high)
            u = jnp.concatenate([from_low.astype(u.dtype), u, from_high.astype(u.dtype)], axis=axis)
        return u
