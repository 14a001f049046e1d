"""`WideHaloStep`: a fixed-step method on a sharded grid that exchanges halos once every `k` steps.

As in JAX's TPU wave-equation example: each block is extended by a halo `k * reach`
points wide taken from its neighbours (one `lax.ppermute` per side and grid axis),
then `k` steps run on the extended block with no communication. Each step spoils
`reach` more points at the extended block's edges, and after `k` steps exactly the
block itself is still valid; it is cut out and the next exchange follows. `reach`
is how far one step reads (the method's `step_reach(model)`): `leapfrog_reach` for `Leapfrog`,
four right-hand sides of `rhs_reach` each for `RK4`.

Physical boundaries: an outer block is extended on its inner side only (by `2 k reach`
points), so its physical boundary stays at the edge of its array, where the boundary
conditions apply exactly as on the unsharded grid. All blocks keep one shape (block +
`2 k reach`), as `jax.shard_map` needs. Layers and points at global positions (sponge and
CPML profiles, sources) are placed by `WideBlockHalo.placement`, the extended block's
position in the whole grid.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import lax

from ..grid import AbstractHalo, BoundaryHalo, Grid, Periodic, Sides, edges_only, take
from ..pde import AbstractFixedStep


class _Axis(eqx.Module):
    """One sharded grid axis: its mesh axis `name`, `size` blocks of `n` points, halo `width`, periodic or not."""

    axis: int = eqx.field(static=True)
    name: str = eqx.field(static=True)
    size: int = eqx.field(static=True)
    n: int = eqx.field(static=True)
    width: int = eqx.field(static=True)
    periodic: bool = eqx.field(static=True)

    def extend(self, u):
        """The block `u` (extent `n` along `axis`) extended to `n + 2 width` with its neighbours' points."""
        w, n, ax, s = self.width, self.n, self.axis, self.size
        up = [(i, i + 1) for i in range(s - 1)] + ([(s - 1, 0)] if self.periodic else [])
        down = [(i + 1, i) for i in range(s - 1)] + ([(0, s - 1)] if self.periodic else [])
        reach = w if self.periodic else 2 * w  # outer blocks take 2 w from their one neighbour
        from_low = lax.ppermute(take(u, ax, n - reach, n), self.name, up)
        from_high = lax.ppermute(take(u, ax, 0, reach), self.name, down)
        middle = jnp.concatenate([take(from_low, ax, reach - w, reach), u, take(from_high, ax, 0, w)], axis=ax)
        if self.periodic:
            return middle
        index = lax.axis_index(self.name)
        first = jnp.concatenate([u, from_high], axis=ax)  # the physical boundary stays at the array's edge
        last = jnp.concatenate([from_low, u], axis=ax)
        return jnp.where(index == 0, first, jnp.where(index == s - 1, last, middle))

    def _own(self):
        """Where the block's own points start in its extended array (traced)."""
        index = lax.axis_index(self.name)
        return jnp.where(index == 0, 0, jnp.where(index == self.size - 1, 2 * self.width, self.width))

    def crop(self, u):
        """The block's own `n` points out of an extended array."""
        if self.periodic:
            return take(u, self.axis, self.width, self.width + self.n)
        return lax.dynamic_slice_in_dim(u, self._own(), self.n, axis=self.axis)

    def start(self):
        """The global index of the extended block's first point (traced; wrapped on a periodic axis)."""
        begin = lax.axis_index(self.name) * self.n
        if self.periodic:
            return (begin - self.width) % (self.n * self.size)
        return begin - self._own()


