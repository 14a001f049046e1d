"""Partition specs of states, params and results, and concrete output times as a static value."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec


def field_spec(shape, grid_shape, names) -> PartitionSpec:
    """Blocks over `names` for an array whose trailing axes are `grid_shape`; replicated otherwise."""
    shape, nd = tuple(shape), len(grid_shape)
    if len(shape) >= nd and shape[len(shape) - nd :] == tuple(grid_shape):
        return PartitionSpec(*([None] * (len(shape) - nd)), *names)
    return PartitionSpec()


def tree_specs(tree, grid_shape, names):
    """`field_spec` for every array leaf of `tree` (other leaves: `None`)."""
    return jax.tree_util.tree_map(lambda x: field_spec(np.shape(x), grid_shape, names), tree)


def split_params(params):
    """`(arrays, static)`: shard_map carries the arrays (numbers become arrays, so that run-time checks
    inside the blocks have a value to attach to); callables and other static leaves are closed over."""
    numbers = (bool, int, float, complex, np.generic)
    params = jax.tree_util.tree_map(lambda x: jnp.asarray(x) if isinstance(x, numbers) else x, params)
    return eqx.partition(params, eqx.is_array)


class StaticTimes(eqx.Module):
    """Concrete output times carried as static (hashable) configuration through `equinox.filter_jit`,
    since fixed-step methods fix their step counts from them at trace time."""

    values: tuple[float, ...] = eqx.field(static=True)
    dtype: str = eqx.field(static=True)

    def __init__(self, ts):
        ts = np.asarray(ts)
        self.values, self.dtype = tuple(ts.tolist()), str(ts.dtype)

    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=self.dtype)


def concrete_times(ts, what: str) -> StaticTimes:
    """`StaticTimes` from concrete `ts`; `ValueError` for traced `ts`."""
    if isinstance(ts, jax.core.Tracer):
        raise ValueError(
            f"{what}: needs concrete output times ts (the decomposed run is set up at trace time); "
            "close over ts rather than passing it through jax.jit/vmap"
        )
    return StaticTimes(ts)
