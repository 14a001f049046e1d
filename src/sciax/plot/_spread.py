"""`trajectory_spread`: median, quantile bands and a few members of an ensemble over time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from ._common import coord_label, coord_values, label, pyplot, require_dim


def trajectory_spread(
    data: xr.Dataset | xr.DataArray,
    variables: str | Sequence[str] | None = None,
    *,
    member_dim: str = "member",
    time_dim: str = "time",
    quantiles: Sequence[float] = (0.05, 0.25, 0.75, 0.95),
    n_traces: int = 20,
    ax=None,
):
    """Plot the spread of an ensemble of trajectories: median, shaded quantile bands, a few members.

    **Arguments:**

    - `data`: an `xarray.Dataset` (e.g. `Solution.to_xarray()` of a `jax.vmap`-ped
      simulation) or `DataArray`; each plotted variable has exactly the dims
      `(member_dim, time_dim)` in any order.
    - `variables`: a name or list of names of data variables; default every data
      variable with exactly those dims.
    - `quantiles`: an even number of increasing levels in (0, 1), paired from the
      outside in: `(0.05, 0.25, 0.75, 0.95)` shades the 5–95 % and 25–75 % bands.
    - `n_traces`: how many individual members to draw as thin lines (evenly spread
      over the member index; fewer if the ensemble is smaller).
    - `ax`: `None` (a new figure with one panel per variable), one `Axes` (all
      variables on it, one colour each) or a sequence of one `Axes` per variable.

    Axis labels come from the CF attributes `long_name` and `units` that
    `Solution.to_xarray` writes. **Returns** the `Axes` (one variable or one `ax`
    given) or a NumPy array of `Axes` (one per variable).
    """
    fn = "trajectory_spread"
    dataset = _as_dataset(data, fn)
    names = _variables(dataset, variables, member_dim, time_dim, fn)
    qs = _quantiles(quantiles, fn)
    if isinstance(n_traces, bool) or not isinstance(n_traces, (int, np.integer)) or n_traces < 0:
        raise ValueError(f"{fn}: n_traces must be an integer >= 0, got {n_traces!r}")

    plt = pyplot()
    if ax is None:
        _, axes = plt.subplots(1, len(names), figsize=(4.8 * len(names), 3.6), squeeze=False, constrained_layout=True)
        axes = axes[0]
        single = len(names) == 1
    elif hasattr(ax, "plot"):
        axes, single = [ax] * len(names), True
    else:
        axes = list(np.ravel(np.asarray(ax, dtype=object)))
        if len(axes) != len(names):
            raise ValueError(
                f"{fn}: ax has {len(axes)} Axes but {len(names)} variables are plotted {names}; "
                "pass one Axes per variable, or a single Axes for all"
            )
        single = False

    shared = len(set(map(id, axes))) == 1 and len(names) > 1
    for i, name in enumerate(names):
        da = dataset[name].transpose(member_dim, time_dim)
        _draw(axes[i], da, coord_values(da, time_dim), qs, int(n_traces), f"C{i}", name, shared)
        axes[i].set_xlabel(coord_label(da, time_dim))
        if not shared:
            axes[i].set_ylabel(label(da, name))
            axes[i].set_title(f"{name} ({da.sizes[member_dim]:,} members)")
    if shared:
        units = {dataset[n].attrs.get("units") for n in names}
        axes[0].set_ylabel(units.pop() if len(units) == 1 and None not in units else "value")
        axes[0].legend(loc="best", fontsize=8)
    return axes[0] if single else np.asarray(axes, dtype=object)


def _draw(ax, da: xr.DataArray, t: np.ndarray, qs: np.ndarray, n_traces: int, colour: str, name: str, shared: bool):
    values = np.asarray(da.values, dtype=float)
    n_members = values.shape[0]
    # nanquantile: a failed member (NaN) must not blank the bands of the others.
    bands = np.nanquantile(values, qs, axis=0)
    median = np.nanmedian(values, axis=0)
    k = len(qs) // 2
    for j in range(k):
        lo, hi = bands[j], bands[-1 - j]
        # Inner bands darker; the alpha adds up where bands overlap.
        ax.fill_between(
            t,
            lo,
            hi,
            color=colour,
            alpha=0.15 + 0.15 * j,
            linewidth=0,
            label=None if shared else f"{100 * qs[j]:g}–{100 * qs[-1 - j]:g} %",
        )
    for m in np.unique(np.linspace(0, n_members - 1, min(n_traces, n_members)).round().astype(int)):
        ax.plot(t, values[m], color=colour, linewidth=0.5, alpha=0.5)
    ax.plot(t, median, color=colour, linewidth=2.0, label=name if shared else "median")
    if not shared:
        ax.legend(loc="best", fontsize=8)


def _as_dataset(data, fn: str) -> xr.Dataset:
    if isinstance(data, xr.DataArray):
        return data.to_dataset(name=data.name if data.name is not None else "value")
    if isinstance(data, xr.Dataset):
        return data
    raise TypeError(
        f"{fn}: data must be an xarray.Dataset or DataArray (e.g. from Solution.to_xarray() of a "
        f"vmapped simulation), got {type(data).__name__}"
    )


def _variables(ds: xr.Dataset, variables, member_dim: str, time_dim: str, fn: str) -> list[str]:
    if variables is None:
        for dim, arg in ((member_dim, "member_dim"), (time_dim, "time_dim")):
            if dim not in ds.dims:
                raise ValueError(
                    f"{fn}: the data has no dim {dim!r} (given as {arg}={dim!r}); its dims are "
                    f"{tuple(ds.dims)}. Pass {arg}= naming one of them"
                )
        names = [n for n, v in ds.data_vars.items() if set(v.dims) == {member_dim, time_dim}]
        if not names:
            raise ValueError(
                f"{fn}: no data variable has exactly the dims ({member_dim!r}, {time_dim!r}); "
                "select the others away first (e.g. data.isel(x=0))"
            )
        return names
    names = [variables] if isinstance(variables, str) else list(variables)
    if not names:
        raise ValueError(f"{fn}: variables is empty; give a name, a list of names, or None for all")
    for n in names:
        if n not in ds.data_vars:
            raise ValueError(
                f"{fn}: variables names {n!r}, which is not a data variable; the data has {list(ds.data_vars)}"
            )
        require_dim(ds[n], member_dim, fn, "member_dim")
        require_dim(ds[n], time_dim, fn, "time_dim")
        if ds[n].ndim != 2:
            extra = [d for d in ds[n].dims if d not in (member_dim, time_dim)]
            raise ValueError(
                f"{fn}: variable {n!r} has extra dims {extra}; select them away first, e.g. data.isel({extra[0]}=0)"
            )
    return names


def _quantiles(quantiles, fn: str) -> np.ndarray:
    qs = np.asarray(quantiles, dtype=float).ravel()
    ok = qs.size % 2 == 0 and np.all((qs > 0) & (qs < 1)) and np.all(np.diff(qs) > 0)
    if not ok:
        raise ValueError(
            f"{fn}: quantiles must be an even number of increasing levels in (0, 1), paired from "
            f"the outside in (e.g. (0.05, 0.25, 0.75, 0.95)); got {tuple(quantiles)!r}"
        )
    return qs
