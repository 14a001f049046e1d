"""Ensemble statistics of a batch of solutions (e.g. a Monte Carlo run over keys)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from .._solution import Solution


def ensemble_stats(
    ensemble: Solution | xr.Dataset,
    quantiles: Sequence[float] = (0.05, 0.5, 0.95),
    *,
    member_dim: str = "member",
) -> xr.Dataset:
    """Mean, standard deviation and quantiles over the members of an ensemble.

    **Arguments:**

    - `ensemble`: a `Solution` batched by `jax.vmap` (e.g.
      `jax.vmap(lambda k: sciax.simulate(sde, y0, ts, p, key=k, dt0=...))(keys)`),
      or the `Dataset` of its `to_xarray()`.
    - `quantiles`: probabilities in [0, 1].
    - `member_dim`: the ensemble dimension.

    **Returns:** an `xarray.Dataset` with, for every data variable `v`, `v_mean` and
    `v_std` (dims `(time, *state dims)`) and `v_quantile` (dims
    `(quantile, time, *state dims)`), plus attribute `num_members`. Members that
    failed (`success=False`, rows of `inf`) are left out, and counted in attribute
    `num_failed_members`. Not differentiable (NumPy/xarray); use `jnp.mean` over
    `sol.ys` inside `jax.grad`.
    """
    ds = ensemble.to_xarray(member_dim=member_dim) if isinstance(ensemble, Solution) else ensemble
    if not isinstance(ds, xr.Dataset):
        raise TypeError(
            "ensemble_stats: ensemble must be a batched sciax.Solution or an xarray.Dataset, "
            f"got {type(ensemble).__name__}"
        )
    if member_dim not in ds.dims:
        raise ValueError(
            f"ensemble_stats: no {member_dim!r} dimension; pass a Solution batched with jax.vmap "
            f"(its dims are {tuple(ds.dims)})"
        )
    qs = np.asarray(quantiles, dtype=float)
    if qs.ndim != 1 or not np.all((qs >= 0) & (qs <= 1)):
        raise ValueError(f"ensemble_stats: quantiles must be a sequence of numbers in [0, 1], got {quantiles!r}")
    finite = None
    for v in ds.data_vars.values():
        ok = np.isfinite(v).all([d for d in v.dims if d != member_dim])
        finite = ok if finite is None else finite & ok
    good = ds.isel({member_dim: np.asarray(finite)})
    out = {}
    for name, v in good.data_vars.items():
        out[f"{name}_mean"] = v.mean(member_dim).assign_attrs(v.attrs)
        out[f"{name}_std"] = v.std(member_dim).assign_attrs(v.attrs)
        out[f"{name}_quantile"] = v.quantile(qs, dim=member_dim).assign_attrs(v.attrs)
    n_failed = int(ds.sizes[member_dim] - good.sizes[member_dim])
    return xr.Dataset(out, attrs={"num_members": int(good.sizes[member_dim]), "num_failed_members": n_failed})


__all__ = ["ensemble_stats"]
