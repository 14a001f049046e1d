"""A field in a padded layout (ghost points around the grid, as `AcousticWave`'s padded-state step carries it):
zeros padded on, and ghosts written in place."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def pad_zeros(x, width: int, axis: int | None = None):
    """`x` with `width` zeros at both ends of `axis` (of every axis if `None`), in a new buffer."""
    config = [(width, width, 0) if axis in (None, b) else (0, 0, 0) for b in range(x.ndim)]
    return jax.lax.pad(x, jnp.zeros((), x.dtype), config)


def place_ghosts(x, pieces, width: int, padded=None):
    """`x` with the `(low, high)` ghosts that `pieces` gives per axis (`None`: none written) written in place,
    at the grid's points along the other axes. `x` carries `width` ghost points at both ends of the axes in
    `padded` (default: those `pieces` gives ghosts for)."""
    padded = [b for b in range(x.ndim) if pieces[b] is not None] if padded is None else padded
    for axis, pair in enumerate(pieces):
        if pair is None:
            continue
        for ghost, at in zip(pair, (0, x.shape[axis] - width)):
            corner = [width if b in padded else 0 for b in range(x.ndim)]
            corner[axis] = at
            x = jax.lax.dynamic_update_slice(x, ghost.astype(x.dtype), tuple(corner))
    return x
