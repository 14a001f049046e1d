"""The one place where ArviZ 0.x (`InferenceData`, Python 3.11's newest) and ArviZ >= 1 (`xarray.DataTree`) differ.

sciax reads and writes inference results through the functions here only:
building the result from named groups of `xarray.Dataset`s (one code path for
MCMC and SVI, no dependence on either line's converter signature), listing its
groups, the diagnostics table, and the pair-plot panels. Everything above this
module is written once for both lines.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

_SAMPLE_DIMS = ("chain", "draw")


def arviz():
    """`import arviz`, without ArviZ 0.x's import-time FutureWarning about its own 1.0 refactor.

    That warning announces the API change this module absorbs; repeated on every
    `infer` it only buries the warnings that matter (and the test suite turns
    FutureWarnings into errors).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*ArviZ is undergoing a major refactor", category=FutureWarning)
        import arviz as az
    return az


def arviz_major() -> int:
    return int(arviz().__version__.split(".")[0])


def dataset(
    arrays: Mapping[str, Any],
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    *,
    sample_dims: tuple[str, ...] = _SAMPLE_DIMS,
) -> xr.Dataset:
    """One group: every array has `sample_dims` leading, then the site's own dims."""
    data_vars, used_coords = {}, {}
    for name, value in arrays.items():
        value = np.asarray(value)
        extra = value.ndim - len(sample_dims)
        own = tuple(dims.get(name, ()))
        if len(own) != extra or any(
            d in coords and len(coords[d]) != n for d, n in zip(own, value.shape[-extra:] if extra else ())
        ):
            own = tuple(f"{name}_dim_{i}" for i in range(extra))
        full = sample_dims + own
        data_vars[name] = (full, value)
        for dim, size in zip(full, value.shape):
            if dim in coords:
                used_coords[dim] = coords[dim]
            elif dim in _SAMPLE_DIMS:
                used_coords[dim] = np.arange(size)
    return xr.Dataset(data_vars, coords=used_coords)


def inference_data(groups: Mapping[str, xr.Dataset], attrs: Mapping[str, Any] | None = None):
    """`arviz.InferenceData` on arviz 0.x, `xarray.DataTree` (ArviZ's container) on arviz >= 1."""
    for ds in groups.values():
        ds.attrs.update(attrs or {})
    if arviz_major() < 1:
        return arviz().InferenceData(**groups)
    return xr.DataTree.from_dict(dict(groups))


def group_names(result) -> list[str]:
    """The groups of an inference result (`posterior`, `sample_stats`, ...) on either ArviZ line."""
    groups = getattr(result, "groups", None)
    if callable(groups):  # arviz.InferenceData
        return list(groups())
    return list(getattr(result, "children", {}))  # xarray.DataTree


def group(result, name: str) -> xr.Dataset:
    """One group as an `xarray.Dataset` (a DataTree node is converted; a Dataset is returned as is)."""
    node = result[name]
    return node.to_dataset() if isinstance(node, xr.DataTree) else node


def summary(result, var_names: Sequence[str], *, kind: str = "all"):
    """`arviz.summary` of the posterior: a DataFrame with `mean`, `sd`, `ess_bulk`, `ess_tail`, `r_hat`.

    The credible-interval columns are ArviZ's own: `hdi_3%`/`hdi_97%` on 0.x,
    `eti89_lb`/`eti89_ub` on >= 1. `kind="stats"` (both lines): only `mean`,
    `sd` and the interval.
    """
    return arviz().summary(result, var_names=list(var_names), kind=kind)


def pair_axes(posterior: xr.Dataset, *, kind: str, marginals: bool, figsize=None, **kwargs: Any) -> np.ndarray:
    """Draw ArviZ's pair plot of the scalar variables of `posterior` and return its panels.

    Returns an `(n, n)` object array of matplotlib `Axes` for `n` variables:
    panel `[i, j]` with `i > j` shows variable `j` on x against variable `i` on
    y, `[i, i]` holds the marginal of variable `i` (`None` where ArviZ draws no
    panel). `kind` is `"kde"` (density contours) or `"scatter"`.
    """
    names = list(posterior.data_vars)
    n = len(names)
    if arviz_major() < 1:
        return _pair_axes_0x(posterior, names, kind, marginals, figsize, kwargs)
    import arviz_plots as azp

    visuals = {"scatter": kind == "scatter", "contour": kind == "kde"}
    visuals.update(kwargs.pop("visuals", {}))
    if figsize is not None:
        kwargs.setdefault("figure_kwargs", {})["figsize"] = figsize
    tree = xr.DataTree.from_dict({"posterior": posterior})
    plot = azp.plot_pair(
        tree, var_names=names, marginal=marginals, triangle="lower", backend="matplotlib", visuals=visuals, **kwargs
    )
    panels = np.asarray(plot.viz["plot"].values, dtype=object)
    return panels.reshape(n, n)


def _pair_axes_0x(posterior, names, kind, marginals, figsize, kwargs) -> np.ndarray:
    az = arviz()
    n = len(names)
    drawn = az.plot_pair(
        az.InferenceData(posterior=posterior),
        var_names=names,
        kind=kind,
        marginals=marginals,
        figsize=figsize,
        **kwargs,
    )
    drawn = np.asarray(drawn, dtype=object).reshape(-1)
    panels = np.full((n, n), None, dtype=object)
    if marginals:
        panels[:] = drawn.reshape(n, n)
    else:  # ArviZ 0.x omits the diagonal: its grid is (n-1, n-1) with [i-1, j] = variable j against i
        panels[1:, :-1] = drawn.reshape(n - 1, n - 1)
    return panels


__all__: list[str] = []
