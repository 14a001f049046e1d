"""`split_evaluate`: a stencil operator as interior plus edge strips, with no padded copy of any field.

A stencil evaluated through `AbstractHalo.pad` first builds the field extended by
its ghosts, then reads that array at several offsets. XLA cannot fuse such an array
into its consumer (a `pad`/`concatenate` read at several offsets is never
duplicated into a fusion), so every padded field costs one more write and read of
the whole field per evaluation. `split_evaluate` computes the same values in two
parts instead:

- the **interior** (points at least `reach` from every edge) by `interior(fields)`,
  written with shifted slices of the unpadded fields only (`staggered_valid`), which
  XLA fuses with whatever consumes the result into a single pass over memory;
- the **edge strips** (the `reach` points next to each edge) by `padded(fields, grid)`,
  the ordinary halo-padded operator, run on thin *folded* blocks: along each axis the
  first and the last `2 reach` points of every field, side by side. A folded block's
  edges are the block's edges, so any halo (boundary conditions, or `lax.ppermute`
  from neighbouring devices in `sciax.parallel`) gives it the block's own ghosts; the
  seam in its middle spoils only points that are not kept.

The interior is placed by `lax.pad` and the strips written over its border in place
(`lax.dynamic_update_slice`): every point gets the value the padded operator gives it
(the same arithmetic in the same order, up to XLA's choice of fused multiply-adds). The
stencils still never look at boundary conditions: they are handed a halo, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import PyTree

from ._grid import Grid


def take(x, axis: int, start: int, stop: int):
    """`x[start:stop]` along `axis`; leaves of extent 1 there (profiles along other axes) and scalars as they are."""
    if jnp.ndim(x) == 0 or x.shape[axis] == 1:
        return x
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def fold(x, axis: int, width: int):
    """The first and the last `width` points of `x` along `axis`, side by side (scalars, extent-1 leaves unchanged)."""
    if jnp.ndim(x) == 0 or x.shape[axis] == 1:
        return x
    n = x.shape[axis]
    return jnp.concatenate([take(x, axis, 0, width), take(x, axis, n - width, n)], axis=axis)


def fits(grid: Grid, reach: int) -> bool:
    """Whether `split_evaluate` applies: every axis has room for two folded slabs of `2 reach` points."""
    return reach >= 1 and all(n >= 4 * reach for n in grid.shape)


def inner(x, reach: int):
    """`x` on the points `reach .. n - reach - 1` of every axis (extent-1 axes and scalars as they are)."""
    for axis in range(jnp.ndim(x)):
        x = take(x, axis, reach, x.shape[axis] - reach)
    return x


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1, 3, 4, 6))
def split_evaluate(
    padded: Callable[[PyTree, Grid], PyTree],
    interior: Callable[[PyTree], PyTree],
    fields: PyTree,
    grid: Grid,
    reach: int,
    out: PyTree | None = None,
    overwrite: Callable[[PyTree], PyTree] | None = None,
) -> PyTree:
    """The outputs of `padded(fields, grid)`, assembled from interior and edge strips (see the module docstring).

    **Arguments:**

    - `padded(fields, grid)`: the update with halo padding; returns a pytree of arrays of
      shape `grid.shape`. Called on folded blocks with a `Grid` of the folded shape (same spacing).
    - `interior(fields)`: the same outputs on the points `reach .. n - reach - 1` of every axis,
      computed without padding (see `inner`). Give it the whole update (e.g. the new state, not
      only a spatial operator): its result is placed by one `lax.pad`, which XLA fuses with
      it into a single vectorised pass; the strips are then written in place.
    - `fields`: a pytree of arrays whose every axis has the grid's extent or 1 (scalars allowed).
    - `grid`: the (block's) grid; `reach`: how far the update reads along any axis.
    - `out` (optional): arrays of the outputs' shapes and dtypes whose values are not needed and
      which `fields` do not hold (e.g. a spare buffer of a loop carry; `None` for an output without
      arrays): the results are written over them in place. Without it the interior is placed by
      `lax.pad` into a new buffer: on XLA:CPU that pass is slower (a bounds test per point) and a
      loop carry copies the result, but XLA:CPU may split it over threads, which it never does for
      an in-place write.
    - `overwrite` (optional, instead of `out`): `overwrite(fields)` picks, among `fields`, the arrays
      the outputs are written over, each of which the update reads only at the point it writes (e.g.
      the field two steps back of a leapfrog carry). The strips are then computed first, and an
      `optimization_barrier` keeps every read of `fields` ahead of the in-place writes, so no field
      is copied (measured on jax 0.12; jax 0.10.2's XLA:CPU copied the field regardless).

    Requires `fits(grid, reach)`. `padded` and `interior` must not close over traced values (pass
    them, e.g. the time, in `fields`). Differentiable (forward and reverse mode: derivatives are
    those of `padded` on the whole grid, whose transposes XLA handles better than the many slices
    of the interior); `jit`/`vmap` safe.
    """
    shape, ndim = grid.shape, grid.ndim
    width = 2 * reach
    pieces = []
    for axis in range(ndim):
        folded = jax.tree_util.tree_map(lambda x, axis=axis: fold(x, axis, width), fields)
        folded_shape = shape[:axis] + (2 * width,) + shape[axis + 1 :]
        folded_grid = Grid(folded_shape, tuple(h * n for h, n in zip(grid.spacing, folded_shape)), grid.origin)
        pieces.append(padded(folded, folded_grid))
    if overwrite is not None:
        pieces, fields = lax.optimization_barrier((pieces, fields))
        out = overwrite(fields)
    if out is None:
        out = jax.tree_util.tree_map(
            lambda a: lax.pad(a, jnp.zeros((), a.dtype), [(reach, reach, 0)] * ndim), interior(fields)
        )
    else:
        out = jax.tree_util.tree_map(
            functools.partial(_place_interior, reach), out, interior(fields), is_leaf=lambda x: x is None
        )
    for axis, strips in enumerate(pieces):
        for start, at in ((0, 0), (2 * width - reach, shape[axis] - reach)):
            # Corners come from the folds along earlier axes: later strips cover the interior there.
            corner = [reach if b < axis else 0 for b in range(ndim)]
            corner[axis] = at

            def put(o, a, start=start, corner=tuple(corner), axis=axis):
                a = take(a, axis, start, start + reach)
                for b in range(axis):
                    a = take(a, b, reach, shape[b] - reach)
                return lax.dynamic_update_slice(o, a.astype(o.dtype), corner)

            out = jax.tree_util.tree_map(put, out, strips)
    return out


def _place_interior(reach: int, out, values):
    if out is None:  # an output without arrays (e.g. no memory variables), however its pytree is laid out
        if jax.tree_util.tree_leaves(values):
            raise ValueError("split_evaluate: out is None where the update returns arrays")
        return values
    return lax.dynamic_update_slice(out, values.astype(out.dtype), (reach,) * values.ndim)


@split_evaluate.defjvp
def _split_evaluate_jvp(padded, interior, grid, reach, overwrite, primals, tangents):
    (fields, out), (d_fields, _) = primals, tangents
    _, d_result = jax.jvp(lambda f: padded(f, grid), (fields,), (d_fields,))
    return split_evaluate(padded, interior, fields, grid, reach, out, overwrite), d_result
