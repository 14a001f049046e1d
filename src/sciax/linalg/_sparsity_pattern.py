"""A Jacobian sparsity pattern as static, hashable host data.

Solvers take a pattern as static configuration (a field of a method, part of the
compiled program's identity), so it is hashed by content: two patterns with the
same nonzeros are the same pattern, and `jit` recompiles only when the structure
changes. Colourings and index maps are computed once per pattern and kept.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import scipy.sparse as sp
from jax.experimental import sparse as jsparse


def as_pattern(pattern, what: str = "pattern") -> sp.csr_matrix:
    """A boolean CSR matrix from a `SparsityPattern`, a scipy sparse matrix, a dense array or a `BCOO`."""
    if isinstance(pattern, SparsityPattern):
        return pattern.csr
    if isinstance(pattern, jsparse.BCOO):
        rows, cols = np.asarray(pattern.indices).T
        pattern = sp.coo_matrix((np.ones(rows.size, bool), (rows, cols)), shape=pattern.shape)
    elif not sp.issparse(pattern):
        array = np.asarray(pattern)
        if array.ndim != 2:
            raise ValueError(f"{what}: a sparsity pattern is a 2-D (rows, columns) matrix, got shape {array.shape}")
        pattern = sp.coo_matrix(array != 0)
    out = sp.csr_matrix(pattern, dtype=bool)
    out.eliminate_zeros()
    out.sort_indices()
    return out


class SparsityPattern:
    """The structural nonzeros of a square or rectangular matrix, hashable by content.

    **Arguments:**

    - `pattern`: a scipy sparse matrix, a dense array (nonzero = structural entry)
      or a `jax.experimental.sparse.BCOO`; only where entries are, not their values.
    - `with_diagonal`: add the diagonal (a stage matrix `I - hγJ` needs it even
      where `J` has none).

    Entries are kept in CSR order (rows ascending, columns ascending in a row):
    `rows`, `cols` are the coordinates of the `nnz` entries, the order in which
    `sciax.linalg.sparse_jacobian` returns its values.
    """

    def __init__(self, pattern, *, with_diagonal: bool = False):
        csr = as_pattern(pattern, "SparsityPattern")
        if with_diagonal:
            if csr.shape[0] != csr.shape[1]:
                raise ValueError(f"SparsityPattern: with_diagonal needs a square pattern, got shape {csr.shape}")
            csr = as_pattern(csr + sp.identity(csr.shape[0], dtype=bool, format="csr"))
        self.csr = csr
        digest = hashlib.blake2b(digest_size=16)
        for part in (np.asarray(csr.shape), csr.indptr, csr.indices):
            digest.update(np.ascontiguousarray(part, np.int64).tobytes())
        self._key = digest.hexdigest()

    @property
    def shape(self) -> tuple[int, int]:
        return self.csr.shape

    @property
    def nnz(self) -> int:
        return int(self.csr.nnz)

    @functools.cached_property
    def rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.shape[0]), np.diff(self.csr.indptr))

    @property
    def cols(self) -> np.ndarray:
        return self.csr.indices

    @functools.cached_property
    def diagonal(self) -> np.ndarray:
        """Positions (in entry order) of the diagonal entries present in the pattern."""
        return np.flatnonzero(self.rows == self.cols)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other) -> bool:
        return isinstance(other, SparsityPattern) and other._key == self._key

    def __repr__(self) -> str:
        return f"SparsityPattern(shape={self.shape}, nnz={self.nnz})"


__all__ = ["SparsityPattern", "as_pattern"]
