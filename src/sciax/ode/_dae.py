"""Mass-matrix DAEs `M y' = f(t, y, p)`: the algebraic part of `M` and consistent initial states.

An index-1 DAE in semi-explicit form has a constant singular `M` whose zero rows
are algebraic equations `0 = f_i(t, y)` and whose zero columns are the algebraic
variables they determine (Hairer & Wanner, *Solving ODEs II*, §VI.1). The
Rosenbrock methods integrate it directly (`(M - hγJ) k = ...`, §VI.4), but only
from a *consistent* `y0`: one that satisfies the algebraic equations, otherwise
the first step jumps and the order is lost.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, ArrayLike, PyTree

from .._checks import is_concrete
from ._mass import MassMatrix


def algebraic_part(mass) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the algebraic equations (zero rows of `M`) and variables (zero columns).

    `mass` is a `sciax.ode.MassMatrix` (or anything it accepts). Raises `ValueError` when
    `M` is singular without that structure, or the counts differ.
    """
    csr = (mass if isinstance(mass, MassMatrix) else MassMatrix(mass)).csr
    rows = np.flatnonzero(csr.getnnz(axis=1) == 0)
    cols = np.flatnonzero(csr.getnnz(axis=0) == 0)
    if len(rows) != len(cols):
        raise ValueError(
            f"ODE: the mass matrix has {len(rows)} zero rows (algebraic equations {rows.tolist()}) but "
            f"{len(cols)} zero columns (algebraic variables {cols.tolist()}); an index-1 DAE needs one "
            "algebraic variable per algebraic equation"
        )
    keep_r, keep_c = np.setdiff1d(np.arange(csr.shape[0]), rows), np.setdiff1d(np.arange(csr.shape[1]), cols)
    block = csr[keep_r][:, keep_c]
    diagonal = np.count_nonzero(block.diagonal()) == block.nnz
    # A diagonal block with nonzero rows is regular; anything else is checked densely (small M).
    if not diagonal and np.linalg.matrix_rank(block.toarray()) < len(keep_r):
        raise ValueError(
            "ODE: the mass matrix is singular beyond its zero rows and columns; write the DAE in semi-explicit "
            "form (algebraic equations as zero rows, algebraic variables as zero columns)"
        )
    return rows, cols


def check_mass_size(name: str, mass: np.ndarray, y0: PyTree) -> None:
    n = sum(int(np.size(leaf)) for leaf in jax.tree_util.tree_leaves(y0))
    if mass.shape != (n, n):
        raise ValueError(f"{name}: the mass matrix has shape {mass.shape}; the state has {n} entries (flattened)")


def consistent_initial_state(
    model, y0: PyTree[ArrayLike], t0: ArrayLike, params: PyTree = None, *, rtol: float = 1e-10, atol: float = 1e-10
) -> PyTree[Array]:
    """`y0` with its algebraic variables solved from the algebraic equations at `t0`.

    For a model with a singular `mass_matrix` (`sciax.ode.ODE(f, mass_matrix=M)`), keeps
    the differential variables of `y0` and solves `f_i(t0, y) = 0` over the algebraic rows
    `i` for the algebraic variables, by Newton's method (optimistix), starting from the
    values given. Differentiable in `y0` and `params` (implicit function theorem). With
    `model.consistent_init=False` nothing is solved: `y0` is checked and a `ValueError`
    (concrete inputs) or runtime error names the violated rows. Returns `y0` unchanged
    for an ODE without algebraic part.
    """
    mass = getattr(model, "mass", None)
    if mass is None:
        return y0
    rows, cols = algebraic_part(mass)
    if not len(rows):
        return y0
    flat, unravel = ravel_pytree(y0)
    # A module-level residual with everything in `args` (the indices as static tuples): optimistix's
    # compiled Newton solve is then reused by every eager `simulate` call on the same model and shapes.
    args = (model, t0, params, y0, tuple(rows.tolist()), tuple(cols.tolist()))
    _check_index_one(jax.jacfwd(_algebraic_residual)(flat[cols], args), rows, cols)
    if not model.consistent_init:
        return unravel(_checked(_algebraic_residual(flat[cols], args), flat, rows))
    solver = optx.Newton(rtol=rtol, atol=atol)
    sol = optx.root_find(_algebraic_residual, solver, flat[cols], args, throw=False, max_steps=64)
    bad = sol.result != optx.RESULTS.successful
    z = eqx.error_if(sol.value, bad, "consistent initial state: Newton's method did not converge on the algebraic rows")
    return unravel(flat.at[cols].set(z))


def _algebraic_residual(z: Array, args) -> Array:
    """The algebraic rows of `f(t0, y)` with the algebraic variables of `y0` replaced by `z`."""
    model, t0, params, y0, rows, cols = args
    flat, unravel = ravel_pytree(y0)
    y = flat.at[np.asarray(cols)].set(z)
    return ravel_pytree(model.rhs(t0, unravel(y), params))[0][np.asarray(rows)]


def _check_index_one(jac: Array, rows: np.ndarray, cols: np.ndarray) -> None:
    """Index 1 means the algebraic equations determine the algebraic variables: `∂g/∂z` invertible."""
    message = (
        f"simulate: the algebraic equations (rows {rows.tolist()}) do not determine the algebraic variables "
        f"(columns {cols.tolist()}): their Jacobian is singular at y0, so the DAE has index > 1 (e.g. a "
        "position constraint without the multiplier). Reduce the index: differentiate the constraints until "
        "they involve the algebraic variables"
    )
    if is_concrete(jac):
        values = np.asarray(jac)
        singular = np.linalg.svd(values, compute_uv=False)
        if not np.all(np.isfinite(values)) or singular[-1] <= 1e-12 * max(singular[0], 1.0):
            raise ValueError(message)


def _checked(res: Array, flat: Array, rows: np.ndarray) -> Array:
    scale = 1e-8 * (1.0 + jnp.max(jnp.abs(flat)))
    if is_concrete(res) and is_concrete(flat):
        bad = np.flatnonzero(np.abs(np.asarray(res)) > float(scale))
        if bad.size:
            detail = ", ".join(f"row {rows[i]}: {float(res[i]):.3g}" for i in bad)
            raise ValueError(
                f"simulate: y0 violates the algebraic equations ({detail}); pass a consistent y0 or "
                "leave ODE(consistent_init=True) to solve for the algebraic variables"
            )
        return flat
    return eqx.error_if(
        flat, jnp.any(jnp.abs(res) > scale), f"simulate: y0 violates the algebraic equations (rows {rows.tolist()})"
    )


__all__ = ["algebraic_part", "check_mass_size", "consistent_initial_state"]
