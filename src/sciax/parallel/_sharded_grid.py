"""`ShardedGrid`: a `Grid` whose fields are spread over the devices of a mesh."""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..grid import Grid
from ._mesh import resolve_axes, shard_sizes


class ShardedGrid(Grid):
    """The geometry of a `Grid` (same shape, box and spacing) plus where its fields live.

    Fields on it are global `jax.Array`s cut into blocks: grid axis `i` is split
    over the devices of mesh axis `names[i]` (or whole, where `names[i]` is `None`).
    Every FFT of `sciax.pde.spectral` dispatches on the grid type, so on a
    `ShardedGrid` it is the distributed FFT of `sciax.parallel` (no gathering);
    build one with `sciax.parallel.shard(model, mesh)`.

    **Arguments:** `grid` (a `sciax.pde.Grid`), `mesh` (a `jax.sharding.Mesh`),
    `axes` (one mesh axis name or `None` per grid axis; default: mesh axes named
    like grid dimensions).
    """

    mesh: Mesh = eqx.field(static=True)
    names: tuple[str | None, ...] = eqx.field(static=True)

    def __init__(self, grid: Grid, mesh: Mesh, axes: Sequence[str | None] | None = None):
        if not isinstance(grid, Grid):
            raise TypeError(f"ShardedGrid: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
        super().__init__(grid.shape, grid.lengths, grid.origin, points=grid.points)
        self.names = resolve_axes(grid, mesh, axes, "ShardedGrid")
        self.mesh = mesh

    @property
    def sizes(self) -> tuple[int, ...]:
        """Number of blocks along each grid axis."""
        return shard_sizes(self.mesh, self.names)

    @property
    def block_shape(self) -> tuple[int, ...]:
        """Shape of the block each device holds."""
        return tuple(n // s for n, s in zip(self.shape, self.sizes))

    def spec(self, batch_ndim: int = 0) -> PartitionSpec:
        """`PartitionSpec` of a field with `batch_ndim` leading (unsharded) axes."""
        return PartitionSpec(*([None] * batch_ndim), *self.names)

    def sharding(self, batch_ndim: int = 0) -> NamedSharding:
        """`NamedSharding` of a field with `batch_ndim` leading axes: use with `jax.device_put`."""
        return NamedSharding(self.mesh, self.spec(batch_ndim))
