"""infer: labelled ArviZ output from NUTS and SVI, and the summary table."""

import jax.numpy as jnp
import numpy as np
from numpyro.infer.autoguide import AutoMultivariateNormal

import sciax

from ._models import DECAY_TIMES, decay_model

OBS = (1.5 * np.exp(-0.6 * np.asarray(DECAY_TIMES)))[:, None] + 0.05 * np.sin(np.arange(8.0))[:, None]


def test_nuts_result_groups_dims_and_summary(capsys):
    import sciax

    result = sciax.prob.infer(decay_model(), OBS, num_warmup=100, num_samples=100, num_chains=2, seed=3)
    for group in ("posterior", "sample_stats", "log_likelihood", "observed_data", "posterior_predictive"):
        assert group in result  # InferenceData (arviz 0.x) and DataTree (arviz >= 1) alike
    post = result["posterior"]
    assert post["k"].dims == ("chain", "draw")
    assert post["prediction"].dims == ("chain", "draw", "time", "observed")
    np.testing.assert_allclose(post["time"].values, DECAY_TIMES)
    assert result["posterior_predictive"]["obs"].shape == (2, 100, 8, 1)
    assert result["sample_stats"]["diverging"].dtype == bool
    table = sciax.prob.summary(result)
    assert {"r_hat", "ess_bulk"} <= set(table.columns)
    assert "prediction" not in " ".join(table.index)
    assert "divergent transitions" in capsys.readouterr().out
    np.testing.assert_allclose(float(post["k"].mean()), 0.6, atol=0.1)


def test_svi_with_an_autoguide():
    import sciax

    result = sciax.prob.infer(
        decay_model(),
        jnp.asarray(OBS),
        method="svi",
        guide=AutoMultivariateNormal,
        num_steps=1500,
        learning_rate=0.02,
        num_samples=200,
        seed=0,
    )
    assert result["posterior"]["k"].shape == (1, 200)
    assert result["sample_stats"]["loss"].dims == ("step",)
    np.testing.assert_allclose(float(result["posterior"]["k"].mean()), 0.6, atol=0.1)


def test_no_future_warning_from_arviz_on_infer_and_summary(tmp_path):
    """ArviZ 0.x announces its refactor with a FutureWarning on import (once a day, by a stamp in the user's cache);
    sciax imports it without that notice, and its own calls raise none. A fresh cache forces the notice."""
    import os
    import subprocess
    import sys

    script = (
        "import jax, numpyro, numpyro.distributions as dist, sciax\n"
        "def model(y=None):\n"
        "    mu = numpyro.sample('mu', dist.Normal(0.0, 1.0))\n"
        "    numpyro.sample('y', dist.Normal(mu, 1.0), obs=y)\n"
        "y = jax.numpy.array([0.3, -0.1, 0.5])\n"
        "r = sciax.prob.infer(model, y, num_warmup=20, num_samples=20, num_chains=2)\n"
        "sciax.prob.summary(r, print_table=False)\n"
        "r = sciax.prob.infer(model, y, method='svi', num_steps=200, num_samples=20, on_nonconvergence='warn')\n"
        "sciax.prob.summary(r, print_table=False)\n"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, "-W", "error::FutureWarning", "-c", script], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FutureWarning" not in proc.stderr


def test_default_mass_matrix_is_dense_for_small_simulation_models_only():
    import numpyro
    import numpyro.distributions as dist

    from sciax.prob._infer import DENSE_MASS_MAX_DIM, default_dense_mass

    # decay_model has two latent scalars (k and the 1-vector y0), plus none from the likelihood.
    assert default_dense_mass(decay_model(), (OBS,), {})

    def plain(obs=None):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        numpyro.sample("obs", dist.Normal(mu, 1.0), obs=obs)

    assert not default_dense_mass(plain, (), {"obs": 0.5})  # NumPyro's default for plain models

    n = DENSE_MASS_MAX_DIM
    wide = sciax.prob.SimulationModel(
        sciax.ode.ODE(lambda t, y, p: -p["k"] * y),
        DECAY_TIMES,
        priors={"k": dist.LogNormal(0.0, 0.25)},
        y0=dist.LogNormal(0.0, 0.2).expand([n]).to_event(1),
        likelihood=sciax.prob.NormalLikelihood(0.05),
        t0=0.0,
        observe=list(range(n)),
    )
    assert not default_dense_mass(wide, (jnp.ones((OBS.shape[0], n)),), {})  # n + 1 latent dimensions
