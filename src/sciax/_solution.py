"""`Solution`: what every `sciax.simulate` call returns."""

from __future__ import annotations

import dataclasses
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from jaxtyping import Array, ArrayLike, Bool, PyTree, Real

from ._labels import Labels


class Solution(eqx.Module):
    """The result of `sciax.simulate`.

    A pytree, so it passes through `jax.jit`, `jax.vmap` and `jax.grad`. After
    `jax.vmap` every array gains a leading member axis.

    **Fields:**

    - `ts`: output times, shape `(T,)` (`(M, T)` for a vmapped batch).
    - `ys`: the state at `ts`; every leaf has time as its leading axis
      (after the member axis of a vmapped batch). After a terminating event
      or a failed solve (with `throw=False`), rows past the time reached are `inf`.
    - `stats`: dict of arrays: the integers `num_steps`, `num_accepted_steps`,
      `num_rejected_steps`, `max_steps` (the step budget) and, where the method's
      cost per step is fixed, `num_rhs_evals`; for ODE methods also `t_reached`:
      `ts[-1]` on success; with `throw=False` after a failure, the last output time
      reached (where the solve stopped, for Rosenbrock methods); after an event, the
      event time.
    - `success`: boolean array; `False` where the solve failed (max_steps reached,
      step size collapsed, non-finite state). Use it under `jax.vmap`, where only
      some members may fail.
    - `result`: the underlying code (a `diffrax.RESULTS` item for ODE methods), or `None`.
    - `event_time`: time at which a terminating event fired, `nan` if it did not;
      `None` when no event was given.
    - `interpolation`: dense output (`dense=True`), used by `evaluate`.
    - `labels`: static names/units/coordinates for `to_xarray`.
    """

    ts: Real[Array, "... T"]
    ys: PyTree[Array]
    stats: dict[str, Array]
    success: Bool[Array, "..."]
    result: Any = None
    event_time: Array | None = None
    interpolation: Any = None
    labels: Labels = eqx.field(static=True, default=Labels())

    def evaluate(self, t: ArrayLike, *, throw: bool = True) -> PyTree[Array]:
        """Dense output: the state at time `t` (scalar), interpolated by the method.

        Needs `dense=True` in `sciax.simulate`. Differentiable in `t` and in
        whatever the solution was differentiated with respect to.

        `t` must lie in the solved span `[ts[0], t_reached]` (`t_reached` is
        `stats["t_reached"]`: `ts[-1]`, or where an event or a failure stopped the
        solve). Outside it `evaluate` raises `ValueError` naming `t` and the span
        (`equinox`'s runtime error when traced); with `throw=False` it returns NaN
        there instead.
        """
        if self.interpolation is None:
            raise ValueError(
                "Solution.evaluate needs dense output: call sciax.simulate(..., dense=True) "
                "with a method that supports it (all sciax.ode methods do)."
            )
        t0, t1 = self.ts[..., 0], self.stats.get("t_reached", self.ts[..., -1])
        outside = (t < t0) | (t > t1)
        if not any(isinstance(x, jax.core.Tracer) for x in (t, t0, t1)):
            if throw and np.any(np.asarray(outside)):
                raise ValueError(
                    f"Solution.evaluate: t = {float(np.asarray(t)):.9g} is outside the solved span "
                    f"[{float(np.asarray(t0)):.9g}, {float(np.asarray(t1)):.9g}]; dense output exists only "
                    "there (pass throw=False to get NaN outside it)"
                )
        elif throw:
            t = eqx.error_if(
                jnp.asarray(t), outside, "Solution.evaluate: t is outside the solved span [ts[0], t_reached]"
            )
        y = self.interpolation.evaluate(t)
        return jax.tree_util.tree_map(lambda leaf: jnp.where(outside, jnp.nan, leaf), y)

    def with_labels(self, labels: Labels) -> Solution:
        """A copy carrying `labels` (used by `simulate` to attach the model's labels)."""
        return dataclasses.replace(self, labels=labels)

    def to_xarray(self, *, member_dim: str = "member", time_dim: str = "time") -> xr.Dataset:
        """Convert to an `xarray.Dataset` with named dims, coordinates and attributes.

        Dims are `(member, time, *state dims)`, `member` only for a vmapped batch
        (any number of leading batch axes is flattened into it). Named components of
        an array state (`names=` on the model) become separate data variables; a
        dict state gives one variable per key. Attributes carry `units` and
        `long_name` where the model defines them.
        """
        ts = np.asarray(self.ts)
        n_batch = ts.ndim - 1
        batch_shape = ts.shape[:-1]
        if n_batch:
            flat_ts = ts.reshape(-1, ts.shape[-1])
            if not np.array_equal(flat_ts, np.broadcast_to(flat_ts[:1], flat_ts.shape), equal_nan=True):
                raise ValueError(
                    "to_xarray: the members of this batch have different output times; "
                    "give every member the same ts to build one Dataset."
                )
            ts = flat_ts[0]
        lead = (member_dim,) if n_batch else ()
        n_members = int(np.prod(batch_shape)) if n_batch else None

        def flatten(leaf):
            leaf = np.asarray(leaf)
            return leaf.reshape((n_members,) + leaf.shape[n_batch:]) if n_batch else leaf

        data_vars = {}
        for name, leaf in _named_leaves(self.ys, self.labels):
            leaf = flatten(leaf)
            state_shape = leaf.shape[len(lead) + 1 :]
            dims = lead + (time_dim,) + _state_dims(state_shape, self.labels)
            data_vars[name] = xr.Variable(dims, leaf, attrs=self.labels.attrs(name))

        coords = {time_dim: xr.Variable((time_dim,), ts, attrs=_time_attrs(self.labels))}
        if n_batch:
            coords[member_dim] = np.arange(n_members)
        for dim, values in self.labels.coords:
            coords[dim] = np.asarray(values)
        attrs = {"success": int(np.all(np.asarray(self.success)))}
        if n_batch:
            attrs["num_failed_members"] = int(np.sum(~np.asarray(self.success)))
        return xr.Dataset(data_vars, coords=coords, attrs=attrs)


