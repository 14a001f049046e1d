"""`summary`: the diagnostics table of an inference result (r_hat, ESS, divergences)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def summary(result, var_names: Sequence[str] | None = None, *, print_table: bool = True):
    """Posterior mean, sd, HDI, MCSE, bulk and tail ESS and r_hat per parameter, via `arviz.summary`.

    `result` is what `sciax.prob.infer` returns. By default the table covers the
    sampled parameters (not deterministic sites such as `prediction`). With
    `print_table=True` the table is printed together with the number of
    divergent transitions. Returns the table (a `pandas.DataFrame`) with
    columns including `mean`, `sd`, `ess_bulk`, `ess_tail` and `r_hat`; its
    `attrs["num_divergences"]` holds the divergence count (0 for SVI).
    """
    import arviz

    posterior = result["posterior"]
    if var_names is None:
        var_names = [name for name in posterior.data_vars if name != "prediction"]
    table = arviz.summary(result, var_names=list(var_names))
    divergences = 0
    if "sample_stats" in _groups(result) and "diverging" in result["sample_stats"]:
        divergences = int(np.asarray(result["sample_stats"]["diverging"]).sum())
    table.attrs["num_divergences"] = divergences
    if print_table:
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        print(table.to_string())
        print(f"{chains} chain(s) x {draws} draws; divergent transitions: {divergences}")
    return table


def _groups(result) -> list[str]:
    groups = getattr(result, "groups", None)
    if callable(groups):  # arviz.InferenceData
        return list(groups())
    return list(getattr(result, "children", {}))  # xarray.DataTree
