"""`local_sensitivity`: derivatives of a simulated trajectory with respect to its parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import jax
import jax.numpy as jnp
import xarray as xr
from jaxtyping import ArrayLike, PyTree

from .._method import AbstractMethod
from .._model import AbstractModel
from .._simulate import simulate
from .._solution import Solution


def local_sensitivity(
    model: AbstractModel,
    y0: PyTree[ArrayLike],
    ts: ArrayLike,
    params: Mapping[str, Any],
    *,
    wrt: Sequence[str] | None = None,
    relative: bool = False,
    mode: Literal["reverse", "forward"] = "reverse",
    method: AbstractMethod | None = None,
    **options: Any,
) -> xr.Dataset:
    """`d y(t) / d p` for every output time, state component and parameter `p` in `wrt`.

    Differentiates straight through `sciax.simulate` (exact derivatives of the
    computed solution, not finite differences).

    **Arguments:**

    - `model`, `y0`, `ts`, `method`, `**options`: as for `sciax.simulate`.
    - `params`: a dict of parameters; those in `wrt` must be scalars.
    - `wrt`: names of the parameters to differentiate by (default: every scalar one).
    - `relative`: return normalised sensitivities `(p / y) dy/dp`, the percentage
      change of `y` per percent change of `p` (NaN where `y = 0`).
    - `mode`: `"reverse"` (`jax.jacrev`; works with every method's default
      options) or `"forward"` (`jax.jacfwd`; cheaper for a few parameters and a long
      output; ODE methods need `adjoint=sciax.ode.ForwardMode()` for it).

    **Returns:** an `xarray.Dataset` laid out like `Solution.to_xarray()` (one
    variable per named state component) with a leading `parameter` dim:
    dims `(parameter, time, *state dims)`.
    """
    if not isinstance(params, Mapping):
        raise TypeError(f"local_sensitivity: params must be a dict of named parameters, got {type(params).__name__}")
    if mode not in ("reverse", "forward"):
        raise ValueError(f"local_sensitivity: mode must be 'reverse' or 'forward', got {mode!r}")
    if wrt is None:
        wrt = [name for name, value in params.items() if jnp.ndim(value) == 0]
    elif isinstance(wrt, str):
        wrt = [wrt]
    for name in wrt:
        if name not in params:
            raise ValueError(f"local_sensitivity: wrt names {name!r}, which is not in params {sorted(params)}")
        if jnp.ndim(params[name]) != 0:
            raise ValueError(
                f"local_sensitivity: params[{name!r}] has shape {jnp.shape(params[name])}; wrt needs scalars"
            )
    if not wrt:
        raise ValueError("local_sensitivity: no scalar parameter to differentiate by; give wrt=")
    dtype = jnp.result_type(float)
    chosen = {name: jnp.asarray(params[name], dtype=dtype) for name in wrt}

    def trajectory(p):
        return simulate(model, y0, ts, {**params, **p}, method=method, **options).ys

    jac_fn = jax.jacrev if mode == "reverse" else jax.jacfwd
    sol = simulate(model, y0, ts, params, method=method, **options)
    jac = jax.jit(jac_fn(trajectory))(chosen)  # ys-shaped pytree whose leaves are {name: d leaf / d name}

    ys_tree = jax.tree_util.tree_structure(sol.ys)
    per_param = []
    for name in wrt:
        leaves = [d[name] for d in ys_tree.flatten_up_to(jac)]
        if relative:
            leaves = [
                jnp.where(y != 0, s * chosen[name] / jnp.where(y != 0, y, 1), jnp.nan)
                for s, y in zip(leaves, jax.tree_util.tree_leaves(sol.ys))
            ]
        per_param.append(leaves)
    stacked = ys_tree.unflatten([jnp.stack(column) for column in zip(*per_param)])
    n = len(wrt)
    # Reuse Solution.to_xarray for names, dims and coordinates, with parameters as the batch axis.
    batch = Solution(
        ts=jnp.broadcast_to(sol.ts, (n,) + sol.ts.shape),
        ys=stacked,
        stats={},
        success=jnp.broadcast_to(sol.success, (n,)),
        labels=sol.labels,
    )
    ds = batch.to_xarray(member_dim="parameter").assign_coords(parameter=list(wrt))
    kind = "relative sensitivity (p/y) dy/dp" if relative else "sensitivity dy/dp"
    for var in ds.data_vars:
        ds[var].attrs = {"long_name": f"{kind} of {var}"}
    ds.attrs = {"method": f"local sensitivity by {mode}-mode automatic differentiation", "relative": int(relative)}
    return ds


__all__ = ["local_sensitivity"]
