"""`sobol_bars`: bar chart of first-order and total Sobol indices with their confidence intervals."""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._common import pyplot


def sobol_bars(indices: xr.Dataset, ax=None, *, title: str | None = None):
    """Side-by-side bars of `S1` and `ST` per parameter, error bars from the bootstrap interval.

    `indices` is what `sciax.prob.sobol_indices` returns, reduced to one output
    (for time-resolved indices select a time first, e.g. `indices.isel(time=-1)`).
    Returns the matplotlib `Axes`. Also available as `sciax.prob.plot_sobol`.
    """
    fn = "sobol_bars"
    if not isinstance(indices, xr.Dataset) or "S1" not in indices or "ST" not in indices:
        raise TypeError(f"{fn}: indices must be the Dataset returned by sciax.prob.sobol_indices")
    extra = [d for d in indices["S1"].dims if d != "parameter"]
    if extra:
        raise ValueError(
            f"{fn}: the indices have output dims {extra}; select one output first, e.g. indices.isel({extra[0]}=-1)"
        )
    if ax is None:
        _, ax = pyplot().subplots(figsize=(1.2 + 0.8 * indices.sizes["parameter"], 3.5))
    names = [str(p) for p in indices["parameter"].values]
    x = np.arange(len(names))
    width = 0.38
    for offset, key, label in ((-width / 2, "S1", "first order"), (width / 2, "ST", "total")):
        value = indices[key].values
        err = np.stack([value - indices[f"{key}_lower"].values, indices[f"{key}_upper"].values - value])
        ax.bar(x + offset, value, width, yerr=np.clip(err, 0, None), capsize=3, label=label)
    ax.set_xticks(x, names)
    ax.set_ylabel("Sobol index")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.legend()
    if title:
        ax.set_title(title)
    return ax
