"""`shot_gather`: receiver traces as an image (time down, receiver across) or as wiggles.

Also exported as `sciax.plot.seismograms`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ._common import as_dataarray, coord_label, coord_values, image_extent, label, pyplot, require_dim


def shot_gather(
    data: xr.DataArray,
    *,
    receiver_dim: str = "receiver",
    time_dim: str = "time",
    ax=None,
    clip: float = 0.99,
    wiggle: bool = False,
):
    """Plot a shot gather: one trace per receiver, time increasing downwards.

    Draws the data that `sciax.pde.AcousticWave.seismograms` builds; the same
    function is `sciax.plot.seismograms`.

    **Arguments:**

    - `data`: a `DataArray` with exactly the dims `(time_dim, receiver_dim)`, as
      returned by `sciax.pde.AcousticWave(...).seismograms(sol)` (select one shot
      first if it has a `member` dim, e.g. `data.isel(member=0)`).
    - `clip`: the colour (or wiggle) scale saturates at this quantile of `|data|`,
      a number in (0, 1]; strong direct arrivals otherwise hide weak reflections.
    - `wiggle`: `False` draws an image (`"gray"` colormap, symmetric about 0);
      `True` draws each trace as a line offset to its receiver index, positive
      lobes filled black, amplitudes scaled so the clip level spans half the
      receiver spacing.
    - `ax`: the `Axes` to draw on (default: a new figure).

    **Returns** the `Axes`.
    """
    fn = "shot_gather"
    da = as_dataarray(data, fn)
    require_dim(da, time_dim, fn, "time_dim")
    require_dim(da, receiver_dim, fn, "receiver_dim")
    if da.ndim != 2:
        extra = [d for d in da.dims if d not in (time_dim, receiver_dim)]
        raise ValueError(f"{fn}: data has extra dims {extra}; select one gather first, e.g. data.isel({extra[0]}=0)")
    if isinstance(clip, bool) or not isinstance(clip, (int, float, np.integer, np.floating)) or not 0 < clip <= 1:
        raise ValueError(f"{fn}: clip must be a quantile in (0, 1], got {clip!r}")
    da = da.transpose(time_dim, receiver_dim)
    values = np.asarray(da.values, dtype=float)
    t = coord_values(da, time_dim)
    receivers = np.arange(da.sizes[receiver_dim], dtype=float)
    scale = float(np.nanquantile(np.abs(values), clip)) if values.size else 0.0
    scale = scale if scale > 0 else 1.0  # an all-zero gather still plots (as blank)
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 0.25 * len(receivers) + 2.0), 5.0), constrained_layout=True)
    if wiggle:
        for r in receivers.astype(int):
            trace = r + 0.5 * np.clip(values[:, r] / scale, -1.0, 1.0)
            ax.plot(trace, t, color="black", linewidth=0.6)
            ax.fill_betweenx(t, r, trace, where=trace > r, color="black", linewidth=0)
        ax.set_xlim(receivers[0] - 1, receivers[-1] + 1)
        ax.set_ylim(t[-1], t[0])
    else:
        image = ax.imshow(
            values,
            aspect="auto",
            origin="upper",
            cmap="gray",
            vmin=-scale,
            vmax=scale,
            interpolation="nearest",
            extent=_flip(image_extent(receivers, t)),
        )
        ax.figure.colorbar(image, ax=ax, label=label(da, "amplitude"), extend="both")
    ax.set_xlabel(receiver_dim)
    ax.set_ylabel(coord_label(da, time_dim))
    ax.set_title(f"{da.attrs.get('long_name', da.name or 'seismograms')} (clip {100 * clip:g} %)")
    return ax


def _flip(extent: list[float]) -> list[float]:
    # origin="upper": the first row (earliest time) at the top, so the vertical extent runs downwards.
    return [extent[0], extent[1], extent[3], extent[2]]
