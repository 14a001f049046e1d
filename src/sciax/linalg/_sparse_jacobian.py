"""Sparse Jacobians from a sparsity pattern: one `jvp` per colour of the columns.

A method-of-lines right-hand side with `N` states has a Jacobian with a handful of
nonzeros per row. Columns that share no row can be probed together: `J @ s`, with
`s` the indicator of such a group, holds each of those columns' entries in its own
rows. A colouring of the columns in which no two columns of one colour share a
row recovers the whole Jacobian from one `jvp` per colour (Curtis, Powell & Reid,
IMA J. Appl. Math. 13 (1974) 117; greedy colouring as in Coleman & Moré, SIAM J.
Numer. Anal. 20 (1983) 187). A 2-D five-point stencil needs 7–9 colours (5 at best)
whatever the grid size, where a dense Jacobian needs `N` `jvp`s and `N^2` memory.

The pattern is static (host) data; `sparse_jacobian` is traceable and
differentiable like the function it differentiates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax.experimental import sparse as jsparse
from jaxtyping import Array, Float

from ..grid import Grid
from ._sparsity_pattern import SparsityPattern, as_pattern


def column_colouring(pattern) -> np.ndarray:
    """Colours of the columns of `pattern` such that no two columns of one colour share a row.

    Greedy, largest-degree first (the columns with most nonzeros take colours first):
    at most one more colour than the number of columns any column shares a row with,
    independent of the matrix size (3 for a tridiagonal matrix, 7–9 for a 2-D
    five-point stencil). Returns an int array of shape `(num_columns,)`;
    `colours.max() + 1` `jvp`s recover the Jacobian.
    """
    csr = as_pattern(pattern)
    csc = csr.tocsc()
    n = csr.shape[1]
    colours = np.full(n, -1, np.int64)
    order = np.argsort(-np.diff(csc.indptr), kind="stable")
    for j in order:
        rows = csc.indices[csc.indptr[j] : csc.indptr[j + 1]]
        neighbours = np.concatenate([csr.indices[csr.indptr[i] : csr.indptr[i + 1]] for i in rows] + [np.empty(0, int)])
        taken = np.unique(colours[neighbours])
        taken = taken[taken >= 0]
        free = np.flatnonzero(np.isin(np.arange(taken.size + 1), taken, invert=True))
        colours[j] = free[0]
    return colours


def sparse_jacobian(
    fn: Callable[[Float[Array, " n"]], Float[Array, " m"]],
    x: Float[Array, " n"],
    pattern,
    *,
    colours: np.ndarray | None = None,
) -> jsparse.BCOO:
    """The Jacobian of `fn` at `x` as a `BCOO` with the nonzeros of `pattern`.

    `fn` maps a 1-D array of `n` states to `m` outputs (flatten a pytree state with
    `jax.flatten_util.ravel_pytree`); `pattern` is an `(m, n)` sparsity pattern (`SparsityPattern`,
    scipy sparse matrix, dense boolean array or `BCOO`) that must contain every structural
    nonzero of the Jacobian: an entry outside it would be added to another entry of
    the same colour. `colours` (from `column_colouring(pattern)`) may be passed to reuse
    a colouring. Costs one `jax.jvp` of `fn` per colour, vmapped.

    Differentiable with respect to `x` and whatever `fn` closes over; `jit`/`vmap`
    safe (the pattern and colouring are static). Check a pattern with
    `check_sparsity_pattern`.
    """
    csr = as_pattern(pattern)
    x = jnp.asarray(x)
    if colours is None and isinstance(pattern, SparsityPattern):
        colours = _cached_colouring(pattern)
    if x.ndim != 1 or csr.shape[1] != x.shape[0]:
        raise ValueError(
            f"sparse_jacobian: pattern has shape {csr.shape}, so x must be a 1-D array of {csr.shape[1]} states, "
            f"got shape {x.shape}"
        )
    colours = column_colouring(csr) if colours is None else np.asarray(colours)
    if colours.shape != (csr.shape[1],):
        raise ValueError(f"sparse_jacobian: colours must have shape ({csr.shape[1]},), got {colours.shape}")
    seeds = np.zeros((int(colours.max()) + 1, x.shape[0]), x.dtype)
    seeds[colours, np.arange(x.shape[0])] = 1
    compressed = jax.vmap(lambda s: jax.jvp(fn, (x,), (s,))[1])(jnp.asarray(seeds))
    if compressed.shape[1:] != (csr.shape[0],):
        raise ValueError(
            f"sparse_jacobian: pattern has {csr.shape[0]} rows but fn returned shape {compressed.shape[1:]}"
        )
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    cols = csr.indices
    data = compressed[colours[cols], rows]
    return jsparse.BCOO((data, jnp.asarray(np.stack([rows, cols], axis=1))), shape=csr.shape)


@functools.lru_cache(maxsize=64)
def _cached_colouring(pattern: SparsityPattern) -> np.ndarray:
    return column_colouring(pattern.csr)


def check_sparsity_pattern(fn: Callable, x: Float[Array, " n"], pattern, *, num_probes: int = 3, seed: int = 0):
    """Raise `ValueError` if the Jacobian of `fn` at `x` has a nonzero outside `pattern`.

    Compares `J v` from `sparse_jacobian` with a `jvp` of `fn` for `num_probes` random
    vectors `v`; a mismatch beyond round-off names one row where it occurs and the
    columns the pattern has there. Needs concrete `x` (not under `jit`). A check, not a
    proof: a nonzero that happens to vanish at this `x` is not found.
    """
    csr = as_pattern(pattern)
    x = jnp.asarray(x)
    jac = sparse_jacobian(fn, x, csr)
    rng = np.random.default_rng(seed)
    for _ in range(num_probes):
        v = jnp.asarray(rng.standard_normal(x.shape[0]), x.dtype)
        exact = np.asarray(jax.jvp(fn, (x,), (v,))[1])
        approx = np.asarray(jac @ v)
        scale = np.abs(np.asarray(jac.data)).max(initial=0.0) * np.abs(np.asarray(v)).sum() + np.abs(exact).max()
        bad = np.abs(exact - approx) > 64 * np.finfo(exact.dtype).eps * max(scale, 1e-300)
        if np.any(bad):
            row = int(np.argmax(bad))
            cols = csr.indices[csr.indptr[row] : csr.indptr[row + 1]].tolist()
            raise ValueError(
                f"check_sparsity_pattern: the Jacobian has a nonzero outside the pattern in row {row} (the pattern "
                f"allows columns {cols[:12]}{' ...' if len(cols) > 12 else ''} there); J v differs from a jvp by "
                f"{float(np.abs(exact - approx)[row]):.3g}. Add the missing entries to the pattern"
            )


def stencil_pattern(grid: Grid, radius: int, periodic, *, fields: int = 1) -> sp.csr_matrix:
    """The sparsity pattern of a star stencil of reach `radius` on `grid`, for `fields` coupled fields.

    Point `i` is coupled to the points at most `radius` away along one axis at a time
    (wrapping where `periodic[axis]`; at a non-periodic wall the reflected ghosts stay
    inside that reach), and every field at a point to every field at those points. The
    state is field-major, C-order flattened: `(fields, *grid.shape)` -> `fields * grid.size`,
    as `ravel_pytree` of a dict of fields gives (fields in key order). This is the
    pattern of the right-hand side of every `sciax.pde.fd` model (their stencils are
    axis-aligned) with `radius = order // 2`.
    """
    periodic = tuple(bool(p) for p in (periodic if isinstance(periodic, (tuple, list)) else (periodic,) * grid.ndim))
    if len(periodic) != grid.ndim:
        raise ValueError(f"stencil_pattern: periodic needs one entry per axis ({grid.ndim}), got {periodic!r}")
    if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 0:
        raise ValueError(f"stencil_pattern: radius must be an integer >= 0, got {radius!r}")
    index = np.arange(grid.size).reshape(grid.shape)
    rows, cols = [index.ravel()], [index.ravel()]
    for axis, wrap in enumerate(periodic):
        for shift in range(1, radius + 1):
            for sign in (1, -1):
                neighbour = np.roll(index, -sign * shift, axis=axis)
                keep = np.ones(grid.shape, bool)
                if not wrap:
                    position = np.indices(grid.shape)[axis] + sign * shift
                    keep = (position >= 0) & (position < grid.shape[axis])
                rows.append(index[keep])
                cols.append(neighbour[keep])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    point = sp.csr_matrix((np.ones(rows.size, bool), (rows, cols)), shape=(grid.size, grid.size))
    return sp.csr_matrix(sp.kron(np.ones((fields, fields), bool), point), dtype=bool)


__all__ = ["column_colouring", "sparse_jacobian", "check_sparsity_pattern", "stencil_pattern"]
