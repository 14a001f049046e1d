"""`field_snapshots`: a field at a few times, side by side, on one colour scale."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from ._common import (
    as_dataarray,
    coord_label,
    coord_values,
    image_extent,
    label,
    pyplot,
    require_dim,
    symmetric_limits,
)
from ._space_time import space_time


def field_snapshots(
    data: xr.DataArray | xr.Dataset,
    times: Sequence[float] | None = None,
    *,
    n: int = 4,
    time_dim: str = "time",
    cmap=None,
    symmetric: bool | None = None,
    axes=None,
):
    """Snapshots of a 1-D or 2-D field at a few times, side by side.

    **Arguments:**

    - `data`: a `DataArray` with dims `(time_dim, y, x)` or `(time_dim, x)` (any
      order, any names; with dims named `x` and `y`, `x` runs across), e.g.
      `sol.to_xarray()["u"]`; or a `Dataset` holding one such variable.
    - `times`: the times to show (the nearest stored time is used); default `n`
      times evenly spread from the first to the last. For a 1-D field with
      `times=None` the whole history is drawn as one space–time image instead
      (see `space_time`).
    - `cmap`, `symmetric`: colormap and whether the colour scale is symmetric about
      0 (default: symmetric, with `"RdBu_r"`, when the shown values take both
      signs with comparable magnitudes; else `"viridis"` from min to max).
    - `axes`: a sequence of at least as many `Axes` as snapshots (default: a new figure).

    2-D snapshots share one colour bar, 1-D ones (line plots) one y-range. Titles
    give the time and its units. **Returns** the matplotlib `Figure`.
    """
    fn = "field_snapshots"
    da = as_dataarray(data, fn)
    require_dim(da, time_dim, fn, "time_dim")
    space = [d for d in da.dims if d != time_dim]
    if len(space) not in (1, 2):
        extra = next((d for d in space if d not in ("x", "y")), space[0])
        raise ValueError(
            f"{fn}: data must have dims ({time_dim!r}, x) or ({time_dim!r}, y, x), got {tuple(da.dims)}; "
            f"select the others away first, e.g. data.isel({extra}=0)"
        )
    if len(space) == 1 and times is None:
        ax = space_time(
            da, time_dim=time_dim, ax=None if axes is None else np.ravel(np.asarray(axes, dtype=object))[0], cmap=cmap
        )
        return ax.figure
    snaps = _select(da, times, n, time_dim, fn)
    count = snaps.sizes[time_dim]
    plt = pyplot()
    if axes is None:
        width = 3.2 if len(space) == 2 else 3.6
        fig, axes = plt.subplots(1, count, figsize=(width * count + 0.8, 3.2), squeeze=False, constrained_layout=True)
        axes = axes[0]
    else:
        axes = np.ravel(np.asarray(axes, dtype=object))
        if len(axes) < count:
            raise ValueError(f"{fn}: axes has {len(axes)} Axes but {count} snapshots are drawn")
        fig = axes[0].figure
    values = np.asarray(snaps.values, dtype=float)
    vmin, vmax, sym = symmetric_limits(values, symmetric)
    t_values = coord_values(snaps, time_dim)
    t_units = snaps[time_dim].attrs.get("units", "") if time_dim in snaps.coords else ""
    if len(space) == 1:
        for i in range(count):
            frame = snaps.isel({time_dim: i})
            axes[i].plot(coord_values(frame, space[0]), frame.values, color="C0")
            axes[i].set_ylim(vmin - 0.05 * (vmax - vmin), vmax + 0.05 * (vmax - vmin) or 1.0)
            axes[i].set_xlabel(coord_label(frame, space[0]))
            axes[i].set_title(_title(time_dim, t_values[i], t_units))
        axes[0].set_ylabel(label(da))
        return fig
    h_dim, v_dim = ("x", "y") if set(space) == {"x", "y"} else (space[1], space[0])
    cmap = cmap or ("RdBu_r" if sym else "viridis")
    for i in range(count):
        frame = snaps.isel({time_dim: i}).transpose(v_dim, h_dim)
        image = axes[i].imshow(
            frame.values,
            origin="lower",
            interpolation="nearest",
            cmap=cmap,
            vmin=vmin,
            vmax=vmax,
            extent=image_extent(coord_values(frame, h_dim), coord_values(frame, v_dim)),
        )
        axes[i].set_xlabel(coord_label(frame, h_dim))
        axes[i].set_title(_title(time_dim, t_values[i], t_units))
    axes[0].set_ylabel(coord_label(da, v_dim))
    fig.colorbar(image, ax=list(axes[:count]), label=label(da), shrink=0.9)
    return fig


def _select(da: xr.DataArray, times, n: int, time_dim: str, fn: str) -> xr.DataArray:
    if times is None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{fn}: n must be an integer >= 1 (number of snapshots), got {n!r}")
        idx = np.unique(np.linspace(0, da.sizes[time_dim] - 1, min(n, da.sizes[time_dim])).round().astype(int))
        return da.isel({time_dim: idx})
    wanted = np.atleast_1d(np.asarray(times, dtype=float))
    if wanted.ndim != 1 or wanted.size == 0:
        raise ValueError(f"{fn}: times must be a non-empty sequence of times, got {times!r}")
    stored = coord_values(da, time_dim)
    lo, hi = stored.min(), stored.max()
    outside = wanted[(wanted < lo) | (wanted > hi)]
    if outside.size:
        raise ValueError(f"{fn}: times {outside.tolist()} lie outside the stored times [{lo:g}, {hi:g}]")
    return da.isel({time_dim: [int(np.argmin(np.abs(stored - t))) for t in wanted]})


def _title(time_dim: str, t: float, units: str) -> str:
    value = f"{int(t)}" if float(t).is_integer() and abs(t) < 1e7 else f"{t:.4g}"
    return f"{'t' if time_dim == 'time' else time_dim} = {value}{' ' + units if units else ''}"
