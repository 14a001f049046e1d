"""`IncompleteLU`: an incomplete LU factorisation of a sparse matrix (SuperLU's ILUTP, on the host).

An incomplete factorisation keeps `L` and `U` about as sparse as `A` by dropping
small fill-in, so it costs little more than `A` itself to build and apply, while
coupling all unknowns (unlike block-Jacobi): the classic preconditioner of
Newton–Krylov stiff solvers (CVODE with SPGMR + ILU, SciML's "GMRES + ILU" on the
Brusselator). The factorisation itself is sequential, row after row; a JAX
version would be a loop of `n` dependent steps (milliseconds per build on a CPU
for `n` in the thousands, the same again per application), so, as for `SparseLU`,
it runs on the host through `jax.pure_callback`: scipy's `spilu` (threshold ILU
with partial pivoting, Li & Shao, ACM TOMS 37 (2011) 43). With `drop_tol=0`, the
natural ordering and room for the factors (SuperLU's supernodal storage needs
`fill_factor` of about 3 even without fill) nothing is dropped, so on a tridiagonal
matrix, which has no fill, it is the exact LU, as ILU(0) is.

Factorisations are memoised by the matrix values (compared exactly), so the many
applications inside one GMRES solve, and every solve until the matrix changes,
reuse one factorisation.
"""

from __future__ import annotations

import collections
import functools
import threading

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from jaxtyping import Array, Float

from ._preconditioner import AbstractFlatPreconditioner, flat_layout
from ._sparsity_pattern import SparsityPattern

_ORDERINGS = ("MMD_AT_PLUS_A", "COLAMD", "MMD_ATA", "NATURAL")


class IncompleteLU(AbstractFlatPreconditioner):
    """`M r = (L U)^{-1} r` with `L U ≈ A` an incomplete factorisation of a sparse `A`.

    Build it with `IncompleteLU.from_values(values, pattern, like, ...)` (`A` has
    `values` at the entries of `pattern`, CSR entry order) or, for a Newton matrix
    `I - cJ`, `IncompleteLU.newton(jac_values, pattern, c, like, ...)` (the pattern
    must then contain the diagonal: `SparsityPattern(p, with_diagonal=True)`).

    **Options** (scipy `spilu`'s): `drop_tol` (entries of the factors below this,
    relative to their column, are dropped; 0 keeps all fill the `fill_factor`
    allows), `fill_factor` (at most this times `nnz(A)` entries in the factors),
    `ordering` (column ordering, as `SparseLU`'s).

    Runs on the host (CPU) under every backend; `vmap` loops over the members in one
    host call. A matrix that cannot be factorised (singular, non-finite) gives NaN,
    which a Krylov solve reports as a failure. No derivatives through it (a
    preconditioner is a constant to the solvers).
    """

    values: Float[Array, " nnz"]
    pattern: SparsityPattern = eqx.field(static=True)
    drop_tol: float = eqx.field(static=True, default=1e-2)
    fill_factor: float = eqx.field(static=True, default=2.0)
    ordering: str = eqx.field(static=True, default="MMD_AT_PLUS_A")
    symmetric: bool = eqx.field(static=True)

    def __check_init__(self):
        if self.ordering not in _ORDERINGS:
            raise ValueError(f"IncompleteLU: ordering must be one of {_ORDERINGS}, got {self.ordering!r}")
        if not self.drop_tol >= 0 or not self.fill_factor >= 1:
            raise ValueError(
                f"IncompleteLU: drop_tol must be >= 0 and fill_factor >= 1, got {self.drop_tol!r}, {self.fill_factor!r}"
            )
        n = self.pattern.shape[0]
        if self.pattern.shape != (n, n) or self.size != n:
            raise ValueError(
                f"IncompleteLU: the pattern has shape {self.pattern.shape}, the state {self.size} entries; "
                f"it must be ({self.size}, {self.size})"
            )

    @classmethod
    def from_values(cls, values, pattern, like, **options) -> IncompleteLU:
        pattern = pattern if isinstance(pattern, SparsityPattern) else SparsityPattern(pattern)
        values = jnp.asarray(values)
        if values.shape != (pattern.nnz,):
            raise ValueError(f"IncompleteLU: the pattern has {pattern.nnz} entries, got values of shape {values.shape}")
        treedef, shapes = flat_layout(like)
        return cls(values=values, pattern=pattern, treedef=treedef, shapes=shapes, symmetric=False, **options)

    @classmethod
    def newton(cls, jac_values, pattern: SparsityPattern, c, like, **options) -> IncompleteLU:
        """For `I - c J`; `pattern` must contain the diagonal."""
        if pattern.diagonal.size != pattern.shape[0]:
            raise ValueError("IncompleteLU.newton: the pattern must contain the diagonal (with_diagonal=True)")
        return cls.from_values((-c * jac_values).at[pattern.diagonal].add(1.0), pattern, like, **options)

    def apply_flat(self, r):
        out = jax.ShapeDtypeStruct(r.shape, jnp.result_type(self.values, r))
        values = jax.lax.stop_gradient(self.values)
        options = (self.pattern, self.drop_tol, self.fill_factor, self.ordering)
        host = functools.partial(_host_apply, options)
        return jax.pure_callback(host, out, values, jax.lax.stop_gradient(r), vmap_method="expand_dims")

    def dtype(self):
        return self.values.dtype


def _host_apply(options, values, rhs):
    """One host call for a whole `vmap` batch: leading axes are batch axes (size 1 if unbatched)."""
    values, rhs = np.asarray(values), np.asarray(rhs)
    batch = np.broadcast_shapes(values.shape[:-1], rhs.shape[:-1])
    values = np.broadcast_to(values, (*batch, values.shape[-1])).reshape(-1, values.shape[-1])
    flat = np.broadcast_to(rhs, (*batch, rhs.shape[-1])).reshape(-1, rhs.shape[-1])
    out = np.empty(flat.shape, np.result_type(values, flat))
    for i in range(flat.shape[0]):
        ilu = _MEMO.factor(values[i], options, capacity=max(8, 2 * flat.shape[0]))
        out[i] = np.nan if ilu is None else ilu.solve(flat[i].astype(out.dtype))
    return out.reshape(*batch, rhs.shape[-1])


class _IluMemo:
    """Least-recently-used incomplete factorisations keyed by (pattern, options, values)."""

    def __init__(self):
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def factor(self, values: np.ndarray, options: tuple, capacity: int):
        key = (options, values.dtype.str, hash(values.tobytes()))
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and np.array_equal(hit[0], values):
                self._entries.move_to_end(key)
                return hit[1]
        factors = _factorise(values, *options)
        with self._lock:
            self._entries[key] = (values.copy(), factors)
            while len(self._entries) > capacity:
                self._entries.popitem(last=False)
        return factors


def _factorise(values, pattern: SparsityPattern, drop_tol, fill_factor, ordering):
    if not np.all(np.isfinite(values)):
        return None
    matrix = sp.csc_matrix(sp.csr_matrix((values, pattern.cols, pattern.csr.indptr), shape=pattern.shape))
    try:
        return spla.spilu(matrix, drop_tol=drop_tol, fill_factor=fill_factor, permc_spec=ordering)
    except RuntimeError:  # SuperLU: "Factor is exactly singular"
        return None


_MEMO = _IluMemo()

__all__ = ["IncompleteLU"]
