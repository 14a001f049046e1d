"""The sparse-Jacobian options shared by the stiff methods: a pattern given, asked of the model, or detected.

A model without a pattern of its own (a plain `sciax.ode.ODE`) gets one by symbolic
detection (`sciax.linalg.jacobian_sparsity`) from its right-hand side's jaxpr, traced
for the state's shape with the time and parameters abstract, so the pattern holds for
every time and parameter value (and the detection runs under `jit` as well).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax.experimental import sparse as jsparse
from jax.flatten_util import ravel_pytree

from ..linalg import SparsityPattern, SparsityTracerError, check_sparsity_pattern, jacobian_sparsity


def as_jacobian(jacobian):
    """A sparsity pattern given as a matrix becomes a hashable `SparsityPattern` (with its diagonal)."""
    if sp.issparse(jacobian) or isinstance(jacobian, (SparsityPattern, jsparse.BCOO, np.ndarray)):
        return SparsityPattern(jacobian, with_diagonal=True)
    return jacobian  # a string or a function; the method's __check_init__ refuses anything else


def is_sparse(jacobian) -> bool:
    return isinstance(jacobian, SparsityPattern) or (isinstance(jacobian, str) and jacobian == "sparse")


def resolve_pattern(method: str, jacobian, model, y0, params):
    """The pattern to use (the model's for `"sparse"`), checked against the state and, when concrete, probed.

    A pattern missing a nonzero would silently corrupt the Jacobian (the entry is
    added to another of its colour), so with a concrete `y0` and `params` one random
    Jacobian–vector product is compared at `y0` and a mismatch names the row.
    """
    if not is_sparse(jacobian):
        return jacobian
    if isinstance(jacobian, str):
        pattern = model.jacobian_sparsity(y0)
        if pattern is None:
            pattern = _detect(method, model, y0, params)
        jacobian = as_jacobian(pattern)
    y_flat, unravel = ravel_pytree(y0)
    n = y_flat.size
    if jacobian.shape != (n, n):
        raise ValueError(
            f"{method}: the jacobian sparsity pattern has shape {jacobian.shape}, but the state has {n} entries "
            f"(flattened), so it must be ({n}, {n})"
        )
    leaves = jax.tree_util.tree_leaves((y0, params))
    if not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves) and _first_check(model, jacobian):
        t0 = jnp.zeros((), y_flat.dtype)
        rhs = jax.jit(lambda y: ravel_pytree(model.rhs(t0, unravel(y), params))[0])
        try:
            check_sparsity_pattern(rhs, y_flat, jacobian, num_probes=1)
        except ValueError as err:
            raise ValueError(f"{method}: {err}") from None
        _remember(model, jacobian)
    return jacobian


def _detect(method: str, model, y0, params):
    """The pattern of `model.rhs` found symbolically, with time and parameters abstract."""
    y_flat, unravel = ravel_pytree(y0)
    abstract = lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))  # noqa: E731
    t = jax.ShapeDtypeStruct((), y_flat.dtype)

    def rhs(y, t, params):
        return ravel_pytree(model.rhs(t, unravel(y), params))[0]

    try:
        return jacobian_sparsity(rhs, abstract(y_flat), t, jax.tree_util.tree_map(abstract, params))
    except SparsityTracerError as err:
        raise ValueError(
            f"{method}: jacobian='sparse' needs the Jacobian's sparsity: {type(model).__name__} does not state "
            f"it (model.jacobian_sparsity) and automatic detection failed ({err}); pass the pattern itself, "
            "jacobian=<scipy sparse matrix of shape (n, n)>"
        ) from None


_CHECKED: set = set()


def _first_check(model, pattern) -> bool:
    """Whether this (model, pattern) pair still needs its probe: a pair that passed once is not
    probed again (repeated eager solves would compile it each time); unhashable models always are."""
    try:
        key = (model, pattern)
        if key in _CHECKED:
            return False
    except TypeError:
        return True
    return True


def _remember(model, pattern) -> None:
    try:
        _CHECKED.add((model, pattern))
    except TypeError:
        pass
