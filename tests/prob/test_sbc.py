"""Simulation-based calibration (Talts et al. 2018) of SimulationModel + NUTS on a small ODE.

For data simulated from prior draws, the rank of each true parameter among its
posterior draws is uniform when the log density is right. All replicates run as
one vmapped NUTS program through numpyro's functional `hmc` interface.
"""

import jax
import numpy as np
from numpyro.infer import Predictive
from numpyro.infer.hmc import hmc
from numpyro.infer.util import initialize_model
from scipy import stats

import sciax

from ._models import decay_model

NUM_REPLICATES, NUM_WARMUP, NUM_DRAWS, THIN, NUM_BINS = 60, 100, 59, 1, 6
# The replicates share one vmapped program, which runs as long as the deepest tree among
# them; a 2-parameter posterior needs no more than 2^4 leapfrog steps per draw.
MAX_TREE_DEPTH = 4


def test_rank_statistics_are_uniform():
    # SBC checks the inference pipeline against its own generative model, so the solver's
    # accuracy does not matter; fixed RK4 steps keep 60 vmapped NUTS runs cheap.
    model = decay_model(method=sciax.ode.RK4(), dt0=0.125)
    key_prior, key_init, key_run = jax.random.split(jax.random.PRNGKey(2024), 3)
    truth = Predictive(model, num_samples=NUM_REPLICATES)(key_prior)
    datasets = truth["obs"]

    init, potential_fn_gen, postprocess_gen, _ = initialize_model(
        key_init, model, model_args=(datasets[0],), dynamic_args=True
    )
    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_fn_gen, algo="NUTS")

    def posterior_draws(key, data):
        state = init_kernel(init.z, NUM_WARMUP, max_tree_depth=MAX_TREE_DEPTH, model_args=(data,), rng_key=key)

        def step(state, _):
            state = sample_kernel(state, model_args=(data,))
            return state, state.z

        _, zs = jax.lax.scan(step, state, None, length=NUM_WARMUP + NUM_DRAWS)
        zs = jax.tree_util.tree_map(lambda z: z[NUM_WARMUP::THIN], zs)
        return jax.vmap(postprocess_gen(data))(zs)

    keys = jax.random.split(key_run, NUM_REPLICATES)
    draws = jax.jit(jax.vmap(posterior_draws))(keys, datasets)

    num_kept = NUM_DRAWS // THIN
    for name in ("k", "y0"):
        true = np.asarray(truth[name]).reshape(NUM_REPLICATES, 1)
        post = np.asarray(draws[name]).reshape(NUM_REPLICATES, num_kept)
        ranks = (post < true).sum(axis=1)  # 0 .. num_kept
        counts = np.bincount(ranks * NUM_BINS // (num_kept + 1), minlength=NUM_BINS)
        p_value = stats.chisquare(counts).pvalue
        assert p_value > 0.01, (name, counts, p_value)
