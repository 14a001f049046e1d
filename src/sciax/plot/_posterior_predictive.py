"""`posterior_predictive`: quantile bands of predicted observations over time, the data drawn on top."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from .. import _arviz
from ._common import coord_label, coord_values, pyplot
from ._spread import _quantiles

_SAMPLE_DIMS = ("chain", "draw")


def posterior_predictive(
    result,
    data=None,
    *,
    var_name: str = "obs",
    quantiles: Sequence[float] = (0.05, 0.25, 0.75, 0.95),
    ax=None,
):
    """Posterior-predictive check: bands of the predicted observations over time, the observed data as points.

    One panel per observed component: shaded bands between paired quantiles of the
    draws (by default 5–95 % and 25–75 %), the median as a line, and the data as
    markers. Data points outside the outer band are the ones the model misses.

    **Arguments:**

    - `result`: what `sciax.prob.infer` returns (an `arviz.InferenceData` on arviz
      0.x, an `xarray.DataTree` on arviz >= 1).
    - `data`: the observations, shape `(T, K)` (or `(T,)` for one component), an
      array or `DataArray`; default the result's `observed_data` group. NaN entries
      (missing values) are not drawn.
    - `var_name`: the variable to draw bands of: `"obs"` (default; from the
      `posterior_predictive` group: new observations, noise included) or, e.g.,
      `"prediction"` (from the `posterior` group: the noise-free simulated
      trajectory). Its dims are `(chain, draw, time[, observed])`.
    - `quantiles`: an even number of increasing levels in (0, 1), paired from the
      outside in.
    - `ax`: `None` (a new figure, one panel per component) or a sequence of one
      `Axes` per component (a single `Axes` when there is one component).

    **Returns** the `Axes` (one component) or a NumPy array of `Axes` (one per
    component), as `trajectory_spread` does.
    """
    fn = "posterior_predictive"
    draws = _draws(result, var_name, fn)
    qs = _quantiles(quantiles, fn)
    time_dim, component_dim = draws.dims[2], (draws.dims[3] if draws.ndim == 4 else None)
    observed = _observed(result, data, var_name, draws, fn)
    names = [str(c) for c in draws[component_dim].values] if component_dim is not None else [var_name]
    axes, single = _axes(ax, len(names), fn)
    t = coord_values(draws, time_dim)
    values = np.asarray(draws.values, dtype=float).reshape(-1, *draws.shape[2:])
    if component_dim is None:
        values, observed = values[..., None], observed[:, None]
    for k, name in enumerate(names):
        _draw_panel(axes[k], t, values[..., k], observed[:, k], qs)
        axes[k].set_xlabel(coord_label(draws, time_dim))
        axes[k].set_ylabel(name)
        axes[k].set_title(f"{name}: posterior predictive")
    return axes[0] if single else np.asarray(axes, dtype=object)


def _draw_panel(ax, t: np.ndarray, draws: np.ndarray, observed: np.ndarray, qs: np.ndarray) -> None:
    # nanquantile: a failed draw (NaN) must not blank the bands of the others.
    bands = np.nanquantile(draws, qs, axis=0)
    for j in range(len(qs) // 2):
        ax.fill_between(
            t,
            bands[j],
            bands[-1 - j],
            color="C0",
            alpha=0.2 + 0.15 * j,  # inner bands darker
            linewidth=0,
            label=f"{100 * qs[j]:g}–{100 * qs[-1 - j]:g} %",
        )
    ax.plot(t, np.nanmedian(draws, axis=0), color="C0", linewidth=1.5, label="median")
    seen = np.isfinite(observed)
    ax.scatter(t[seen], observed[seen], color="k", s=14, zorder=3, label="data")
    ax.legend(loc="best", fontsize=8)


def _draws(result, var_name: str, fn: str) -> xr.DataArray:
    groups = _arviz.group_names(result) if not isinstance(result, (xr.Dataset, xr.DataArray)) else []
    for group in ("posterior_predictive", "posterior"):
        if group in groups and var_name in _arviz.group(result, group).data_vars:
            draws = _arviz.group(result, group)[var_name]
            break
    else:
        raise ValueError(
            f"{fn}: var_name={var_name!r} is in neither the 'posterior_predictive' nor the 'posterior' group of "
            f"result (groups: {groups}); pass the result of sciax.prob.infer (with posterior_predictive=True) "
            "or name a variable it has"
        )
    if draws.dims[:2] != _SAMPLE_DIMS or draws.ndim not in (3, 4):
        raise ValueError(
            f"{fn}: {var_name!r} has dims {draws.dims}; expected ('chain', 'draw', time[, observed component])"
        )
    return draws


def _observed(result, data, var_name: str, draws: xr.DataArray, fn: str) -> np.ndarray:
    expected = draws.shape[2:]
    if data is None:
        groups = _arviz.group_names(result)
        name = "obs" if var_name == "prediction" else var_name
        if "observed_data" not in groups or name not in _arviz.group(result, "observed_data").data_vars:
            raise ValueError(f"{fn}: result has no observed_data[{name!r}]; pass the observations as data=")
        data = _arviz.group(result, "observed_data")[name]
    try:
        values = np.asarray(data.values if isinstance(data, xr.DataArray) else data, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{fn}: data must be an array of observations, got {type(data).__name__}") from None
    if values.shape != expected and not (len(expected) == 2 and expected[1] == 1 and values.shape == expected[:1]):
        raise ValueError(
            f"{fn}: data has shape {values.shape}; expected {expected} (time, observed component) like the "
            f"draws of {var_name!r}"
        )
    return values.reshape(expected)


def _axes(ax, n: int, fn: str) -> tuple[list, bool]:
    if ax is None:
        _, axes = pyplot().subplots(1, n, figsize=(4.8 * n, 3.6), squeeze=False, constrained_layout=True)
        return list(axes[0]), n == 1
    if hasattr(ax, "plot"):
        if n != 1:
            raise ValueError(f"{fn}: one Axes given for {n} observed components; pass a sequence of {n} Axes")
        return [ax], True
    axes = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n:
        raise ValueError(f"{fn}: ax has {len(axes)} Axes but there are {n} observed components; pass one each")
    return axes, False


__all__ = ["posterior_predictive"]
