"""Vectorised NUTS chains as one compiled program: initialisation, warmup, sampling, constraining.

NumPyro's `MCMC` driver initialises vectorised chains eagerly: `vmap` of the
kernel's init runs op by op, and every transformed form of the model it meets
(the potential, its gradient, batched over chains) is compiled on its own
before the sampling loop is compiled. For a model that wraps an ODE solve each
of those compilations costs seconds (docs/benchmarks.md, "Inference and
sensitivity").

Here NumPyro's own NUTS kernels (`numpyro.infer.hmc.hmc`: the same tree
building, dual-averaging step size and windowed mass-matrix adaptation as
`MCMC(NUTS(...))`) run inside a single `jax.jit`: the kernel's init vmapped
over chains, then a `lax.scan` over warmup + samples of the sample kernel vmapped
over chains, and the draws are mapped to the constrained space (with
deterministic sites) in the same program. Chains start at given unconstrained
points (`sciax.prob.map_initial_params`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray, PyTree
from numpyro.infer.hmc import hmc
from numpyro.infer.util import constrain_fn, potential_energy

# HMC state field -> ArviZ's sample_stats name (as `infer` reports them).
STATS = {
    "diverging": "diverging",
    "num_steps": "n_steps",
    "accept_prob": "acceptance_rate",
    "energy": "energy",
    "potential_energy": "lp",
}


def lower_nuts_program(
    model: Callable,
    args: tuple,
    kwargs: dict,
    template: dict[str, Array],
    key: PRNGKeyArray,
    num_chains: int,
    *,
    num_warmup: int,
    num_samples: int,
    dense_mass: bool | list,
    target_accept_prob: float,
    max_tree_depth: int,
) -> jax.stages.Lowered:
    """Trace and lower the program for `num_chains` chains; `.compile()` it, then call it with `run_nuts_program`.

    `template` holds one chain's unconstrained latent values (shapes and dtypes only
    matter), so the program can compile while the starting points are still being
    sought (`infer` overlaps the two). With `dense_mass` a bool the program takes
    the initial inverse mass matrix as an argument (one block over all sites: a
    `(d, d)` matrix, or the `(d,)` diagonal); with a list of blocks, NumPyro's
    identity start.
    """
    metric = None
    if isinstance(dense_mass, bool):
        size = sum(int(np.prod(jnp.shape(v))) for v in template.values())
        dtype = jnp.result_type(*template.values())
        metric = jax.ShapeDtypeStruct((size, size) if dense_mass else (size,), dtype)
        # NumPyro's NUTS turns `True` into one block over all sites, sorted by name.
        dense_mass = [tuple(sorted(template))] if dense_mass else []
    program = _program(model, args, kwargs, num_warmup, num_samples, dense_mass, target_accept_prob, max_tree_depth)
    starts = {k: jax.ShapeDtypeStruct((num_chains,) + jnp.shape(v), jnp.result_type(v)) for k, v in template.items()}
    return program.lower(starts, jax.random.split(key, num_chains), metric)


def run_nuts_program(
    compiled: Callable, init_params: PyTree, key: PRNGKeyArray, inverse_mass: Array | None = None
) -> tuple[dict, dict]:
    """Run a compiled program from `init_params` (unconstrained, leading axis = chains).

    `inverse_mass`: the initial inverse mass matrix of a program lowered with a bool
    `dense_mass` (`None`: the identity).

    Returns `(posterior, stats)`: constrained latent and deterministic sites with
    leading axes `(chain, draw)`, and the sample statistics named as in `STATS`
    (`lp` is the log density, i.e. minus NumPyro's potential energy).
    """
    num_chains = int(jax.tree_util.tree_leaves(init_params)[0].shape[0])
    metric = compiled.in_avals[0][2]
    if metric is not None and inverse_mass is None:
        shape, dtype = metric.shape, metric.dtype
        inverse_mass = jnp.eye(shape[0], dtype=dtype) if len(shape) == 2 else jnp.ones(shape, dtype)
    posterior, stats = compiled(init_params, jax.random.split(key, num_chains), inverse_mass)
    posterior = {k: np.asarray(v) for k, v in posterior.items()}
    stats = {STATS[k]: np.asarray(v) for k, v in stats.items()}
    stats["lp"] = -stats["lp"]
    return posterior, stats


def _program(model, args, kwargs, num_warmup, num_samples, dense_mass, target_accept_prob, max_tree_depth):
    # The data are closed over (constants), as NumPyro's MCMC does without jit_model_args:
    # models may use non-array arguments statically.
    @jax.jit
    def program(init_params, keys, inverse_mass):
        potential = partial(potential_energy, model, args, kwargs)
        init_kernel, sample_kernel = hmc(potential_fn=potential, algo="NUTS")
        blocks = None if inverse_mass is None else {tuple(sorted(init_params)): inverse_mass}

        def init(z0, key):
            return init_kernel(
                z0,
                num_warmup,
                inverse_mass_matrix=blocks,
                dense_mass=dense_mass,
                target_accept_prob=target_accept_prob,
                max_tree_depth=max_tree_depth,
                rng_key=key,
            )

        def one_draw(states, _):
            states = jax.vmap(sample_kernel)(states)
            return states, (states.z, {name: getattr(states, name) for name in STATS})

        # vmap inside the scan, not around it: batching a scan re-batches its body until the
        # carry's batch pattern settles, and this body (tree building around the solve) is
        # large: tracing took ~1.5x longer the other way round.
        _, trace = jax.lax.scan(one_draw, jax.vmap(init)(init_params, keys), None, length=num_warmup + num_samples)
        z, stats = jax.tree_util.tree_map(lambda x: jnp.swapaxes(x[num_warmup:], 0, 1), trace)
        constrain = jax.vmap(partial(constrain_fn, model, args, kwargs, return_deterministic=True))
        draws = jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), z)  # (chain * draw, ...)
        posterior = jax.tree_util.tree_map(
            lambda x: x.reshape((len(keys), num_samples) + x.shape[1:]), constrain(draws)
        )
        return posterior, stats

    return program


__all__ = ["lower_nuts_program", "run_nuts_program", "STATS"]
