"""The compiled NUTS program (vectorised chains from given starts) against an exact posterior and numpyro's MCMC."""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS
from scipy.stats import lognorm as stats_lognorm
from scipy.stats import norm as stats_norm

import sciax
from sciax.prob._nuts_program import lower_nuts_program, run_nuts_program

Y = np.array([0.3, 1.9, 0.8, 1.2, 0.1, 1.5, 0.9, 1.1, 0.4, 1.6])
CHAINS, DRAWS = 4, 1000


def conjugate():
    """mu ~ N(0, 1), y_i ~ N(mu, 1), sigma ~ LogNormal(0, 1) unused by the data.

    Posterior: mu ~ N(sum y / (n + 1), 1 / (n + 1)).
    """
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("sigma", dist.LogNormal(0.0, 1.0))
    numpyro.deterministic("mu2", 2 * mu)
    numpyro.sample("y", dist.Normal(mu, 1.0), obs=jnp.asarray(Y))


def _starts():
    return {"mu": jnp.linspace(-0.5, 0.5, CHAINS), "sigma": jnp.zeros(CHAINS)}


def test_matches_the_exact_posterior_and_numpyro_mcmc():
    key = jax.random.PRNGKey(0)
    template = {"mu": jnp.zeros(()), "sigma": jnp.zeros(())}
    lowered = lower_nuts_program(
        conjugate,
        (),
        {},
        template,
        key,
        CHAINS,
        num_warmup=500,
        num_samples=DRAWS,
        dense_mass=True,
        target_accept_prob=0.8,
        max_tree_depth=10,
    )
    post, stats = run_nuts_program(lowered.compile(), _starts(), key)
    assert post["mu"].shape == (CHAINS, DRAWS) and post["sigma"].shape == (CHAINS, DRAWS)
    np.testing.assert_array_equal(post["mu2"], 2 * post["mu"])  # deterministic sites, constrained space
    assert post["sigma"].min() > 0
    assert set(stats) == {"diverging", "n_steps", "acceptance_rate", "energy", "lp"}
    assert not stats["diverging"].any()
    n = Y.size
    mean, sd = Y.sum() / (n + 1), 1 / np.sqrt(n + 1)
    # 4,000 nearly independent draws: the Monte Carlo standard error of the mean is ~0.005.
    np.testing.assert_allclose(post["mu"].mean(), mean, atol=0.03)
    np.testing.assert_allclose(post["mu"].std(), sd, rtol=0.06)
    np.testing.assert_allclose(np.log(post["sigma"]).std(), 1.0, rtol=0.08)  # the prior: log sigma ~ N(0, 1)
    # lp is the log density in the unconstrained space: log p(mu, sigma, y) + log sigma (the Jacobian of exp).
    mu, sigma = post["mu"][:, :5], post["sigma"][:, :5]
    expected = (
        stats_norm.logpdf(mu)
        + stats_lognorm.logpdf(sigma, 1.0)
        + np.log(sigma)
        + stats_norm.logpdf(Y[:, None, None], mu).sum(0)
    )
    np.testing.assert_allclose(stats["lp"][:, :5], expected, rtol=1e-10)
    mcmc = MCMC(
        NUTS(conjugate, dense_mass=True),
        num_warmup=500,
        num_samples=DRAWS,
        num_chains=CHAINS,
        chain_method="vectorized",
        progress_bar=False,
    )
    mcmc.run(jax.random.PRNGKey(1), init_params=_starts())
    theirs = mcmc.get_samples()["mu"]
    np.testing.assert_allclose(post["mu"].mean(), float(theirs.mean()), atol=0.03)
    np.testing.assert_allclose(post["mu"].std(), float(theirs.std()), rtol=0.08)


def test_infer_uses_it_for_map_starts_and_numpyro_mcmc_otherwise():
    kwargs = dict(
        num_warmup=300, num_samples=300, num_chains=2, seed=0, log_likelihood=False, posterior_predictive=False
    )
    ours = sciax.prob.infer(conjugate, init_strategy="map", **kwargs)
    sequential = sciax.prob.infer(conjugate, init_strategy="map", chain_method="sequential", **kwargs)
    for result in (ours, sequential):
        assert result["posterior"]["mu"].shape == (2, 300)
        assert set(result["sample_stats"].data_vars) >= {"diverging", "n_steps", "lp"}
        np.testing.assert_allclose(float(result["posterior"]["mu"].mean()), Y.sum() / (Y.size + 1), atol=0.06)
