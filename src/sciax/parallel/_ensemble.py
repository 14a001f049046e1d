"""`ensemble`: the member axis of a vmapped ensemble spread over the devices of a mesh."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
from jax.sharding import Mesh, PartitionSpec
from jaxtyping import ArrayLike, PyTree

from .._model import AbstractModel
from .._simulate import simulate
from .._solution import Solution
from ._specs import concrete_times, split_params


def ensemble(
    model: AbstractModel,
    y0: PyTree[ArrayLike],
    ts: ArrayLike,
    params: PyTree = None,
    *,
    mesh: Mesh,
    in_axes: tuple[int | None, int | None] = (0, None),
    axis: str | Sequence[str] | None = None,
    **options: Any,
) -> Solution:
    """`jax.vmap(sciax.simulate)` with the members spread over the devices of `mesh`.

    Equal to `jax.vmap(lambda y, p: sciax.simulate(model, y, ts, p, **options),
    in_axes=in_axes)(y0, params)` (each member is computed by the same code on one
    device), with every output leaf a global `jax.Array` whose leading member axis
    is split over the mesh. Any model and method; differentiable like `simulate`.

    **Arguments:** `model`, `y0`, `ts`, `params` and `**options` (e.g. `method=`)
    as for `sciax.simulate`; `in_axes`: which of `y0`, `params` carry the member
    axis (leading, `0`) and which are shared (`None`); `axis`: the mesh axis or
    axes to spread members over (default: all of them).

    **Raises** `ValueError` if the number of members is not divisible by the
    number of devices along `axis`, or `axis` names a mesh axis that does not exist.
    """
    if not isinstance(mesh, Mesh):
        raise TypeError(
            f"ensemble: mesh must be a jax.sharding.Mesh (e.g. sciax.parallel.make_mesh()), got {type(mesh).__name__}"
        )
    axes = tuple(mesh.axis_names) if axis is None else ((axis,) if isinstance(axis, str) else tuple(axis))
    for a in axes:
        if a not in mesh.axis_names:
            raise ValueError(f"ensemble: mesh axis {a!r} does not exist; the mesh has axes {tuple(mesh.axis_names)}")
    if len(in_axes) != 2 or any(a not in (0, None) for a in in_axes) or in_axes == (None, None):
        raise ValueError(f"ensemble: in_axes must give 0 or None for (y0, params), at least one 0; got {in_axes!r}")
    devices = 1
    for a in axes:
        devices *= mesh.shape[a]
    batched = [x for x, a in zip((y0, params), in_axes) if a == 0]
    sizes = {
        jax.numpy.shape(leaf)[0] if jax.numpy.ndim(leaf) else None
        for x in batched
        for leaf in jax.tree_util.tree_leaves(x)
    }
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"ensemble: every batched leaf needs the same leading member axis, got leading sizes {sizes}")
    (members,) = sizes
    if members % devices:
        raise ValueError(f"ensemble: {members} members are not divisible by the {devices} devices of mesh axes {axes}")
    arrays, static = split_params(params)
    return _run(model, y0, arrays, static, concrete_times(ts, "ensemble"), mesh, axes, tuple(in_axes), options)


@eqx.filter_jit
def _run(model, y0, arrays, static, times, mesh, axes, in_axes, options):
    ts, spread = times.array(), PartitionSpec(axes)

    def members(y0, arrays):
        one = lambda y, p: simulate(model, y, ts, eqx.combine(p, static), **options)  # noqa: E731
        return jax.vmap(one, in_axes=in_axes)(y0, arrays)

    spec = lambda x, a: jax.tree_util.tree_map(lambda _: spread if a == 0 else PartitionSpec(), x)  # noqa: E731
    return jax.shard_map(
        members, mesh=mesh, in_specs=(spec(y0, in_axes[0]), spec(arrays, in_axes[1])), out_specs=spread, check_vma=False
    )(y0, arrays)