class WideHaloStep(AbstractFixedStep):
    """`inner` (a fixed-step method) run on one block of a sharded grid with wide halos, exchanged every
    `every` steps; one step of this method is `every` steps of `inner`. Built by `sciax.parallel.shard`
    (`halo_every=`), used inside its `jax.shard_map`.

    **Fields:** `inner` (`Leapfrog`, or `RK4`: a method stating its `step_reach`); `every`; `extended` (the block
    model on the extended block, with a `WideBlockHalo`: no communication inside a step); `axes`
    (the sharded grid axes).
    """

    inner: AbstractFixedStep
    extended: eqx.Module
    every: int = eqx.field(static=True)
    axes: tuple[_Axis, ...] = eqx.field(static=True)
    dt: float = eqx.field(static=True)
    checkpoint: int | None = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 1  # per step; ShardedModel rescales the stats by `every` and `inner`'s

    def __init__(self, inner: AbstractFixedStep, extended, every: int, axes):
        self.inner, self.extended, self.every, self.axes = inner, extended, int(every), tuple(axes)
        self.dt = inner.dt * self.every
        self.checkpoint = None if inner.checkpoint is None else max(1, inner.checkpoint // self.every)

    def _extend(self, tree, block_shape):
        def one(x):
            # Fields on the block (floating, each axis the block's extent or 1); indices etc. as they are.
            if (
                not hasattr(x, "ndim")
                or x.ndim != len(block_shape)
                or not jnp.issubdtype(x.dtype, jnp.floating)
                or any(m not in (n, 1) for m, n in zip(x.shape, block_shape))
            ):
                return x
            for ax in self.axes:
                if x.shape[ax.axis] == block_shape[ax.axis]:
                    x = ax.extend(x)
            return x

        return jax.tree_util.tree_map(one, tree)

    def _crop(self, tree, block_shape):
        extended_shape = self.extended.grid.shape

        def one(x):
            if not hasattr(x, "ndim") or x.ndim != len(block_shape):
                return x
            for ax in self.axes:
                if x.shape[ax.axis] == extended_shape[ax.axis] != block_shape[ax.axis]:
                    x = ax.crop(x)
            return x

        return jax.tree_util.tree_map(one, tree)

    def stable_dt(self, model, params):
        limit = self.inner.stable_dt(model, params)
        return None if limit is None else limit * self.every  # dt * every <= limit * every

    def unstable_message(self, model, limit):
        # In the user's terms: the method they chose and its dt (this step is `every` of them).
        return self.inner.unstable_message(model, None if limit is None else limit / self.every)

    def prepare(self, model, params):
        block = self.inner.prepare(model, params)
        return block, self._extend(block, model.grid.shape)

    def init(self, model, y0, params):
        return self.inner.init(model, y0, params[0])

    def step(self, model, carry, t, params):
        shape = model.grid.shape
        carry = self._extend(carry, shape)
        for j in range(self.every):
            carry = self.inner.step(self.extended, carry, t + j * self.inner.dt, params[1])
        return self._crop(carry, shape)

    def observe(self, model, carry, params, save):
        return self.inner.observe(model, carry, params[0], save)


class WideBlockHalo(AbstractHalo):
    """The halo of an extended block inside `WideHaloStep`: boundary conditions at its array's edges
    (the inner ones only spoil points that are cut away), and the placement of the extended block in
    the whole grid, so that absorbing layers (`Sponge`) are sliced from the whole grid's profile.

    **Fields (static):** `grid` (the extended block); `sides` (the global boundary conditions);
    `axes` (the sharded grid axes, as `wide_axes` gives them).
    """

    grid: Grid = eqx.field(static=True)
    sides: Sides = eqx.field(static=True)
    axes: tuple[_Axis, ...] = eqx.field(static=True)

    @property
    def foldable(self) -> bool:
        return edges_only(self.sides)

    @property
    def pads_from_edges(self) -> bool:
        return True

    def pad(self, u, width, *, t=0.0, flux=False, axes=None):
        return BoundaryHalo(self.grid, self.sides).pad(u, width, t=t, flux=flux, axes=axes)

    def placement(self, shape):
        offsets, whole = [0] * len(shape), list(shape)
        for ax in self.axes:
            offsets[ax.axis], whole[ax.axis] = ax.start(), ax.n * ax.size
        return tuple(offsets), tuple(whole)

    def all_max(self, x):
        names = tuple(ax.name for ax in self.axes)
        return lax.pmax(x, names) if names else x

    def all_sum(self, x):
        # The extended blocks overlap, so a sum over them counts the halo points twice.
        raise NotImplementedError("sum over blocks (receivers) with halo_every > 1")


def wide_axes(block: Grid, sides: Sides, names, sizes, width: int, every: int, reach: int) -> tuple[_Axis, ...]:
    """The sharded axes of a block with a halo `width = every * reach`; `ValueError` if wider than a shard."""
    out = []
    for axis, (name, size) in enumerate(zip(names, sizes)):
        if name is None or size == 1:
            continue
        periodic = isinstance(sides[axis][0], Periodic)
        need = width if periodic else 2 * width
        if need > block.shape[axis]:
            raise ValueError(
                f"shard: halo_every={every} needs a halo of {every} x {reach} = {width} points ({need} taken by the "
                f"outer blocks), wider than a shard: grid axis {axis} has {block.shape[axis]} points per device along "
                f"mesh axis {name!r}; use a smaller halo_every, fewer devices along it or a finer grid"
            )
        out.append(_Axis(axis, name, size, block.shape[axis], width, periodic))
    return tuple(out)


def extended_grid(block: Grid, axes) -> Grid:
    """The grid of a block extended by `2 width` points along each of `axes` (same spacing)."""
    shape = list(block.shape)
    for ax in axes:
        shape[ax.axis] += 2 * ax.width
    return Grid(tuple(shape), tuple(h * n for h, n in zip(block.spacing, shape)), block.origin, points=block.points)
