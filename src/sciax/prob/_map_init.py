"""Chain starting points near the posterior mode, found by multi-start quasi-Newton optimisation.

NUTS chains that start from random points of the prior (NumPyro's and Stan's
default: uniform on (-2, 2) in unconstrained space) spend their early warmup
far from the data. For ODE models that region is rugged — periodic orbits of
the wrong period are local modes, and some draws make the solve stiff — and a
chain that reaches the typical set late contaminates its mass-matrix window and
ends warmup with a tiny step size and ~100 leapfrog steps per draw (how often,
and what it costs, in docs/benchmarks.md, "Inference and sensitivity").
Starting every chain next to the best of several local optima of the log
density removes that transient; this is the role of Pathfinder initialisation
in Stan (Zhang et al., JMLR 23 (2022) 306), done here with scipy's L-BFGS-B
from `num_starts` prior-range points on one compiled value-and-gradient of the
log density.

Chains still start at distinct, jittered points, so r_hat keeps some power to
detect chains that separate; a genuinely multimodal posterior needs dispersed
starts instead (`init_strategy=numpyro.infer.init_to_uniform`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import scipy.optimize
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, PRNGKeyArray, PyTree
from numpyro.distributions.transforms import biject_to
from numpyro.infer.util import potential_energy

#: Radius of the random starts in unconstrained space (NumPyro's and Stan's default).
START_RADIUS = 2.0


def map_initial_params(
    model: Callable,
    args: tuple,
    kwargs: dict,
    key: PRNGKeyArray,
    num_chains: int,
    *,
    num_starts: int = 16,
    max_iterations: int = 200,
    jitter: float = 0.1,
) -> PyTree[Array]:
    """Unconstrained starting points, leading axis `num_chains`, around the best local optimum.

    `num_starts` points uniform in `(-2, 2)` per unconstrained coordinate (as
    NumPyro's `init_to_uniform` draws them) are each optimised by scipy's
    L-BFGS-B (at most `max_iterations` iterations) on one compiled
    value-and-gradient of the potential energy (negative log density); the optimum
    with the lowest finite potential is the centre, and each chain starts at the
    centre plus uniform noise in `(-jitter, jitter)` per coordinate. Latent sites
    must be continuous.

    Cost: at most `num_starts * max_iterations` (here 3,200, typically ~1,600)
    log-density gradients, against ~56,000 for 4 chains x 2,000 NUTS iterations
    at 7 leapfrog steps each.
    """
    starts, _ = _map_starts(model, args, kwargs, key, num_chains, num_starts, max_iterations, jitter, metric=None)
    return starts


def map_starts_and_metric(
    model: Callable,
    args: tuple,
    kwargs: dict,
    key: PRNGKeyArray,
    num_chains: int,
    *,
    dense: bool,
    num_starts: int = 16,
    max_iterations: int = 200,
    jitter: float = 0.1,
) -> tuple[PyTree[Array], np.ndarray | None]:
    """`map_initial_params`' starts and the Laplace approximation's inverse mass matrix at their centre.

    The inverse mass matrix is the inverse of the potential's Hessian at the best
    optimum (the posterior covariance of the Laplace approximation, unconstrained
    space, `ravel_pytree`'s layout: sites sorted by name), or its diagonal when
    `dense=False`; `None` where the Hessian is not finite and positive definite
    (NUTS then starts from NumPyro's identity). The Hessian is central differences
    of the compiled gradient: `2 d` more gradients for `d` latent dimensions.

    Why: NUTS adapts its mass matrix only after its first warmup window; until then it
    explores the unit metric, and an ODE posterior narrowed by plenty of data
    (standard deviations ~3e-2 in log rates, strongly correlated) needs a tiny step
    size and trees of hundreds of leapfrog steps there. Starting from the local
    covariance makes those early trees as short as the adapted ones.
    """
    return _map_starts(
        model, args, kwargs, key, num_chains, num_starts, max_iterations, jitter, metric="dense" if dense else "diag"
    )


def _map_starts(model, args, kwargs, key, num_chains, num_starts, max_iterations, jitter, metric):
    # Random numbers by NumPy, seeded from the key: jax's eager random ops would each compile.
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).tolist())
    template = unconstrained_template(model, args, kwargs)
    flat_template, unravel = ravel_pytree(template)
    dtype = flat_template.dtype
    value_and_grad = jax.jit(jax.value_and_grad(lambda flat: potential_energy(model, args, kwargs, unravel(flat))))

    def objective(x):
        value, grad = value_and_grad(jnp.asarray(x, dtype))
        value, grad = float(value), np.asarray(grad, dtype=np.float64)
        if not (np.isfinite(value) and np.all(np.isfinite(grad))):
            return np.inf, np.zeros_like(grad)  # outside the support: the line search backs off
        return value, grad

    starts = rng.uniform(-START_RADIUS, START_RADIUS, (num_starts, flat_template.size))
    best_value, centre = np.inf, starts[0]
    for start in starts:
        if not np.isfinite(objective(start)[0]):
            continue
        result = scipy.optimize.minimize(
            objective, start, jac=True, method="L-BFGS-B", options={"maxiter": max_iterations}
        )
        if np.isfinite(result.fun) and result.fun < best_value:
            best_value, centre = result.fun, result.x
    chains = centre + rng.uniform(-jitter, jitter, (num_chains, flat_template.size))
    inverse_mass = None
    if metric is not None and np.isfinite(best_value):
        gradient = lambda x: np.asarray(value_and_grad(jnp.asarray(x, dtype))[1], np.float64)  # noqa: E731
        inverse_mass = _laplace_inverse_mass(gradient, centre, dtype, dense=metric == "dense")
    return _unravel_rows(template, chains.astype(dtype)), inverse_mass


def _laplace_inverse_mass(grad, centre: np.ndarray, dtype, dense: bool) -> np.ndarray | None:
    """Inverse of the central-difference Hessian of the potential at `centre`; `None` unless positive definite."""
    # Step ~ eps^(1/3): balances the truncation and round-off errors of a central difference.
    steps = np.finfo(dtype).eps ** (1 / 3) * np.maximum(1.0, np.abs(centre))
    columns = []
    for i, h in enumerate(steps):
        shift = np.zeros_like(centre)
        shift[i] = h
        columns.append((grad(centre + shift) - grad(centre - shift)) / (2 * h))
    hessian = np.asarray(columns)
    hessian = 0.5 * (hessian + hessian.T)
    if not np.all(np.isfinite(hessian)):
        return None
    eigenvalues, vectors = np.linalg.eigh(hessian)
    if eigenvalues[0] <= 0:
        return None
    covariance = (vectors / eigenvalues) @ vectors.T
    return (covariance if dense else np.diag(covariance)).astype(dtype)


def _unravel_rows(template: dict, rows: np.ndarray) -> dict[str, Array]:
    """Rows of flat vectors (`ravel_pytree`'s layout of `template`) as a dict of arrays with a leading row axis."""
    leaves, treedef = jax.tree_util.tree_flatten(template)
    out, start = [], 0
    for leaf in leaves:
        out.append(jnp.asarray(rows[:, start : start + leaf.size].reshape((rows.shape[0],) + leaf.shape)))
        start += leaf.size
    return jax.tree_util.tree_unflatten(treedef, out)


def unconstrained_template(model: Callable, args: tuple, kwargs: dict) -> dict[str, jax.ShapeDtypeStruct]:
    """Zeros shaped like the unconstrained value of every latent sample site (traced abstractly: no solve runs)."""

    def latent_values():
        trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(*args, **kwargs)
        values = {}
        for name, site in trace.items():
            if site["type"] != "sample" or site["is_observed"]:
                continue
            if site["fn"].support.is_discrete:
                raise ValueError(f"map_initial_params: latent site {name!r} is discrete; NUTS needs continuous sites")
            values[name] = biject_to(site["fn"].support).inv(site["value"])
        return values

    shapes = jax.eval_shape(latent_values)
    return {name: jnp.zeros(s.shape, s.dtype) for name, s in shapes.items()}


__all__ = ["map_initial_params", "map_starts_and_metric"]
