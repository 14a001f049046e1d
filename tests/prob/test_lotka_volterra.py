"""Lotka-Volterra on the lynx-hare data: the posterior of Carpenter's Stan case study (2018)."""

import diffrax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest

import sciax
from sciax import _arviz


def lynx_hare_model() -> tuple[sciax.prob.SimulationModel, np.ndarray]:
    data = sciax.prob.load_lynx_hare()
    obs = np.stack([data["hare"].values, data["lynx"].values], axis=-1)  # hare = prey
    rate = lambda loc, scale: dist.TruncatedNormal(loc, scale, low=0.0)  # noqa: E731
    model = sciax.prob.SimulationModel(
        sciax.ode.lotka_volterra(),
        jnp.arange(21.0),  # years since 1900; the 1900 row observes the initial state
        priors={"alpha": rate(1.0, 0.5), "beta": rate(0.05, 0.05), "gamma": rate(1.0, 0.5), "delta": rate(0.05, 0.05)},
        y0=dist.LogNormal(jnp.log(10.0), 1.0).expand([2]).to_event(1),
        likelihood=sciax.prob.LogNormalLikelihood(dist.LogNormal(-1.0, 1.0)),
        # Keeping every step for the backward pass is cheap here (~100 steps) and avoids recomputation.
        adjoint=diffrax.RecursiveCheckpointAdjoint(checkpoints=1000),
    )
    return model, obs


@pytest.mark.slow
def test_lynx_hare_posterior_matches_the_stan_case_study():
    model, obs = lynx_hare_model()
    result = sciax.prob.infer(
        model,
        obs,
        # 4 x 500 draws: bulk ESS > 1600 (measured, both release stacks), so each mean's Monte Carlo standard error
        # (sd / sqrt(ESS): alpha 0.063 -> 0.0016) is < 1/15 of its tolerance below, which is the case
        # study's reported precision; R-hat < 1.01 is Stan's criterion once ESS > 400. With 300 draws R-hat's own
        # sampling noise crossed it: 1.011 for one of the eight parameters on one machine (the others <= 1.005);
        # with 500 the largest was 1.0044 there and 1.0034 on the other release stack.
        num_warmup=300,
        num_samples=500,
        num_chains=4,
        dense_mass=True,
        seed=0,
        log_likelihood=False,
        posterior_predictive=False,
    )
    table = sciax.prob.summary(result, print_table=False)
    # r_hat itself, not the summary table's two-decimal rounding of it.
    posterior = _arviz.group(result, "posterior")
    rhat = _arviz.arviz().rhat(posterior[[n for n in posterior.data_vars if n != "prediction"]])
    worst = max(float(rhat[name].max()) for name in rhat.data_vars)
    assert worst < 1.01, table
    assert table.attrs["num_divergences"] == 0
    post = result["posterior"]
    # Posterior means reported by the case study.
    for name, expected, tol in (
        ("alpha", 0.55, 0.03),
        ("beta", 0.028, 0.003),
        ("gamma", 0.80, 0.04),
        ("delta", 0.024, 0.002),
    ):
        np.testing.assert_allclose(float(post[name].mean()), expected, atol=tol, err_msg=name)
    assert post["y0"].dims == ("chain", "draw", "state")
