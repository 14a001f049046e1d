"""`BlockJacobi`: the exact inverse of the small diagonal blocks of a sparse matrix, applied batched.

In a reaction–diffusion system the species at one grid point are coupled by the
reactions, stiffly and nonlinearly, while points are coupled only through
diffusion. Inverting each point's `k x k` block of `I - cJ` exactly (and dropping
the couplings between points) removes the stiff local chemistry from a Krylov
solve: block-Jacobi preconditioning, the "block-diagonal" preconditioner of
Brown & Hindmarsh (Appl. Math. Comput. 31, 1989, 40, §4) and of SUNDIALS'
`cvDiurnal_kry` example. Every block is factorised by LU with partial pivoting,
all blocks at once (`vmap`), so building and applying it are a few vector
operations whatever the number of points.
"""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import scipy.sparse as sp
from jaxtyping import Array, Float, Int

from ._preconditioner import AbstractFlatPreconditioner, flat_layout
from ._sparsity_pattern import SparsityPattern
from ._unrolled_lu import MAX_UNROLLED_SIZE, lu_factor_unrolled, lu_solve_unrolled


def point_blocks(n: int, fields: int) -> np.ndarray:
    """Blocks of the `fields` species at each grid point of a field-major state of `n` entries.

    The state is `(fields, points)` flattened (as `concatenate([u.ravel(), v.ravel()])`
    or `ravel_pytree` of a dict of fields), so block `p` is `[p, p + points, ...]`.
    Returns an int array of shape `(points, fields)`.
    """
    if isinstance(fields, bool) or not isinstance(fields, (int, np.integer)) or fields < 1 or n % fields:
        raise ValueError(f"point_blocks: fields must be a positive integer dividing the state size {n}, got {fields!r}")
    points = n // fields
    return np.arange(points)[:, None] + points * np.arange(fields)[None, :]


def contiguous_blocks(n: int, size: int) -> np.ndarray:
    """Consecutive blocks of `size` entries of a state of `n` entries; shape `(n // size, size)`."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1 or n % size:
        raise ValueError(
            f"contiguous_blocks: size must be a positive integer dividing the state size {n}, got {size!r}"
        )
    return np.arange(n).reshape(-1, size)


def check_blocks(blocks, n: int) -> np.ndarray:
    """`blocks` as an int `(num_blocks, block_size)` array of distinct indices in `[0, n)`, or a `ValueError`."""
    blocks = np.asarray(blocks)
    if blocks.ndim != 2 or not np.issubdtype(blocks.dtype, np.integer):
        raise ValueError(f"BlockJacobi: blocks must be an integer array (num_blocks, block_size), got {blocks.shape}")
    if blocks.size and (blocks.min() < 0 or blocks.max() >= n):
        raise ValueError(f"BlockJacobi: block indices must lie in [0, {n}) for a state of {n} entries")
    if np.unique(blocks).size != blocks.size:
        raise ValueError("BlockJacobi: blocks must not overlap (an index appears in two blocks)")
    return blocks


@functools.lru_cache(maxsize=32)
def _block_positions(pattern: SparsityPattern, blocks_bytes: bytes, shape: tuple[int, int]) -> np.ndarray:
    """For every block entry `(b, i, j)`, its position among the pattern's entries, or `nnz` if absent."""
    blocks = np.frombuffer(blocks_bytes, np.int64).reshape(shape)
    position = sp.csr_matrix((np.arange(1, pattern.nnz + 1), pattern.cols, pattern.csr.indptr), shape=pattern.shape)
    rows = np.broadcast_to(blocks[:, :, None], (*shape, shape[1]))
    cols = np.broadcast_to(blocks[:, None, :], (*shape, shape[1]))
    found = np.asarray(position[rows.ravel(), cols.ravel()]).ravel().reshape(rows.shape) - 1
    return np.where(found < 0, pattern.nnz, found)


