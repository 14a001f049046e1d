"""Sparse direct solves with SuperLU on the host, differentiable and `vmap`-able.

A stiff method-of-lines system's stage matrix `I - hγJ` has a few nonzeros per row
but a dense LU of it costs `O(n^3)`. SuperLU (Li, ACM TOMS 31 (2005) 302, through
`scipy.sparse.linalg.splu`) factorises it with a fill-reducing column order; the
factors have data-dependent size, so they stay on the host and JAX reaches them
through `jax.pure_callback`.

Factorisations are memoised by the matrix values (compared exactly, not only by
hash), so every stage of a Rosenbrock step, every Newton iteration of a BDF step
and every step that keeps the same matrix reuses one factorisation. The memo is
pure: a miss refactorises, a hit returns the same numbers.

Derivatives follow from `jax.lax.custom_linear_solve`: `x = A⁻¹b` has
`ẋ = A⁻¹(ḃ - Ȧx)` and its transpose solves with `Aᵀ` (SuperLU's transposed solve),
so `jvp`, `grad` and `vmap` all work, with respect to the values of `A` and `b`.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from jaxtyping import Array, Float

from ._sparsity_pattern import SparsityPattern

_ORDERINGS = ("MMD_AT_PLUS_A", "COLAMD", "MMD_ATA", "NATURAL")


class SparseLU(eqx.Module):
    """Sparse LU (SuperLU, on the host) for systems given by values on a `SparsityPattern`.

    **Fields:**

    - `ordering`: SuperLU's fill-reducing column ordering, `"MMD_AT_PLUS_A"`
      (default: minimum degree on `A + Aᵀ`, which suits the structurally symmetric
      matrices of stencils; half the fill-in of COLAMD on a 2-D five-point
      stencil), `"COLAMD"` (scipy's default), `"MMD_ATA"` or `"NATURAL"`.
    - `memo_size`: how many factorisations are kept (at least one per member
      of a `vmap` batch is kept regardless).

    Runs on the CPU host under every backend: on a GPU the values travel to the
    host and back at each solve.
    """

    ordering: str = eqx.field(static=True, default="MMD_AT_PLUS_A")
    memo_size: int = eqx.field(static=True, default=8)

    def __check_init__(self):
        if self.ordering not in _ORDERINGS:
            raise ValueError(f"SparseLU: ordering must be one of {_ORDERINGS}, got {self.ordering!r}")
        if isinstance(self.memo_size, bool) or not isinstance(self.memo_size, int) or self.memo_size < 1:
            raise ValueError(f"SparseLU: memo_size must be an integer >= 1, got {self.memo_size!r}")


def sparse_solve(
    values: Float[Array, " nnz"],
    b: Float[Array, " n"],
    pattern: SparsityPattern,
    solver: SparseLU | None = None,
) -> Float[Array, " n"]:
    """Solve `A x = b` where `A` has `values` at the entries of `pattern` (CSR entry order).

    Returns `x` of shape `(n,)`; NaN everywhere if `A` is singular (so a caller's
    finiteness check rejects the step instead of using garbage). Differentiable
    with respect to `values` and `b` (forward and reverse mode); `vmap` batches
    the host calls into one.
    """
    if not isinstance(pattern, SparsityPattern):
        raise TypeError(f"sparse_solve: pattern must be a sciax.linalg.SparsityPattern, got {type(pattern).__name__}")
    solver = SparseLU() if solver is None else solver
    n = pattern.shape[0]
    if pattern.shape != (n, n) or values.shape != (pattern.nnz,) or b.shape != (n,):
        raise ValueError(
            f"sparse_solve: expected a square pattern with values of shape ({pattern.nnz},) and b of shape ({n},); "
            f"got pattern {pattern.shape}, values {values.shape}, b {b.shape}"
        )
    rows, cols = jnp.asarray(pattern.rows), jnp.asarray(pattern.cols)

    def matvec(x):
        return jax.ops.segment_sum(values * x[cols], rows, num_segments=n)

    def host(rhs, transpose):
        return _host_solve(values, rhs, pattern, solver, transpose)

    return jax.lax.custom_linear_solve(
        matvec, b, solve=lambda _, rhs: host(rhs, False), transpose_solve=lambda _, rhs: host(rhs, True)
    )


def _host_solve(values, rhs, pattern: SparsityPattern, solver: SparseLU, transpose: bool):
    out = jax.ShapeDtypeStruct(rhs.shape, jnp.result_type(values, rhs))

    def callback(values, rhs):
        return _solve_batch(np.asarray(values), np.asarray(rhs), pattern, solver, transpose)

    return jax.pure_callback(callback, out, values, rhs, vmap_method="expand_dims")


def _solve_batch(values, rhs, pattern, solver, transpose) -> np.ndarray:
    """One host call for a whole `vmap` batch: leading axes are batch axes (size 1 if unbatched)."""
    batch = np.broadcast_shapes(values.shape[:-1], rhs.shape[:-1])
    values = np.broadcast_to(values, (*batch, values.shape[-1])).reshape(-1, values.shape[-1])
    rhs = np.broadcast_to(rhs, (*batch, rhs.shape[-1])).reshape(-1, rhs.shape[-1])
    dtype = np.result_type(values, rhs)
    out = np.empty(rhs.shape, dtype)
    for i in range(rhs.shape[0]):
        lu = _MEMO.factor(values[i], pattern, solver, batch_size=rhs.shape[0])
        out[i] = np.nan if lu is None else lu.solve(rhs[i].astype(dtype), trans="T" if transpose else "N")
    return out.reshape(*batch, rhs.shape[-1])


class _FactorMemo:
    """Least-recently-used SuperLU factorisations keyed by (pattern, ordering, values)."""

    def __init__(self):
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def factor(self, values: np.ndarray, pattern: SparsityPattern, solver: SparseLU, batch_size: int):
        key = (pattern, solver.ordering, values.dtype.str, hash(values.tobytes()))
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and np.array_equal(hit[0], values):
                self._entries.move_to_end(key)
                return hit[1]
        capacity = max(solver.memo_size, 2 * batch_size)
        return _WORKER.submit(self._factor_and_keep, key, values.copy(), pattern, solver.ordering, capacity).result()

    def _factor_and_keep(self, key, values, pattern, ordering, capacity):
        # Runs on the one worker thread: SuperLU's factors are allocated and freed by the
        # same thread. XLA calls back on many short-lived threads; factors allocated on
        # one and freed from another stay in glibc's per-thread arenas (~ the factors'
        # size lost per factorisation, measured).
        lu = _factorise(values, pattern, ordering)
        with self._lock:
            self._entries[key] = (values, lu)
            while len(self._entries) > capacity:
                self._entries.popitem(last=False)
        return lu

    def clear(self) -> None:
        _WORKER.submit(self._clear).result()

    def _clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _factorise(values, pattern: SparsityPattern, ordering: str):
    if not np.all(np.isfinite(values)):
        return None
    matrix = sp.csr_matrix((values, pattern.cols, pattern.csr.indptr), shape=pattern.shape).tocsc()
    try:
        return spla.splu(matrix, permc_spec=ordering)
    except RuntimeError:  # SuperLU: "Factor is exactly singular"
        return None


_WORKER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sciax-superlu")
_MEMO = _FactorMemo()

__all__ = ["SparseLU", "sparse_solve"]
