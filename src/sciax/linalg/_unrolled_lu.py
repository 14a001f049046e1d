"""LU with partial pivoting unrolled at trace time: a lineax solver for small dense systems.

`lineax.LU` calls LAPACK (`getrf`, then triangular solves) once per matrix. Under
`jax.vmap` on a CPU that is a loop of tiny library calls, and for the 3x3 to 20x20
stage systems of a stiff ODE ensemble the call overhead dwarfs the arithmetic:
six batched 3x3 solves through `lineax.LU` cost ~25x what the same elimination
written as array operations costs (1,000 members, measured on a 2-core CPU). Here
the elimination is written out for the static size `n`, so every batch member
advances in the same vector operations and XLA fuses them.
"""

from __future__ import annotations

from typing import Any

import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jaxtyping import Array, Float, Int, PyTree

#: Above this size the unrolled program grows long (O(n) vector steps per solve,
#: each on an O(n^2) block) and LAPACK's blocked kernels win.
MAX_UNROLLED_SIZE = 32
#: The default choice (`small_dense_solver`) switches to LAPACK above this size: one
#: factorisation and eight solves break even near n = 10-12 for a single system on
#: a CPU (measured), while under `vmap` the unrolled form wins by far more.
DEFAULT_UNROLLED_SIZE = 12


def lu_factor_unrolled(matrix: Float[Array, "n n"]) -> tuple[Float[Array, "n n"], Int[Array, " n"]]:
    """`(lu, perm)` with `matrix[perm] = L @ U`; `L` unit lower (below the diagonal of `lu`), `U` upper.

    Partial pivoting: at column `k` the row with the largest `|entry|` on or below
    the diagonal becomes the pivot row. A zero pivot (singular matrix) gives
    non-finite factors, which the solve reports as a failure.
    """
    n = matrix.shape[-1]
    lu = matrix
    perm = jnp.arange(n)
    rows = jnp.arange(n)
    for k in range(n - 1):
        pivot = k + jnp.argmax(jnp.abs(lu[k:, k]))
        swap = jnp.where(rows == k, pivot, jnp.where(rows == pivot, k, rows))
        lu, perm = lu[swap], perm[swap]
        multipliers = lu[k + 1 :, k] / lu[k, k]
        lower = lu[k + 1 :, k + 1 :] - multipliers[:, None] * lu[k, k + 1 :][None, :]
        lu = lu.at[k + 1 :, k].set(multipliers).at[k + 1 :, k + 1 :].set(lower)
    return lu, perm


def _forward(lower: Array, b: Array, *, unit: bool) -> Array:
    """Solve `lower @ x = b` (lower triangular), row by row."""
    x = []
    for i in range(b.shape[0]):
        acc = b[i] - sum((lower[i, j] * x[j] for j in range(i)), jnp.zeros((), b.dtype))
        x.append(acc if unit else acc / lower[i, i])
    return jnp.stack(x)


def _backward(upper: Array, b: Array, *, unit: bool) -> Array:
    """Solve `upper @ x = b` (upper triangular), from the last row up."""
    n = b.shape[0]
    x = [None] * n
    for i in reversed(range(n)):
        acc = b[i] - sum((upper[i, j] * x[j] for j in range(i + 1, n)), jnp.zeros((), b.dtype))
        x[i] = acc if unit else acc / upper[i, i]
    return jnp.stack(x)


def lu_solve_unrolled(lu: Array, perm: Array, b: Float[Array, " n"], *, transpose: bool = False) -> Float[Array, " n"]:
    """Solve `A x = b` (or `A^T x = b`) from the factors of `lu_factor_unrolled(A)`."""
    if not transpose:
        return _backward(lu, _forward(lu, b[perm], unit=True), unit=False)
    # A = P^T L U, so A^T = U^T L^T P: solve U^T z = b, then L^T w = z, then x[perm] = w.
    w = _backward(lu.T, _forward(lu.T, b, unit=False), unit=True)
    return jnp.zeros_like(w).at[perm].set(w)


def _ravel(tree: PyTree[Array]) -> Array:
    return jnp.concatenate([jnp.ravel(leaf) for leaf in jax.tree_util.tree_leaves(tree)])


def _flat_structure(structure: PyTree[jax.ShapeDtypeStruct]) -> tuple:
    """A hashable form of a pytree structure: (leaf shapes, treedef)."""
    leaves, treedef = jax.tree_util.tree_flatten(structure)
    return tuple(tuple(leaf.shape) for leaf in leaves), treedef


def _unravel(flat: Array, structure: tuple) -> PyTree[Array]:
    shapes, treedef = structure
    bounds = np.cumsum([0] + [int(np.prod(shape)) for shape in shapes])
    parts = [flat[a:b].reshape(shape) for a, b, shape in zip(bounds[:-1], bounds[1:], shapes)]
    return jax.tree_util.tree_unflatten(treedef, parts)


class UnrolledLU(lx.AbstractLinearSolver):
    """Dense LU with partial pivoting, unrolled for the system's static size; a `lineax` solver.

    For small square systems (`n <= MAX_UNROLLED_SIZE`, 32), and above all for many
    of them at once under `jax.vmap` on a CPU, where it is an order of magnitude
    faster than `lineax.LU`. Same results up to round-off; differentiable like any
    lineax solver (it provides the transpose solve). A singular matrix gives a
    non-finite solution and the result `lineax.RESULTS.singular` (with `throw=False`).

    Used by default for the stage systems of `sciax.ode.Rodas5P` and the other
    Rosenbrock methods when the state has at most `DEFAULT_UNROLLED_SIZE` (12) entries.
    """

    def init(self, operator: lx.AbstractLinearOperator, options: dict[str, Any]):
        del options
        n = operator.in_size()
        if operator.out_size() != n:
            raise ValueError(f"UnrolledLU: the operator must be square, got {operator.out_size()} x {n}")
        if n > MAX_UNROLLED_SIZE:
            raise ValueError(
                f"UnrolledLU: the system has {n} unknowns; it is meant for at most {MAX_UNROLLED_SIZE}. "
                "Use lineax.LU() for larger dense systems"
            )
        # The solution lives in the operator's input structure; a transposed solve's
        # in the output structure.
        structures = eqxi.Static((_flat_structure(operator.in_structure()), _flat_structure(operator.out_structure())))
        return lu_factor_unrolled(operator.as_matrix()), structures, eqxi.Static(False)

    def compute(self, state, vector, options):
        del options
        (lu, perm), structures, transpose = state
        x = lu_solve_unrolled(lu, perm, _ravel(vector), transpose=transpose.value)
        ok = jnp.all(jnp.isfinite(x))
        result = lx.RESULTS.where(ok, lx.RESULTS.successful, lx.RESULTS.singular)
        solution_structure = structures.value[1] if transpose.value else structures.value[0]
        return _unravel(x, solution_structure), result, {}

    def transpose(self, state, options):
        factors, structures, transpose = state
        return (factors, structures, eqxi.Static(not transpose.value)), {}

    def conj(self, state, options):
        (lu, perm), structures, transpose = state
        return ((lu.conj(), perm), structures, transpose), {}

    def assume_full_rank(self) -> bool:
        return True


def small_dense_solver(size: int) -> lx.AbstractLinearSolver:
    """`UnrolledLU()` for systems of at most `DEFAULT_UNROLLED_SIZE` unknowns, else `lineax.LU()`."""
    return UnrolledLU() if size <= DEFAULT_UNROLLED_SIZE else lx.LU()


__all__ = ["UnrolledLU", "lu_factor_unrolled", "lu_solve_unrolled", "small_dense_solver"]
