"""Colour probing: the diagonal and the sparse matrix of a matrix-free stencil operator.

A stencil that reaches at most `radius` points along each axis couples point
`i` only to points `j` with `|i - j| <= radius` per axis (after periodic
wrapping; boundary reflections stay within that reach). Points that share a
colour `i mod m` with `m >= 2 radius + 1` never couple to the same row, so one
operator application on the indicator of a colour recovers, in every row, the
single entry that colour contributes. `prod(m)` applications recover the whole
matrix (Curtis–Powell–Reid probing; facts only, no code taken from elsewhere).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..grid import Grid


def colour_moduli(grid: Grid, periodic: tuple[bool, ...], radius: int) -> tuple[int, ...]:
    """Per axis, the colour period `m >= 2 radius + 1`; on a periodic axis it must divide `n`
    (else wrapped neighbours could share a colour), falling back to `m = n`."""
    out = []
    for n, wrap in zip(grid.shape, periodic):
        m = 2 * radius + 1
        if m >= n:
            out.append(n)
            continue
        if wrap:
            m = next((k for k in range(m, n + 1) if n % k == 0), n)
        out.append(m)
    return tuple(out)


def _colours(grid: Grid, moduli):
    idx = np.indices(grid.shape)
    for colour in itertools.product(*(range(m) for m in moduli)):
        mask = np.ones(grid.shape, bool)
        for axis, c in enumerate(colour):
            mask &= idx[axis] % moduli[axis] == c
        yield colour, mask


def probe_diagonal(matvec: Callable, grid: Grid, periodic, radius: int, dtype) -> jax.Array:
    """The diagonal of the linear map `matvec` on `grid` (shape `grid.shape`), by colour probing.

    Costs `prod(moduli)` applications (9 for a 2-D 5-point stencil), run as a `lax.scan`
    so the stencil is compiled once; differentiable and traceable.
    """
    moduli = colour_moduli(grid, periodic, radius)
    # Colour of every point as one integer, and the list of colours.
    idx = np.indices(grid.shape)
    colour_of = np.zeros(grid.shape, np.int32)
    for axis, m in enumerate(moduli):
        colour_of = colour_of * m + idx[axis] % m
    colour_of = jnp.asarray(colour_of)

    def body(diag, c):
        mask = (colour_of == c).astype(dtype)
        return diag + mask * matvec(mask), None

    n_colours = int(np.prod(moduli))
    return jax.lax.scan(body, jnp.zeros(grid.shape, dtype), jnp.arange(n_colours, dtype=jnp.int32))[0]


def probe_sparse(matvec: Callable, grid: Grid, periodic, radius: int, dtype):
    """`(rows, cols, values)` (numpy, flat C-order indices) of the nonzero entries of `matvec`.

    Needs concrete values (call outside `jax.jit`); used to materialise a `BCOO` matrix.
    """
    moduli = colour_moduli(grid, periodic, radius)
    shape = grid.shape
    idx = np.indices(shape)
    rows, cols, vals = [], [], []
    flat_rows = np.arange(grid.size).reshape(shape)
    for colour, mask in _colours(grid, moduli):
        out = np.asarray(matvec(jnp.asarray(mask, dtype)))
        # In every row, the one point of this colour within reach (if any) is the column.
        col_idx, valid = [], np.ones(shape, bool)
        for axis, (n, m, c) in enumerate(zip(shape, moduli, colour)):
            i = idx[axis]
            j = i - radius + np.mod(c - (i - radius), m)  # smallest j >= i - radius with j = c mod m
            if periodic[axis]:
                j = np.mod(j, n)
            else:
                valid &= (j >= 0) & (j < n)
                j = np.clip(j, 0, n - 1)
            valid &= np.abs(np.mod(j - i + n // 2, n) - n // 2) <= radius if periodic[axis] else np.abs(j - i) <= radius
            col_idx.append(j)
        cols_flat = np.ravel_multi_index(tuple(col_idx), shape)
        keep = valid & (out != 0)
        rows.append(flat_rows[keep])
        cols.append(cols_flat[keep])
        vals.append(out[keep])
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
