"""`summary`: the diagnostics table of an inference result (r_hat, ESS, divergences)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import _arviz

#: Why a variational result's table has no MCMC diagnostics (in `table.attrs["diagnostics"]`).
SVI_DIAGNOSTICS = (
    "no ess/r_hat/mcse: the draws of a variational fit are independent draws from the fitted guide, so their "
    "ESS is their number and says nothing about the posterior; whether the fit converged is in "
    "result['sample_stats'].attrs ('converged', 'location', 'scale', 'loss_change')"
)


def summary(result, var_names: Sequence[str] | None = None, *, print_table: bool = True):
    """Posterior mean, sd, credible interval, MCSE, bulk and tail ESS and r_hat per parameter, via `arviz.summary`.

    `result` is what `sciax.prob.infer` returns. By default the table covers the
    sampled parameters (not deterministic sites such as `prediction`). With
    `print_table=True` the table is printed together with the number of
    divergent transitions. Returns the table (a `pandas.DataFrame`) with
    columns including `mean`, `sd`, `ess_bulk`, `ess_tail` and `r_hat` (the
    interval columns are ArviZ's: `hdi_3%`/`hdi_97%` on arviz 0.x,
    `eti89_lb`/`eti89_ub` on arviz >= 1); its
    `attrs["num_divergences"]` holds the divergence count (0 for SVI).

    For an SVI result (`method="svi"`) the table has only `mean`, `sd` and the
    interval: ESS, MCSE and r_hat describe Markov chains, and for independent
    draws from a fitted guide they would report a large ESS however far the
    guide is from the posterior. `attrs["diagnostics"]` says so and where the
    fit's convergence check is recorded.
    """
    posterior = _arviz.group(result, "posterior")
    if var_names is None:
        var_names = [name for name in posterior.data_vars if name != "prediction"]
    variational = result.attrs.get("inference_method") == "svi"
    table = _arviz.summary(result, var_names, kind="stats" if variational else "all")
    divergences = 0
    if "sample_stats" in _arviz.group_names(result) and "diverging" in _arviz.group(result, "sample_stats"):
        divergences = int(np.asarray(result["sample_stats"]["diverging"]).sum())
    table.attrs["num_divergences"] = divergences
    if variational:
        table.attrs["diagnostics"] = SVI_DIAGNOSTICS
    if print_table:
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        print(table.to_string())
        if variational:
            print(f"{draws} draws from the fitted guide; {SVI_DIAGNOSTICS}")
        else:
            print(f"{chains} chain(s) x {draws} draws; divergent transitions: {divergences}")
    return table
