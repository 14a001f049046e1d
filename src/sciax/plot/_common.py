"""Shared checks and labels for the plotting helpers.

matplotlib is imported inside functions only, so `import sciax` never pays for it.
"""

from __future__ import annotations

import numpy as np
import xarray as xr


def pyplot():
    """`matplotlib.pyplot`, imported on first use (keeps `import sciax` cheap)."""
    import matplotlib.pyplot as plt

    return plt


def as_dataarray(data, fn: str, arg: str = "data") -> xr.DataArray:
    """`data` as a DataArray: a DataArray as is, a Dataset only if it holds exactly one data variable."""
    if isinstance(data, xr.DataArray):
        return data
    if isinstance(data, xr.Dataset):
        names = list(data.data_vars)
        if len(names) == 1:
            return data[names[0]]
        raise ValueError(
            f"{fn}: {arg} is a Dataset with {len(names)} variables {names}; pass one of them, e.g. {arg}[{names[0]!r}]"
            if names
            else f"{fn}: {arg} is a Dataset without data variables"
        )
    raise TypeError(
        f"{fn}: {arg} must be an xarray.DataArray or Dataset (e.g. from Solution.to_xarray()), "
        f"got {type(data).__name__}"
    )


def require_dim(da: xr.DataArray, dim: str, fn: str, arg: str) -> None:
    """`ValueError` naming the keyword argument `arg` when `da` lacks the dim `dim` it names."""
    if not isinstance(dim, str) or dim not in da.dims:
        raise ValueError(
            f"{fn}: the data has no dim {dim!r} (given as {arg}={dim!r}); its dims are "
            f"{tuple(da.dims)}. Pass {arg}= naming one of them"
        )


def label(obj: xr.DataArray, fallback: str | None = None) -> str:
    """`"long_name [units]"` from CF attributes, falling back to the name."""
    name = obj.attrs.get("long_name") or fallback or (str(obj.name) if obj.name is not None else "")
    units = obj.attrs.get("units")
    return f"{name} [{units}]" if units else name


def coord_label(da: xr.DataArray, dim: str) -> str:
    """Label of dim `dim` of `da`: from its coordinate's attributes, else the dim name."""
    return label(da[dim], dim) if dim in da.coords else dim


def coord_values(da: xr.DataArray, dim: str) -> np.ndarray:
    """Numeric values along `dim`: the coordinate if it is numeric, else 0, 1, 2, ..."""
    if dim in da.coords and np.issubdtype(da[dim].dtype, np.number):
        return np.asarray(da[dim].values, dtype=float)
    return np.arange(da.sizes[dim], dtype=float)


def image_extent(h: np.ndarray, v: np.ndarray) -> list[float]:
    """`imshow` extent so that pixel centres sit on the coordinates `h` (horizontal) and `v` (vertical)."""

    def edges(c):
        half = 0.5 * (c[-1] - c[0]) / (len(c) - 1) if len(c) > 1 else 0.5
        return c[0] - half, c[-1] + half

    return [*edges(h), *edges(v)]


def symmetric_limits(values: np.ndarray, symmetric: bool | None) -> tuple[float, float, bool]:
    """`(vmin, vmax, symmetric)`: symmetric about 0 when asked, or by default when the data has both signs
    with comparable magnitudes (the smaller at least 20 % of the larger)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise ValueError("the data has no finite values to plot")
    lo, hi = float(finite.min()), float(finite.max())
    if symmetric is None:
        # Both signs with comparable magnitudes (a wave, a vorticity); a concentration with a
        # little negative noise keeps the min..max scale.
        symmetric = lo < 0 < hi and min(-lo, hi) >= 0.2 * max(-lo, hi)
    if symmetric:
        bound = max(abs(lo), abs(hi)) or 1.0
        return -bound, bound, True
    return lo, hi, False
