"""`posterior_pairs`: an ArviZ pair plot of posterior draws, with the true values marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from .. import _arviz

_REFERENCE_STYLE = {"color": "C3", "markeredgecolor": "k", "marker": "o", "linestyle": "none", "zorder": 5}


def posterior_pairs(
    idata, var_names: Sequence[str] | None = None, *, reference: Mapping[str, Any] | None = None, **kwargs: Any
) -> np.ndarray:
    """Pairwise joint and marginal posterior densities: a thin wrapper over ArviZ's pair plot.

    **Arguments:**

    - `idata`: what `sciax.prob.infer` returns (an `arviz.InferenceData` on
      arviz 0.x, an `xarray.DataTree` on arviz >= 1; a `posterior` group with
      variables of dims `(chain, draw, ...)`).
    - `var_names`: the variables to plot (default: every posterior variable). A
      vector variable gets one panel row per component, labelled `name[i]`.
    - `reference`: optional `{name: true value}` (a number, or an array for a
      vector variable), drawn as markers in the joint panels and as lines across
      the marginals (vertical, or horizontal where ArviZ rotates a marginal);
      e.g. the parameters a synthetic data set was made with.
    - `kind`: `"kde"` (default, density contours) or `"scatter"` (a quick look).
    - `marginals`: draw the marginal densities on the diagonal (default `True`).
    - `figsize` (default square, 2.2 inches a panel), and further keywords:
      passed to ArviZ's pair plot.

    **Returns** an `(n, n)` NumPy array of matplotlib `Axes` for `n` plotted
    scalars: `[i, j]` (i > j) is scalar `j` on x against scalar `i` on y,
    `[i, i]` the marginal of scalar `i`; `None` where no panel is drawn. The
    same on both ArviZ lines.
    """
    fn = "posterior_pairs"
    posterior = _posterior(idata, fn)
    names = _names(posterior, var_names, fn)
    references = _references(reference, names, fn)
    scalars = _scalars(posterior, names)
    kind = kwargs.pop("kind", "kde")
    if kind not in ("kde", "scatter"):
        raise ValueError(f"{fn}: kind must be 'kde' or 'scatter', got {kind!r}")
    marginals = bool(kwargs.pop("marginals", True))
    side = 2.2 * len(scalars.data_vars) + 1.0
    kwargs.setdefault("figsize", (side, side))
    axes = _arviz.pair_axes(scalars, kind=kind, marginals=marginals, **kwargs)
    if references:
        _mark_references(axes, scalars, _flatten(references, posterior))
    return axes


def _posterior(idata, fn: str) -> xr.Dataset:
    try:
        return _arviz.group(idata, "posterior")
    except (KeyError, TypeError):
        raise ValueError(
            f"{fn}: idata must have a 'posterior' group (as sciax.prob.infer returns), got {type(idata).__name__}"
        ) from None


def _names(posterior: xr.Dataset, var_names, fn: str) -> list[str]:
    if var_names is None:
        return list(posterior.data_vars)
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    for name in names:
        if name not in posterior.data_vars:
            raise ValueError(
                f"{fn}: var_names names {name!r}, which is not in the posterior; it has {list(posterior.data_vars)}"
            )
    return names


def _references(reference, names: list[str], fn: str) -> dict[str, np.ndarray]:
    if reference is None:
        return {}
    if not isinstance(reference, Mapping):
        raise TypeError(f"{fn}: reference must be a dict {{name: true value}}, got {type(reference).__name__}")
    unknown = [k for k in reference if k not in names]
    if unknown:
        raise ValueError(f"{fn}: reference names {unknown}, which are not plotted; var_names are {names}")
    return {k: np.asarray(v, dtype=float) for k, v in reference.items()}


def _components(posterior: xr.Dataset, name: str) -> list[tuple[str, tuple[int, ...]]]:
    """`(label, index)` for each scalar component of a variable, in C order."""
    shape = posterior[name].shape[2:]
    if not shape:
        return [(name, ())]
    return [(f"{name}[{','.join(map(str, i))}]", i) for i in np.ndindex(shape)]


def _scalars(posterior: xr.Dataset, names: list[str]) -> xr.Dataset:
    """One `(chain, draw)` variable per scalar component, so every panel maps to one labelled scalar."""
    data = {}
    for name in names:
        values = np.asarray(posterior[name])
        for label, index in _components(posterior, name):
            data[label] = (("chain", "draw"), values[(slice(None), slice(None), *index)])
    return xr.Dataset(data, coords={d: posterior[d] for d in ("chain", "draw") if d in posterior.coords})


def _flatten(references: dict[str, np.ndarray], posterior: xr.Dataset) -> dict[str, float]:
    flat = {}
    for name, value in references.items():
        components = _components(posterior, name)
        value = np.broadcast_to(value, posterior[name].shape[2:])
        flat.update({label: float(value[index]) for label, index in components})
    return flat


def _mark_references(axes: np.ndarray, scalars: xr.Dataset, reference: dict[str, float]) -> None:
    labels = list(scalars.data_vars)
    for i, yname in enumerate(labels):
        for j, xname in enumerate(labels[: i + 1]):
            ax = axes[i, j]
            if ax is None:
                continue
            if i == j and yname in reference:
                _mark_marginal(ax, np.asarray(scalars[yname]).ravel(), reference[yname])
            elif i != j and xname in reference and yname in reference:
                ax.plot([reference[xname]], [reference[yname]], **_REFERENCE_STYLE)


def _mark_marginal(ax, samples: np.ndarray, value: float) -> None:
    """A line across the marginal at `value`, along the axis that carries the samples' values.

    ArviZ rotates some marginals (0.x turns the last one of a 2-variable plot on
    its side), so the orientation is read from the drawn density curve itself.
    """
    if _rotated(ax, samples):
        ax.axhline(value, color="C3", linewidth=1.2)
    else:
        ax.axvline(value, color="C3", linewidth=1.2)


def _rotated(ax, samples: np.ndarray) -> bool:
    curves = [line for line in ax.lines if np.size(line.get_xdata()) > 2]
    if not curves:
        return False
    curve = max(curves, key=lambda line: np.size(line.get_xdata()))
    lo, hi = np.quantile(samples, [0.05, 0.95])

    def covers(values) -> float:
        values = np.asarray(values, dtype=float)
        return float(np.mean((values >= lo) & (values <= hi)))

    return covers(curve.get_ydata()) > covers(curve.get_xdata())


__all__ = ["posterior_pairs"]
