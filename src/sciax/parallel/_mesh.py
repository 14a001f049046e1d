"""Device meshes for domain decomposition, and how a grid's axes map onto a mesh's axes."""

from __future__ import annotations

import math
from collections.abc import Sequence

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

from ..grid import Grid

_DEFAULT_NAMES = ("x", "y", "z")


def _factor_pair(n: int) -> tuple[int, int]:
    """`(a, b)` with `a * b = n`, `a >= b`, as close to square as possible."""
    b = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return n // b, b


def make_mesh(
    decomposition: str | Sequence[int] = "slab",
    *,
    names: Sequence[str] | None = None,
    devices: Sequence[jax.Device] | None = None,
) -> Mesh:
    """A `jax.sharding.Mesh` over the devices of every process, for `sciax.parallel.shard`.

    **Arguments:**

    - `decomposition`: `"slab"` (a 1-D mesh over all devices, named `("x",)`: the
      grid is cut along x), `"pencil"` (a 2-D mesh as close to square as possible,
      named `("x", "y")`: cut along x and y), or an explicit mesh shape such as
      `(4, 2)` (named `("x", "y", "z")[:len(shape)]` unless `names` is given).
    - `names`: mesh axis names; a mesh axis named like a grid dimension (`"x"`,
      `"y"`, `"z"`) shards that grid axis unless `shard(..., axes=...)` says otherwise.
    - `devices`: the devices to use (default `jax.devices()`, i.e. all devices of all processes).

    The axes are `AxisType.Auto`, so plain `jax.jit` code keeps working around the
    sharded parts. The same call builds an 8-device mesh on 8 forced CPU devices,
    8 GPUs, or 64 hosts after `sciax.parallel.initialize()`.
    """
    devices = list(jax.devices() if devices is None else devices)
    n = len(devices)
    if isinstance(decomposition, str):
        if decomposition == "slab":
            shape: tuple[int, ...] = (n,)
        elif decomposition == "pencil":
            shape = _factor_pair(n)
        else:
            raise ValueError(
                f'make_mesh: decomposition must be "slab", "pencil" or a mesh shape, got {decomposition!r}'
            )
    else:
        shape = tuple(decomposition)
        if not shape or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 1 for s in shape):
            raise ValueError(
                f"make_mesh: a mesh shape must be a non-empty tuple of integers >= 1, got {decomposition!r}"
            )
        if math.prod(shape) != n:
            raise ValueError(f"make_mesh: mesh shape {shape} needs {math.prod(shape)} devices, but {n} are given")
    names = _DEFAULT_NAMES[: len(shape)] if names is None else tuple(names)
    if len(names) != len(shape) or len(set(names)) != len(names) or not all(isinstance(s, str) for s in names):
        raise ValueError(
            f"make_mesh: names must be {len(shape)} distinct strings for the mesh shape {shape}, got {names!r}"
        )
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape), devices=devices)


def resolve_axes(grid: Grid, mesh: Mesh, axes, what: str) -> tuple[str | None, ...]:
    """The mesh axis sharding each grid axis (or `None`), checked against `grid` and `mesh`.

    `axes`: `None` (mesh axes named like grid dimensions shard those), or one
    entry per grid axis, each a mesh axis name or `None`.
    """
    if not isinstance(mesh, Mesh):
        raise TypeError(
            f"{what}: mesh must be a jax.sharding.Mesh (e.g. sciax.parallel.make_mesh()), got {type(mesh).__name__}"
        )
    if axes is None:
        unknown = [a for a in mesh.axis_names if a not in grid.dims]
        if unknown:
            raise ValueError(
                f"{what}: mesh axes {unknown} are not grid dimensions {grid.dims}; pass axes=(one mesh axis "
                f"name or None per grid axis), e.g. axes={tuple(mesh.axis_names[:1]) + (None,) * (grid.ndim - 1)}"
            )
        axes = tuple(d if d in mesh.axis_names else None for d in grid.dims)
    else:
        if isinstance(axes, str) or not isinstance(axes, Sequence) or len(axes) != grid.ndim:
            raise ValueError(
                f"{what}: axes must give one mesh axis name (or None) per grid axis ({grid.ndim}), got {axes!r}"
            )
        axes = tuple(axes)
        for a in axes:
            if a is not None and a not in mesh.axis_names:
                raise ValueError(f"{what}: mesh axis {a!r} does not exist; the mesh has axes {tuple(mesh.axis_names)}")
        used = [a for a in axes if a is not None]
        if len(set(used)) != len(used):
            raise ValueError(f"{what}: each mesh axis may shard at most one grid axis, got axes={axes!r}")
    for i, a in enumerate(axes):
        if a is not None and grid.shape[i] % mesh.shape[a] != 0:
            raise ValueError(
                f"{what}: grid axis {grid.dims[i]} has {grid.shape[i]} points, not divisible by the {mesh.shape[a]} "
                f"devices of mesh axis {a!r}; choose a grid size that is a multiple of {mesh.shape[a]} "
                "(no padding is done)"
            )
    return axes


def shard_sizes(mesh: Mesh, axes: Sequence[str | None]) -> tuple[int, ...]:
    """Number of shards along each grid axis."""
    return tuple(1 if a is None else int(mesh.shape[a]) for a in axes)
