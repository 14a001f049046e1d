"""Bad input to sciax.prob: clear errors that name the offending item."""

import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest

import sciax

from ._models import decay_model

LV = sciax.ode.lotka_volterra()


def _lv_model(priors, **kwargs):
    return sciax.prob.SimulationModel(
        LV,
        jnp.arange(5.0),
        priors=priors,
        y0=jnp.array([30.0, 4.0]),
        likelihood=sciax.prob.LogNormalLikelihood(0.25),
        **kwargs,
    )


def test_prior_name_matching_no_parameter():
    priors = {"alpha": dist.Normal(1, 0.5), "beta": dist.Normal(0.05, 0.05), "gamma": dist.Normal(1, 0.5)}
    with pytest.raises(ValueError, match="prior 'alhpa' matches no parameter"):
        _lv_model({**priors, "alhpa": dist.Normal(1, 0.5)}, params={"delta": 0.02})


def test_parameter_with_neither_prior_nor_value():
    with pytest.raises(ValueError, match=r"params\['delta'\].*neither a prior"):
        _lv_model({"alpha": dist.Normal(1, 0.5)}, params={"beta": 0.03, "gamma": 0.8})


def test_reserved_and_non_distribution_priors():
    with pytest.raises(ValueError, match="'sigma' is a reserved site name"):
        _lv_model({"sigma": dist.Normal(1, 0.5)})
    with pytest.raises(TypeError, match=r"priors\['alpha'\] must be a numpyro distribution"):
        _lv_model({"alpha": 1.0})


@pytest.mark.parametrize("shape", [(7, 1), (8,), (8, 2)])
def test_observations_of_wrong_shape(shape):
    with pytest.raises(ValueError, match=r"observations has shape .*expected \(8, 1\)"):
        decay_model()(np.ones(shape))


def test_non_positive_observation_under_lognormal():
    model = decay_model(likelihood=sciax.prob.LogNormalLikelihood(0.1))
    obs = np.ones((8, 1))
    obs[5, 0] = 0.0
    with pytest.raises(ValueError, match=r"must be > 0, but observations\[5, 0\] = 0.0"):
        model(obs)


def test_negative_count_and_infinite_observation():
    model = decay_model(likelihood=sciax.prob.PoissonLikelihood())
    obs = np.ones((8, 1))
    obs[2, 0] = -1.0
    with pytest.raises(ValueError, match=r"non-negative integer counts, but observations\[2, 0\] = -1.0"):
        model(obs)
    obs[2, 0] = np.inf
    with pytest.raises(ValueError, match=r"observations\[2, 0\] is infinite"):
        decay_model()(obs)


def test_observe_and_times_errors():
    with pytest.raises(ValueError, match="observe= names 'wolf'"):
        _lv_model({"alpha": dist.Normal(1, 0.5)}, params={"beta": 0.03, "gamma": 0.8, "delta": 0.02}, observe=["wolf"])
    with pytest.raises(ValueError, match="observe=.*does not index"):
        _lv_model({"alpha": dist.Normal(1, 0.5)}, params={"beta": 0.03, "gamma": 0.8, "delta": 0.02}, observe=[2])
    with pytest.raises(ValueError, match="t0=3.0 is after the first observation time"):
        decay_model(t0=3.0)
    with pytest.raises(ValueError, match="noise|sigma must be a positive"):
        sciax.prob.NormalLikelihood(-1.0)


@pytest.mark.parametrize(
    "bounds, match",
    [
        ({"a": (1.0, 0.0)}, r"bounds\['a'\] has lower 1.0 >= upper 0.0"),
        ({"a": (0.0, 1.0), "b": (2.0, 2.0)}, r"bounds\['b'\] has lower 2.0 >= upper 2.0"),
        ({"a": (0.0, np.inf)}, r"bounds\['a'\].*must be finite"),
        ({"a": 3.0}, r"bounds\['a'\] must be a pair"),
    ],
)
def test_bad_sensitivity_bounds(bounds, match):
    for analysis in (sciax.prob.sobol_indices, sciax.prob.morris):
        with pytest.raises((ValueError, TypeError), match=match):
            analysis(lambda p: p["a"], bounds, 8 if analysis is sciax.prob.sobol_indices else 4)


def test_sobol_sample_size_and_failing_model():
    with pytest.raises(ValueError, match="power of 2"):
        sciax.prob.sobol_indices(lambda p: p["a"], {"a": (0.0, 1.0)}, 1000)
    with pytest.raises(ValueError, match="non-finite values for .* parameter samples"):
        sciax.prob.sobol_indices(lambda p: jnp.log(p["a"] - 0.5), {"a": (0.0, 1.0)}, 64)


def test_local_sensitivity_errors():
    p = {"alpha": 0.55, "beta": 0.028, "gamma": 0.8, "delta": 0.024}
    with pytest.raises(ValueError, match="wrt names 'alhpa'"):
        sciax.prob.local_sensitivity(LV, jnp.array([30.0, 4.0]), jnp.arange(3.0), p, wrt=["alhpa"])