def _time_attrs(labels: Labels) -> dict[str, str]:
    attrs = {"long_name": "time"}
    if labels.time_units is not None:
        attrs["units"] = labels.time_units
    return attrs


def _state_dims(state_shape: tuple[int, ...], labels: Labels) -> tuple[str, ...]:
    if labels.dims is not None and len(labels.dims) == len(state_shape):
        return labels.dims
    if len(state_shape) == 1:
        return ("state",)
    return tuple(f"dim_{i}" for i in range(len(state_shape)))


def _named_leaves(ys, labels: Labels):
    """Yield `(variable name, array)` pairs for the state pytree `ys`."""
    if isinstance(ys, dict):
        for key, leaf in ys.items():
            if not isinstance(leaf, (jax.Array, np.ndarray)):
                raise TypeError(f"to_xarray: state entry {key!r} is not an array; nested states are not supported")
            yield str(key), leaf
        return
    if isinstance(ys, (jax.Array, np.ndarray)):
        if labels.names is None:
            yield labels.variable, ys
            return
        ys = np.asarray(ys)
        if ys.shape[-1] != len(labels.names):
            raise ValueError(
                f"to_xarray: the model names {len(labels.names)} state components "
                f"{labels.names}, but the state's last axis has length {ys.shape[-1]}"
            )
        for i, name in enumerate(labels.names):
            yield name, ys[..., i]
        return
    leaves, _ = jax.tree_util.tree_flatten_with_path(ys)
    names = labels.names
    if names is not None and len(names) != len(leaves):
        raise ValueError(f"to_xarray: the model names {len(names)} state leaves but the state has {len(leaves)}")
    for i, (path, leaf) in enumerate(leaves):
        yield (names[i] if names else "y" + jax.tree_util.keystr(path)), leaf
