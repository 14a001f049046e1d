"""`posterior_pairs`: an ArviZ pair plot of posterior draws, with the true values marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def posterior_pairs(idata, var_names: Sequence[str] | None = None, *, reference: Mapping[str, Any] | None = None,
                    **kwargs: Any):
    """Pairwise joint and marginal posterior densities: a thin wrapper over `arviz.plot_pair`.

    **Arguments:**

    - `idata`: what `sciax.prob.infer` returns (an `arviz.InferenceData` with a
      `posterior` group, variables with dims `(chain, draw, ...)`).
    - `var_names`: the variables to plot (default: every posterior variable).
    - `reference`: optional `{name: true value}` (a number, or an array for a
      vector variable), drawn as markers in the joint panels and as vertical
      lines on the marginals of scalar variables; e.g. the parameters a
      synthetic data set was made with.
    - `**kwargs`: passed to `arviz.plot_pair`; defaults here are `kind="kde"`,
      `marginals=True` (use `kind="scatter"` for a quick look at many draws).

    **Returns** what ArviZ returns: a NumPy array of matplotlib `Axes` (a single
    `Axes` for two scalar variables without marginals).
    """
    import arviz as az

    fn = "posterior_pairs"
    if not hasattr(az, "plot_pair"):  # arviz >= 1 moved plotting to arviz-plots
        raise ImportError(f"{fn}: needs arviz.plot_pair (arviz 0.x); arviz {az.__version__} has no plot_pair")
    posterior = _posterior(idata, fn)
    names = list(posterior.data_vars) if var_names is None else ([var_names] if isinstance(var_names, str)
                                                                   else list(var_names))
    for name in names:
        if name not in posterior.data_vars:
            raise ValueError(f"{fn}: var_names names {name!r}, which is not in the posterior; "
                             f"it has {list(posterior.data_vars)}")
    if reference is not None:
        if not isinstance(reference, Mapping):
            raise TypeError(f"{fn}: reference must be a dict {{name: true value}}, got {type(reference).__name__}")
        unknown = [k for k in reference if k not in names]
        if unknown:
            raise ValueError(f"{fn}: reference names {unknown}, which are not plotted; var_names are {names}")
        kwargs.setdefault("reference_values", {k: np.asarray(v, dtype=float) for k, v in reference.items()})
        kwargs.setdefault("reference_values_kwargs", {"color": "C3", "markeredgecolor": "k", "marker": "o"})
    kwargs.setdefault("kind", "kde")
    kwargs.setdefault("marginals", True)
    axes = az.plot_pair(idata, var_names=names, **kwargs)
    scalars = all(posterior[n].ndim == 2 for n in names)  # only (chain, draw): one panel row per variable
    grid = np.asarray(axes, dtype=object)
    if reference is not None and kwargs["marginals"] and scalars and grid.ndim == 2 and grid.shape[0] == len(names):
        for i, name in enumerate(names):
            if name in reference:
                grid[i, i].axvline(float(np.asarray(reference[name])), color="C3", linewidth=1.2)
    return axes


def _posterior(idata, fn: str):
    try:
        posterior = idata["posterior"]
    except (KeyError, TypeError):
        raise ValueError(f"{fn}: idata must have a 'posterior' group (as sciax.prob.infer returns), "
                         f"got {type(idata).__name__}") from None
    return getattr(posterior, "dataset", posterior)  # DataTree node (arviz >= 1) or Dataset
