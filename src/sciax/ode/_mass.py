"""`MassMatrix`: the constant `M` of `M y' = f`, stored sparse and hashable, and what solvers need of it.

A model's mass matrix is static configuration (it shapes the compiled solve), so
it must hash cheaply; method-of-lines DAEs have thousands of states and a
diagonal `M`, so it is kept in compressed sparse rows, never as a dense `n x n`.
The implicit methods need its product with a vector (the history terms
`M (ψ + d)` of `BDF`, `M Σ C_ij k_j` of the Rosenbrock stages), the Newton or
stage matrix `M - cJ` (dense, or on the entries of a sparse Jacobian pattern),
and, for `BDF`, a consistent initial slope: for an index-1 DAE `y'(t0)` follows
from the differential rows `M y' = f` and the time derivative of the algebraic
rows, `∂g/∂y y' + ∂g/∂t = 0` (Shampine, Reichelt & Kierzenka, "Solving index-1
DAEs in MATLAB and Simulink", SIAM Review 41 (1999) 538).
"""

from __future__ import annotations

import functools
import hashlib

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jaxtyping import Array, Float

from ..linalg import SparseLU, SparsityPattern, sparse_solve


class MassMatrix:
    """A constant real `(n, n)` matrix (CSR), hashable by content; `np.asarray` gives it dense.

    **Arguments:** `matrix`: an `(n, n)` array, its diagonal `(n,)`, or a scipy sparse matrix.
    """

    def __init__(self, matrix):
        csr = sp.csr_matrix(matrix, dtype=float) if sp.issparse(matrix) else None
        if csr is None:
            m = np.asarray(matrix)
            if m.ndim == 1 and m.dtype.kind in "fiu":
                m = sp.diags(m.astype(float), format="csr")
            if not sp.issparse(m) and (m.ndim != 2 or m.dtype.kind not in "fiu"):
                raise ValueError(
                    "ODE: mass_matrix must be a finite real (n, n) array, its diagonal (n,) or a scipy sparse "
                    f"matrix, got {m.dtype} shape {m.shape}"
                )
            csr = sp.csr_matrix(m, dtype=float)
        if csr.shape[0] != csr.shape[1] or not np.all(np.isfinite(csr.data)):
            raise ValueError(f"ODE: mass_matrix must be a finite square matrix, got shape {csr.shape}")
        csr.eliminate_zeros()
        csr.sort_indices()
        self.csr = csr
        digest = hashlib.blake2b(digest_size=16)
        for part in (np.asarray(csr.shape), csr.indptr, csr.indices):
            digest.update(np.ascontiguousarray(part, np.int64).tobytes())
        digest.update(np.ascontiguousarray(csr.data, np.float64).tobytes())
        self._key = digest.hexdigest()

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other) -> bool:
        return isinstance(other, MassMatrix) and other._key == self._key

    def __repr__(self) -> str:
        return f"MassMatrix(shape={self.shape}, nnz={self.csr.nnz})"

    def __array__(self, dtype=None, copy=None):
        return self.csr.toarray().astype(dtype if dtype is not None else float)

    @property
    def shape(self) -> tuple[int, int]:
        return self.csr.shape

    @functools.cached_property
    def diagonal(self) -> np.ndarray | None:
        """The diagonal when `M` is diagonal, else `None`."""
        diag = self.csr.diagonal()
        return diag if np.count_nonzero(diag) == self.csr.nnz else None

    def on_pattern(self, pattern: SparsityPattern) -> np.ndarray:
        """`M`'s values at the entries of `pattern` (CSR order); `M`'s nonzeros must lie inside it."""
        inside = sp.csr_matrix((np.ones(pattern.nnz), (pattern.rows, pattern.cols)), shape=pattern.shape)
        outside = self.csr - self.csr.multiply(inside)
        outside.eliminate_zeros()
        if outside.nnz:
            row, col = outside.nonzero()
            raise ValueError(
                f"simulate: the mass matrix has a nonzero at ({row[0]}, {col[0]}) outside the Jacobian's sparsity "
                f"pattern ({outside.nnz} such entries); include M's nonzeros in the pattern"
            )
        return np.asarray(self.csr[pattern.rows, pattern.cols]).ravel()

    def times(self, v: Float[Array, " n"]) -> Float[Array, " n"]:
        if self.diagonal is not None:
            return jnp.asarray(self.diagonal, v.dtype) * v
        coo = self.csr.tocoo()
        values = jnp.asarray(coo.data, v.dtype)
        return jax.ops.segment_sum(values * v[coo.col], jnp.asarray(coo.row), num_segments=v.size)

    def newton_matrix(self, jac: Array, c: Array, pattern: SparsityPattern | None = None) -> Array:
        """`M - cJ`, as `jac` is stored: a dense `(n, n)` array, or the values on `pattern`."""
        base = np.asarray(self) if pattern is None else self.on_pattern(pattern)
        return jnp.asarray(base, jac.dtype) - c * jac

    def initial_slope(
        self,
        jac: Array,
        f0: Float[Array, " n"],
        ft0: Float[Array, " n"],
        pattern: SparsityPattern | None = None,
        solver: SparseLU | None = None,
    ) -> Float[Array, " n"]:
        """`y'(t0)` of a consistent index-1 state: `M y' = f` on the differential rows and
        `J y' = -∂f/∂t` on the algebraic (zero) rows; `jac` is `∂f/∂y` at `t0` as stored,
        `ft0` is `∂f/∂t`."""
        algebraic = self.csr.getnnz(axis=1) == 0
        rhs = jnp.where(algebraic, -ft0, f0)
        if pattern is None:
            system = jnp.where(algebraic[:, None], jac, jnp.asarray(np.asarray(self), jac.dtype))
            return jnp.linalg.solve(system, rhs)
        values = jnp.where(algebraic[pattern.rows], jac, jnp.asarray(self.on_pattern(pattern), jac.dtype))
        return sparse_solve(values, rhs, pattern, solver)


def times_mass(mass: MassMatrix | None, v: Float[Array, " n"]) -> Float[Array, " n"]:
    """`M v`, or `v` without a mass matrix."""
    return v if mass is None else mass.times(v)


def time_derivative(f, t0, y0) -> Float[Array, " n"]:
    """`∂f/∂t` at `(t0, y0)` by one forward-mode product (the algebraic rows' part of a consistent slope)."""
    return jax.jvp(lambda t: f(t, y0), (t0,), (jnp.ones_like(t0),))[1]


__all__ = ["MassMatrix", "time_derivative", "times_mass"]
