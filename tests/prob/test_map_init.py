"""map_initial_params: chain starts around the best optimum of the log density."""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
import scipy.optimize
from jax.flatten_util import ravel_pytree
from numpyro.infer.util import potential_energy

import sciax

from ._models import DECAY_TIMES, decay_model

OBS = (1.5 * np.exp(-0.6 * np.asarray(DECAY_TIMES)))[:, None] + 0.05 * np.sin(np.arange(8.0))[:, None]


def _potential(model):
    return jax.jit(lambda z: potential_energy(model, (OBS,), {}, z))


def test_starts_are_jittered_copies_of_the_mode():
    model = decay_model()
    starts = sciax.prob.map_initial_params(model, (OBS,), {}, jax.random.PRNGKey(0), 4, jitter=0.05)
    assert set(starts) == {"k", "y0"}
    assert starts["k"].shape == (4,) and starts["y0"].shape == (4, 1)
    flat = jax.vmap(lambda z: ravel_pytree(z)[0])(starts)
    assert float(jnp.max(flat.max(0) - flat.min(0))) <= 0.1  # all within +-jitter of one centre
    # Independent reference: Nelder-Mead (derivative-free) on the same potential from the prior median.
    potential = _potential(model)
    unravel = ravel_pytree(jax.tree_util.tree_map(lambda a: a[0], starts))[1]
    reference = scipy.optimize.minimize(
        lambda x: float(potential(unravel(jnp.asarray(x)))),
        np.array([np.log(0.5), 0.0]),
        method="Nelder-Mead",
        options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000},
    )
    np.testing.assert_allclose(np.asarray(flat.mean(0)), reference.x, atol=0.05)
    assert float(potential(unravel(flat.mean(0)))) < reference.fun + 0.5


def test_infer_starts_at_the_mode_by_default_and_accepts_numpyro_strategies():
    model = decay_model()
    result = sciax.prob.infer(
        model,
        OBS,
        num_warmup=50,
        num_samples=50,
        num_chains=2,
        seed=1,
        log_likelihood=False,
        posterior_predictive=False,
    )
    np.testing.assert_allclose(float(result["posterior"]["k"].mean()), 0.6, atol=0.1)
    dispersed = sciax.prob.infer(
        model,
        OBS,
        num_warmup=50,
        num_samples=50,
        num_chains=2,
        seed=1,
        init_strategy=numpyro.infer.init_to_median(),
        log_likelihood=False,
        posterior_predictive=False,
    )
    np.testing.assert_allclose(float(dispersed["posterior"]["k"].mean()), 0.6, atol=0.1)


def test_bad_init_strategy():
    with pytest.raises(ValueError, match=r"init_strategy must be 'map' or a numpyro init strategy, got 'mode'"):
        sciax.prob.infer(decay_model(), OBS, num_warmup=1, num_samples=1, init_strategy="mode")
    with pytest.raises(TypeError, match=r"init_strategy must be 'map' or a numpyro init strategy, got 3"):
        sciax.prob.infer(decay_model(), OBS, num_warmup=1, num_samples=1, init_strategy=3)
    with pytest.raises(ValueError, match=r"init_metric must be 'laplace' or 'identity', got 'unit'"):
        sciax.prob.infer(decay_model(), OBS, num_warmup=1, num_samples=1, init_metric="unit")
    with pytest.raises(ValueError, match=r"init_metric='laplace' needs init_strategy='map'.*init_to_median"):
        sciax.prob.infer(
            decay_model(),
            OBS,
            num_warmup=1,
            num_samples=1,
            init_metric="laplace",
            init_strategy=numpyro.infer.init_to_median(),
        )
    with pytest.raises(ValueError, match=r"init_metric='laplace' needs.*dense_mass=\[\('k',\)\]"):
        sciax.prob.infer(decay_model(), OBS, num_warmup=1, num_samples=1, init_metric="laplace", dense_mass=[("k",)])
    with pytest.raises(ValueError, match=r"method='svi' has none"):
        sciax.prob.infer(decay_model(), OBS, method="svi", num_steps=1, init_metric="laplace")


def test_discrete_latent_site_is_refused():
    def mixture():
        numpyro.sample("z", dist.Bernoulli(0.5))
        numpyro.sample("x", dist.Normal(0.0, 1.0))

    with pytest.raises(ValueError, match=r"latent site 'z' is discrete"):
        sciax.prob.map_initial_params(mixture, (), {}, jax.random.PRNGKey(0), 2)


X = np.linspace(-1.0, 2.0, 7)
Y_LINE = 0.3 + 1.2 * X + 0.1 * np.cos(3 * X)


def _line(flat_site: bool = False):
    a = numpyro.sample("a", dist.Normal(0.0, 2.0))
    b = numpyro.sample("b", dist.Normal(0.0, 2.0))
    if flat_site:
        numpyro.sample("c", dist.Normal(0.0, 1e200))  # curvature 1e-400: zero in float64
    numpyro.sample("y", dist.Normal(a + b * X, 0.5), obs=Y_LINE)


def test_laplace_metric_is_the_gaussian_posterior_covariance():
    # Conjugate linear regression: the posterior is Gaussian with precision X'X / 0.5^2 + I / 2^2 (sites a, b).
    design = np.stack([np.ones_like(X), X], axis=1)
    precision = design.T @ design / 0.25 + np.eye(2) / 4.0
    covariance = np.linalg.inv(precision)
    mean = covariance @ (design.T @ Y_LINE / 0.25)
    key = jax.random.PRNGKey(0)
    starts, dense = sciax.prob.map_starts_and_metric(_line, (), {}, key, 3, dense=True, jitter=1e-3)
    np.testing.assert_allclose(dense, covariance, rtol=1e-7)
    np.testing.assert_allclose(np.stack([starts["a"], starts["b"]], 1), np.tile(mean, (3, 1)), atol=2e-3)
    _, diagonal = sciax.prob.map_starts_and_metric(_line, (), {}, key, 3, dense=False)
    np.testing.assert_allclose(diagonal, np.diag(covariance), rtol=1e-7)
    # A direction without curvature has no Laplace approximation: NUTS keeps NumPyro's identity start.
    _, none = sciax.prob.map_starts_and_metric(lambda: _line(True), (), {}, key, 3, dense=True)
    assert none is None


@pytest.mark.parametrize("chain_method", ["vectorized", "sequential"])
def test_infer_from_the_laplace_metric_samples_the_gaussian_posterior(chain_method):
    design = np.stack([np.ones_like(X), X], axis=1)
    covariance = np.linalg.inv(design.T @ design / 0.25 + np.eye(2) / 4.0)
    result = sciax.prob.infer(
        _line,
        num_warmup=300,
        num_samples=1000,
        num_chains=2,
        chain_method=chain_method,
        dense_mass=True,
        init_strategy="map",  # a plain NumPyro model starts from init_to_uniform by default
        init_metric="laplace",
        seed=2,
    )
    post = result["posterior"]
    draws = np.stack([np.ravel(post["a"]), np.ravel(post["b"])])
    # 2,000 draws: the sample covariance's entries are within ~3-4 % of the exact ones (relative to the scale).
    scale = np.sqrt(np.outer(np.diag(covariance), np.diag(covariance)))
    np.testing.assert_allclose(np.cov(draws) / scale, covariance / scale, atol=0.12)
