"""`space_time`: a 1-D field over time as one image (the classic Kuramoto–Sivashinsky picture)."""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._common import as_dataarray, coord_label, coord_values, image_extent, label, pyplot, require_dim, symmetric_limits


def space_time(data: xr.DataArray | xr.Dataset, *, time_dim: str = "time", ax=None, cmap=None):
    """Image of a 1-D field over time: space across, time upwards, with a colour bar.

    **Arguments:**

    - `data`: a `DataArray` with dims `(time_dim, space)` in any order (e.g.
      `sol.to_xarray()["u"]` of a 1-D PDE), or a `Dataset` holding one such variable.
    - `ax`: the `Axes` to draw on (default: a new figure).
    - `cmap`: a matplotlib colormap; default `"RdBu_r"` centred on 0 when the field
      takes both signs, else `"viridis"`.

    Axis and colour-bar labels come from the CF attributes (`long_name`, `units`).
    **Returns** the `Axes`.
    """
    fn = "space_time"
    da = as_dataarray(data, fn)
    require_dim(da, time_dim, fn, "time_dim")
    if da.ndim != 2:
        raise ValueError(
            f"{fn}: data must have dims ({time_dim!r}, one space dim), got {tuple(da.dims)}; "
            "for 2-D fields use field_snapshots"
        )
    space = next(d for d in da.dims if d != time_dim)
    da = da.transpose(time_dim, space)
    values = np.asarray(da.values, dtype=float)
    vmin, vmax, symmetric = symmetric_limits(values, None)
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.5), constrained_layout=True)
    image = ax.imshow(
        values,
        origin="lower",
        aspect="auto",
        interpolation="nearest",
        extent=image_extent(coord_values(da, space), coord_values(da, time_dim)),
        cmap=cmap or ("RdBu_r" if symmetric else "viridis"),
        vmin=vmin,
        vmax=vmax,
    )
    ax.set_xlabel(coord_label(da, space))
    ax.set_ylabel(coord_label(da, time_dim))
    ax.figure.colorbar(image, ax=ax, label=label(da))
    return ax
