"""`Grid`: the geometry of a uniform, cell-start grid in 1, 2 or 3 dimensions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import equinox as eqx
import numpy as np

_DIM_NAMES = ("x", "y", "z")


def _as_tuple(value, what: str) -> tuple:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return tuple(value.tolist())
    raise TypeError(f"Grid: {what} must be a number or a sequence of numbers, got {value!r}")


class Grid(eqx.Module):
    """A uniform grid on the box `[origin, origin + lengths)` in 1, 2 or 3 dimensions.

    Pure geometry: it knows the number of points, the box and the spacing, and
    nothing about boundary conditions, so spectral operators, finite-difference
    stencils and (later) sharded grids can all consult the same value. Points are
    cell starts, `x_i = origin + i * dx` with `dx = length / n`, `i = 0 .. n-1`,
    the natural layout of a periodic (Fourier) grid.

    All fields are static (plain Python tuples), so a `Grid` is hashable, has no
    array leaves and passes unchanged through `jax.jit`/`jax.vmap`/`jax.grad`.

    **Arguments:**

    - `shape`: number of points per axis, an int (1-D) or a tuple of 1 to 3 ints, each >= 2.
    - `lengths`: box length per axis (in the model's length units), a positive number
      (used for every axis) or a tuple with one entry per axis.
    - `origin`: coordinate of the first point per axis; default zeros.
    """

    shape: tuple[int, ...] = eqx.field(static=True)
    lengths: tuple[float, ...] = eqx.field(static=True)
    origin: tuple[float, ...] = eqx.field(static=True)

    def __init__(self, shape, lengths, origin=None):
        shape = _as_tuple(shape, "shape")
        if not 1 <= len(shape) <= 3:
            raise ValueError(f"Grid: shape must have 1, 2 or 3 entries, got {shape!r}")
        for n in shape:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
                raise ValueError(f"Grid: every entry of shape must be an integer >= 2, got shape={shape!r}")
        ndim = len(shape)
        lengths = _as_tuple(lengths, "lengths")
        if len(lengths) == 1 and ndim > 1:
            lengths = lengths * ndim
        if len(lengths) != ndim:
            raise ValueError(
                f"Grid: lengths has {len(lengths)} entries but shape {shape!r} has {ndim}; give one per axis"
            )
        lengths = tuple(float(v) for v in lengths)
        if not all(math.isfinite(v) and v > 0 for v in lengths):
            raise ValueError(f"Grid: every entry of lengths must be finite and > 0, got lengths={lengths!r}")
        origin = (0.0,) * ndim if origin is None else tuple(float(v) for v in _as_tuple(origin, "origin"))
        if len(origin) != ndim:
            raise ValueError(
                f"Grid: origin has {len(origin)} entries but shape {shape!r} has {ndim}; give one per axis"
            )
        if not all(math.isfinite(v) for v in origin):
            raise ValueError(f"Grid: every entry of origin must be finite, got origin={origin!r}")
        self.shape = tuple(int(n) for n in shape)
        self.lengths = lengths
        self.origin = origin

    @property
    def ndim(self) -> int:
        """Number of spatial dimensions (1, 2 or 3)."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Total number of points."""
        return math.prod(self.shape)

    @property
    def spacing(self) -> tuple[float, ...]:
        """Grid spacing per axis, `lengths[i] / shape[i]`."""
        return tuple(length / n for length, n in zip(self.lengths, self.shape))

    @property
    def dims(self) -> tuple[str, ...]:
        """Dimension names, `("x", "y", "z")[:ndim]`."""
        return _DIM_NAMES[: self.ndim]

    def coords(self) -> tuple[np.ndarray, ...]:
        """Point coordinates per axis: `origin + i * dx`, `i = 0 .. n-1` (1-D numpy arrays)."""
        return tuple(o + np.arange(n) * d for o, n, d in zip(self.origin, self.shape, self.spacing))

    def meshgrid(self) -> tuple[np.ndarray, ...]:
        """Coordinates broadcast to the full grid (`indexing="ij"`), each of shape `shape`."""
        return tuple(np.meshgrid(*self.coords(), indexing="ij"))
