"""SimulationModel: a NumPyro model whose log density is -inf (never NaN) where the simulation fails."""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro.infer import Predictive
from numpyro.infer.util import log_density

import sciax

from ._models import DECAY_TIMES, decay_model

# y' = k y^2 blows up at t = 1 / (k y0): with y0 = 1 and observations up to t = 2, k > 0.5 fails.
BLOWUP = sciax.ode.ODE(lambda t, y, p: p["k"] * y**2, names=("y",))


def _blowup_model(**options):
    return sciax.prob.SimulationModel(
        BLOWUP,
        jnp.linspace(0.5, 2.0, 4),
        priors={"k": dist.Uniform(0.0, 2.0)},
        y0=jnp.array([1.0]),
        likelihood=sciax.prob.NormalLikelihood(0.1),
        t0=0.0,
        **options,
    )


def test_failed_simulation_gives_minus_inf_not_nan_or_crash():
    model = _blowup_model(max_steps=200)
    obs = jnp.ones((4, 1))
    ok, _ = log_density(model, (obs,), {}, {"k": 0.1})
    failed, _ = log_density(model, (obs,), {}, {"k": 1.5})
    assert np.isfinite(float(ok))
    assert float(failed) == -np.inf

    grad = jax.grad(lambda k: log_density(model, (obs,), {}, {"k": k})[0])(1.5)
    assert not np.isnan(float(grad))


def test_failed_draws_are_rejected_by_nuts():
    # Data generated with k = 0.2; the prior reaches k = 2, where every solve fails.
    model = _blowup_model(max_steps=100)  # failing solves stop early instead of running 4096 steps
    ts = np.linspace(0.5, 2.0, 4)
    obs = (1.0 / (1.0 - 0.2 * ts))[:, None]
    result = sciax.prob.infer(model, obs, num_warmup=100, num_samples=100, num_chains=2, seed=1)
    k = result.posterior["k"].values
    assert np.all(np.isfinite(k)) and np.all(k < 0.5)
    np.testing.assert_allclose(k.mean(), 0.2, atol=0.03)


def test_prior_predictive_and_sites():
    model = decay_model()
    draws = Predictive(model, num_samples=7)(jax.random.PRNGKey(0))
    assert draws["obs"].shape == (7, 8, 1)
    assert draws["prediction"].shape == (7, 8, 1)
    assert draws["y0"].shape == (7, 1)
    expected = draws["y0"][:, None, :] * np.exp(-draws["k"][:, None, None] * np.asarray(DECAY_TIMES)[None, :, None])
    np.testing.assert_allclose(draws["prediction"], expected, rtol=1e-5)


def test_nan_observations_are_masked():
    model = decay_model()
    obs = np.exp(-0.5 * np.asarray(DECAY_TIMES))[:, None]
    gappy = obs.copy()
    gappy[3] = np.nan
    values = {"k": 0.5, "y0": jnp.array([1.0])}
    full, _ = log_density(model, (obs,), {}, values)
    masked, _ = log_density(model, (gappy,), {}, values)
    one = dist.Normal(obs[3, 0], 0.05).log_prob(obs[3, 0])
    np.testing.assert_allclose(float(masked), float(full - one), rtol=1e-6)


def test_model_composes_with_numpyro_handlers():
    model = decay_model()
    conditioned = numpyro.handlers.condition(model, {"k": 0.3, "y0": jnp.array([2.0])})
    trace = numpyro.handlers.trace(numpyro.handlers.seed(conditioned, 0)).get_trace()
    np.testing.assert_allclose(
        trace["prediction"]["value"][:, 0], 2.0 * np.exp(-0.3 * np.asarray(DECAY_TIMES)), rtol=1e-5
    )


@pytest.mark.parametrize(
    "likelihood, data",
    [
        (sciax.prob.PoissonLikelihood(), np.array([[3.0], [1.0]])),
        (sciax.prob.NegativeBinomialLikelihood(dist.Exponential(1.0)), np.array([[3.0], [1.0]])),
        (sciax.prob.LogNormalLikelihood(0.2), np.array([[3.0], [1.0]])),
    ],
)
def test_count_and_lognormal_likelihoods_score_data(likelihood, data):
    model = sciax.prob.SimulationModel(
        sciax.ode.ODE(lambda t, y, p: -p["k"] * y, names=("y",)),
        jnp.array([1.0, 2.0]),
        priors={"k": dist.LogNormal(0.0, 0.5)},
        y0=jnp.array([5.0]),
        likelihood=likelihood,
        t0=0.0,
    )
    trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(data)
    assert np.isfinite(float(trace["obs"]["fn"].log_prob(trace["obs"]["value"]).sum()))