class BlockJacobi(AbstractFlatPreconditioner):
    """`M r`: each block of `r` solved with its block of `A` (the couplings between blocks dropped).

    Build it with `BlockJacobi.from_matrix(blocks_of_A, blocks, like)` or, for a
    Newton matrix `I - cJ` with `J` on a sparsity pattern, `BlockJacobi.newton(jac_values,
    pattern, c, blocks, like)`. `blocks`: an int array `(num_blocks, block_size)` of
    indices into the flattened state (`point_blocks` for the species at each grid
    point, `contiguous_blocks` for consecutive runs); entries in no block are passed
    through unchanged. Exact (`M = A^-1`) when `A` is block-diagonal with these blocks.

    Blocks of up to 32 entries are factorised by unrolled LU (`sciax.linalg.UnrolledLU`'s
    elimination), larger ones by LAPACK. A singular block gives non-finite output,
    which a Krylov solve reports as a failure. Treated as a constant by the solvers
    (no derivatives through it).
    """

    lu: Float[Array, "nb bs bs"]
    pivots: Int[Array, "nb bs"]
    blocks: Int[Array, "nb bs"]
    unrolled: bool = eqx.field(static=True, default=True)
    symmetric: bool = eqx.field(static=True)

    @classmethod
    def from_matrix(cls, matrices: Float[Array, "nb bs bs"], blocks, like) -> BlockJacobi:
        """From the blocks of `A` themselves, `matrices[b] = A[blocks[b]][:, blocks[b]]`; `like`: the state
        (a pytree of arrays or `ShapeDtypeStruct`s) or its flat size."""
        treedef, shapes = flat_layout(like)
        n = int(sum(np.prod(shape) for shape in shapes))
        blocks = check_blocks(blocks, n)
        matrices = jnp.asarray(matrices)
        if matrices.shape != (*blocks.shape, blocks.shape[1]):
            raise ValueError(
                f"BlockJacobi: {blocks.shape[0]} blocks of size {blocks.shape[1]} need matrices of shape "
                f"{(*blocks.shape, blocks.shape[1])}, got {matrices.shape}"
            )
        unrolled = blocks.shape[1] <= MAX_UNROLLED_SIZE
        lu, pivots = (_factor_unrolled if unrolled else _factor_lapack)(matrices)
        return cls(
            lu=lu,
            pivots=pivots,
            blocks=jnp.asarray(blocks),
            treedef=treedef,
            shapes=shapes,
            unrolled=unrolled,
            symmetric=False,
        )

    @classmethod
    def newton(cls, jac_values: Float[Array, " nnz"], pattern: SparsityPattern, c, blocks, like) -> BlockJacobi:
        """The blocks of `I - c J`, `J` given by its values on `pattern` (CSR entry order, as
        `sciax.linalg.sparse_jacobian(...).data`); entries of a block outside the pattern are zero."""
        blocks = check_blocks(blocks, pattern.shape[0])
        positions = _block_positions(pattern, blocks.astype(np.int64).tobytes(), blocks.shape)
        padded = jnp.concatenate([jac_values, jnp.zeros((1,), jac_values.dtype)])
        eye = jnp.eye(blocks.shape[1], dtype=jac_values.dtype)
        return cls.from_matrix(eye - c * padded[positions], blocks, like)

    def apply_flat(self, r):
        return _apply(self.lu, self.pivots, self.blocks, r, self.unrolled)

    def dtype(self):
        return self.lu.dtype


# Compiled once per shape: eagerly, a vmapped unrolled elimination is hundreds of tiny dispatches.
_factor_unrolled = jax.jit(jax.vmap(lu_factor_unrolled))
_factor_lapack = jax.jit(jax.vmap(jsl.lu_factor))


@functools.partial(jax.jit, static_argnums=4)
def _apply(lu, pivots, blocks, r, unrolled: bool):
    pieces = r[blocks]
    if unrolled:
        solved = jax.vmap(lu_solve_unrolled)(lu, pivots, pieces)
    else:
        solved = jax.vmap(lambda a, p, b: jsl.lu_solve((a, p), b))(lu, pivots, pieces)
    return r.at[blocks].set(solved.astype(r.dtype))


__all__ = ["BlockJacobi", "point_blocks", "contiguous_blocks"]
