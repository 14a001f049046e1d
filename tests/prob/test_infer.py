"""infer: labelled ArviZ output from NUTS and SVI, and the summary table."""

import jax.numpy as jnp
import numpy as np
from numpyro.infer.autoguide import AutoMultivariateNormal

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
