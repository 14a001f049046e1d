"""`infer(method="svi")`: default settings converge, an unconverged fit warns or raises, and the result is labelled as a
variational fit (no MCMC diagnostics, run time on the result, no factor sites)."""

import warnings

import numpy as np
import pytest
from scipy.stats import lognorm, norm

import sciax
from sciax import _arviz

from ._models import DECAY_TIMES, decay_model

OBS = (1.5 * np.exp(-0.6 * np.asarray(DECAY_TIMES)))[:, None] + 0.05 * np.sin(np.arange(8.0))[:, None]


def grid_posterior() -> dict[str, tuple[float, float]]:
    """Reference: posterior mean and sd of `k` and `y0` of `decay_model` by quadrature on a grid (exact solution)."""
    k = np.linspace(0.4, 0.85, 601)[:, None]
    y0 = np.linspace(1.2, 1.8, 601)[None, :]
    log_post = lognorm.logpdf(k, 0.25, scale=0.5) + lognorm.logpdf(y0, 0.2, scale=1.0)
    for t, y in zip(np.asarray(DECAY_TIMES), OBS[:, 0], strict=True):
        log_post = log_post + norm.logpdf(y, y0 * np.exp(-k * t), 0.05)
    weight = np.exp(log_post - log_post.max())
    weight /= weight.sum()
    out = {}
    for name, x in (("k", k), ("y0", y0)):
        mean = float((weight * x).sum())
        out[name] = (mean, float(np.sqrt((weight * (x - mean) ** 2).sum())))
    return out


@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sciax.prob.infer(decay_model(), OBS, method="svi", num_samples=1000, seed=0)
    return result, [w for w in caught if issubclass(w.category, sciax.prob.ConvergenceWarning)]


def test_default_settings_converge_to_the_posterior(fitted):
    result, convergence_warnings = fitted
    assert not convergence_warnings, convergence_warnings[0].message
    assert result["sample_stats"].attrs["converged"] == 1
    post = result["posterior"]
    reference = grid_posterior()
    for name, draws in (("k", post["k"].values), ("y0", post["y0"].values[..., 0])):
        mean, sd = reference[name]
        # The guide's mean within a fifth of a posterior sd of the exact posterior mean (Monte Carlo error of
        # 1000 draws: 0.03 sd); a mean-field guide's sd is at most the marginal sd, and here (correlation
        # about -0.6 between k and y0) not below half of it.
        assert abs(float(draws.mean()) - mean) < 0.2 * sd, (name, float(draws.mean()), mean, sd)
        assert 0.5 * sd < float(draws.std()) < 1.1 * sd, (name, float(draws.std()), sd)


def test_summary_of_a_variational_fit_has_no_mcmc_diagnostics(fitted, capsys):
    result, _ = fitted
    table = sciax.prob.summary(result)
    assert not {"ess_bulk", "ess_tail", "r_hat", "mcse_mean"} & set(table.columns)
    assert {"mean", "sd"} <= set(table.columns)
    assert "ESS is their number" in table.attrs["diagnostics"]
    np.testing.assert_allclose(table.loc["k", "mean"], float(result["posterior"]["k"].mean()), atol=0.005)
    assert "draws from the fitted guide" in capsys.readouterr().out


def test_run_time_is_on_the_result_and_factor_sites_are_dropped(fitted):
    result, _ = fitted
    assert result.attrs["inference_method"] == "svi"
    assert result.attrs["sampling_time"] > 0
    for name in _arviz.group_names(result):
        group = _arviz.group(result, name)
        assert "sampling_time" not in group.attrs, name
        assert "simulation_failed" not in group.data_vars, name
        assert not any(dim.startswith("simulation_failed") for dim in group.dims), name


def test_a_too_short_run_warns_and_can_raise():
    model = decay_model()
    with pytest.warns(sciax.prob.ConvergenceWarning, match=r"not converged after num_steps=50.*raise num_steps"):
        result = sciax.prob.infer(model, OBS, method="svi", num_steps=50, num_samples=200, posterior_predictive=False)
    assert result["sample_stats"].attrs["converged"] == 0
    with pytest.raises(sciax.prob.ConvergenceError, match=r"num_steps=50.*raise num_steps"):
        sciax.prob.infer(
            model, OBS, method="svi", num_steps=50, num_samples=200, on_nonconvergence="raise", log_likelihood=False
        )


def test_on_nonconvergence_is_checked():
    with pytest.raises(ValueError, match="on_nonconvergence must be 'warn' or 'raise', got 'ignore'"):
        sciax.prob.infer(decay_model(), OBS, method="svi", on_nonconvergence="ignore")


def test_default_settings_converge_on_an_seir_fit():
    # The case that prompted the convergence check: with the old defaults (constant Adam step 0.01,
    # 2,000 steps from the prior median) SVI stopped at beta 1.17, gamma 0.54 with no warning.
    import jax.numpy as jnp
    import numpyro.distributions as dist

    truth = {"beta": 0.6, "sigma": 0.25, "gamma": 0.2}
    ts = jnp.arange(2.0, 61.0, 4.0)
    y0 = jnp.array([0.99, 0.0, 0.01, 0.0])
    exact = sciax.simulate(sciax.ode.seir(), y0, jnp.concatenate([jnp.zeros(1), ts]), truth, rtol=1e-10, atol=1e-12)
    noise = np.exp(0.1 * np.random.default_rng(0).standard_normal((ts.size, 1)))
    model = sciax.prob.SimulationModel(
        sciax.ode.seir(),
        ts,
        priors={"beta": dist.LogNormal(0.0, 1.0), "gamma": dist.LogNormal(jnp.log(0.3), 1.0)},
        params={"sigma": 0.25},
        y0=y0,
        t0=0.0,
        observe=["I"],
        likelihood=sciax.prob.LogNormalLikelihood(0.1),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", sciax.prob.ConvergenceWarning)
        result = sciax.prob.infer(
            model, np.asarray(exact.ys[1:, 2:3]) * noise, method="svi", posterior_predictive=False, log_likelihood=False
        )
    posterior = _arviz.group(result, "posterior")
    for name in ("beta", "gamma"):
        mean, sd = float(posterior[name].mean()), float(posterior[name].std())
        assert abs(mean - truth[name]) < 4 * sd and sd < 0.05 * truth[name], (name, mean, sd)
