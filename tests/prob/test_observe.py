"""`observe=` as a function: labels of its output, and the incidence pattern (differences of a cumulative state)."""

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro.infer.util import log_density
from scipy.integrate import solve_ivp
from scipy.stats import poisson

import sciax

from ._models import DECAY, DECAY_TIMES, decay_model

# A small SIR outbreak in a population of 1000, observed as weekly new infections.
TRUTH = {"beta": 0.6, "gamma": 0.2}
SIR_Y0 = jnp.array([990.0, 10.0, 0.0, 0.0])  # S, I, R, C (cumulative infections, starts at 0)
WEEKS = jnp.arange(1.0, 8.0) * 7.0  # days


def weekly_incidence(ys):
    """New infections per interval: C(t_k) - C(t_{k-1}), with C(t0) = 0 at t0 = 0."""
    return jnp.diff(ys[:, 3], prepend=0.0)[:, None]


def incidence_model() -> sciax.prob.SimulationModel:
    return sciax.prob.SimulationModel(
        sciax.ode.sir(incidence=True),
        WEEKS,
        priors={"beta": dist.LogNormal(jnp.log(0.5), 0.5), "gamma": dist.LogNormal(jnp.log(0.25), 0.5)},
        y0=SIR_Y0,
        likelihood=sciax.prob.PoissonLikelihood(),
        observe=weekly_incidence,
        observed_names=["infections"],
        t0=0.0,
        rtol=1e-10,
        atol=1e-8,
    )


def scipy_weekly_incidence(beta, gamma):
    """Reference: SIR by scipy; new infections in an interval = the fall of S over it."""

    def rhs(t, y):
        s, i, r = y
        infection = beta * s * i / (s + i + r)
        return [-infection, infection - gamma * i, gamma * i]

    times = np.concatenate([[0.0], np.asarray(WEEKS)])
    sol = solve_ivp(rhs, (0.0, times[-1]), np.asarray(SIR_Y0[:3]), t_eval=times, rtol=1e-12, atol=1e-10)
    return -np.diff(sol.y[0])


def test_a_function_output_is_not_labelled_like_the_initial_state():
    model = decay_model(observe=lambda ys: 2.0 * ys)
    assert model.observed_names == ("observed_0",)
    assert model.site_dims()[1]["observed"] == ["observed_0"]
    with pytest.raises(ValueError, match=r"observed components \('observed_0',\)"):
        model.check_observations(jnp.zeros((len(DECAY_TIMES), 2)))
    named = decay_model(observe=lambda ys: 2.0 * ys, observed_names=["twice"])
    assert named.observed_names == ("twice",)


def test_indices_into_an_unnamed_state_are_labelled_by_index():
    unnamed = sciax.ode.ODE(DECAY.vector_field)
    assert unnamed.labels().names is None
    model = sciax.prob.SimulationModel(
        unnamed,
        DECAY_TIMES,
        priors={"k": dist.LogNormal(0.0, 0.3)},
        y0=jnp.array([1.0]),
        likelihood=sciax.prob.NormalLikelihood(0.1),
        observe=[0],
    )
    assert model.observed_names == ("state_0",)


@pytest.mark.parametrize("names", [["a", "b"], ["a", "a"], [3]])
def test_observed_names_must_be_one_distinct_string_per_component(names):
    with pytest.raises(ValueError, match="observed_names must be 1 distinct strings"):
        decay_model(observe=lambda ys: 2.0 * ys, observed_names=names)


def test_incidence_prediction_and_likelihood_match_scipy():
    model = incidence_model()
    assert model.site_dims()[1]["observed"] == ["infections"]
    expected = scipy_weekly_incidence(**TRUTH)
    prediction, success = model.predict(TRUTH, SIR_Y0)
    assert bool(success)
    np.testing.assert_allclose(np.asarray(prediction[:, 0]), expected, rtol=1e-7)
    # Synthetic counts at the truth, then the model's log likelihood of them against scipy's Poisson pmf.
    counts = np.random.default_rng(0).poisson(expected)[:, None].astype(float)
    substituted = numpyro.handlers.substitute(model, data=TRUTH)
    _, trace = log_density(substituted, (jnp.asarray(counts),), {}, {})
    loglik = float(trace["obs"]["fn"].log_prob(trace["obs"]["value"]).sum())
    np.testing.assert_allclose(loglik, poisson.logpmf(counts[:, 0], expected).sum(), rtol=1e-9)
