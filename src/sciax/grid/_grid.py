"""`Grid`: the geometry of a uniform grid in 1, 2 or 3 dimensions, and where its walls are."""

from __future__ import annotations

import math
from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

_DIM_NAMES = ("x", "y", "z")

# Where the points sit in their cells: the offset of point i is (i + shift) * dx from the origin.
POINTS = {"start": 0.0, "centre": 0.5}


def _as_tuple(value, what: str) -> tuple:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return tuple(value.tolist())
    raise TypeError(f"Grid: {what} must be a number or a sequence of numbers, got {value!r}")


def _per_axis(value, what: str, shape: tuple) -> tuple[float, ...]:
    """One float per axis from a number (the same on every axis) or a sequence of `len(shape)` numbers."""
    values = _as_tuple(value, what)
    if len(values) == 1 and len(shape) > 1:
        values = values * len(shape)
    if len(values) != len(shape):
        raise ValueError(
            f"Grid: {what} has {len(values)} entries but shape {shape!r} has {len(shape)}; "
            "give one number (used on every axis) or one per axis"
        )
    return tuple(float(v) for v in values)


def _check_points(points) -> str:
    if not isinstance(points, str) or points not in POINTS:
        raise ValueError(
            "Grid: points must be 'start' (x_i = origin + i dx: the periodic/Fourier layout, walls half a "
            "spacing before origin and before origin + length) or 'centre' (x_i = origin + (i + 1/2) dx: "
            f"cell centres, walls exactly at origin and origin + length), got points={points!r}"
        )
    return points


class Grid(eqx.Module):
    """A uniform grid of `shape` points over a box of `lengths`, in 1, 2 or 3 dimensions.

    Pure geometry: it knows the number of points, the box, the spacing and where
    the points sit in their cells, and nothing about boundary conditions, so
    spectral operators, finite-difference stencils and sharded grids all consult
    the same value. Each point is the centre of a cell of size `dx = length / n`;
    `points` chooses where those cells lie relative to `origin`:

    - `points="start"` (default): `x_i = origin + i dx`, `i = 0 .. n-1`, the
      natural layout of a periodic (Fourier) grid on `[origin, origin + length)`.
      The walls of a non-periodic axis (see `walls`) are then half a spacing
      before the box: at `origin - dx/2` and `origin + length - dx/2`.
    - `points="centre"`: `x_i = origin + (i + 1/2) dx`, cell centres of the box
      `[origin, origin + length]`, so the walls of a non-periodic axis are
      exactly at `origin` and `origin + length`. Use it for finite-difference
      models with `Dirichlet`/`Neumann` conditions on walls at known positions.

    Spacing-only operators (every spectral operator and FD stencil) give the
    same result on both layouts; only the coordinates (`coords`, `meshgrid`,
    `to_xarray`) and `walls` differ.

    All fields are static (plain Python values), so a `Grid` is hashable, has no
    array leaves and passes unchanged through `jax.jit`/`jax.vmap`/`jax.grad`.

    **Arguments:**

    - `shape`: number of points per axis, an int (1-D) or a tuple of 1 to 3 ints, each >= 2.
    - `lengths`: box length per axis (in the model's length units), a positive number
      (used for every axis) or a tuple with one entry per axis.
    - `origin`: the box's lower corner per axis, a number (used for every axis) or a
      tuple with one entry per axis; default zeros.
    - `points`: `"start"` or `"centre"`, keyword only (see above).
    """

    shape: tuple[int, ...] = eqx.field(static=True)
    lengths: tuple[float, ...] = eqx.field(static=True)
    origin: tuple[float, ...] = eqx.field(static=True)
    points: str = eqx.field(static=True)

    def __init__(self, shape, lengths, origin=None, *, points: str = "start"):
        shape = _as_tuple(shape, "shape")
        if not 1 <= len(shape) <= 3:
            raise ValueError(f"Grid: shape must have 1, 2 or 3 entries, got {shape!r}")
        for n in shape:
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
                raise ValueError(f"Grid: every entry of shape must be an integer >= 2, got shape={shape!r}")
        lengths = _per_axis(lengths, "lengths", shape)
        if not all(math.isfinite(v) and v > 0 for v in lengths):
            raise ValueError(f"Grid: every entry of lengths must be finite and > 0, got lengths={lengths!r}")
        origin = (0.0,) * len(shape) if origin is None else _per_axis(origin, "origin", shape)
        if not all(math.isfinite(v) for v in origin):
            raise ValueError(f"Grid: every entry of origin must be finite, got origin={origin!r}")
        self.shape = tuple(int(n) for n in shape)
        self.lengths = lengths
        self.origin = origin
        self.points = _check_points(points)

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
    def cell_volume(self) -> float:
        """The product of the spacings: length, area or volume of one cell."""
        return math.prod(self.spacing)

    @property
    def dims(self) -> tuple[str, ...]:
        """Dimension names, `("x", "y", "z")[:ndim]`."""
        return _DIM_NAMES[: self.ndim]

    @property
    def walls(self) -> tuple[tuple[float, float], ...]:
        """`((low, high), ...)` per axis: the positions `x_0 - dx/2` and `x_{n-1} + dx/2`.

        These are the faces on which the non-periodic boundary conditions of
        `sciax.pde.fd` stencils and FD models act (`Dirichlet` sets `u` there,
        `Neumann` the outward derivative there): `(origin, origin + length)` for
        `points="centre"`, `(origin - dx/2, origin + length - dx/2)` for
        `points="start"`. On a periodic axis they bound one period.
        """
        below = 0.5 - POINTS[self.points]  # how many spacings the low wall lies below the origin
        return tuple(
            (o - below * d, o - below * d + length) for o, d, length in zip(self.origin, self.spacing, self.lengths)
        )

    def coords(self) -> tuple[np.ndarray, ...]:
        """Point coordinates per axis (1-D numpy arrays): `origin + i dx` (`points="start"`) or
        `origin + (i + 1/2) dx` (`points="centre"`), `i = 0 .. n-1`."""
        shift = POINTS[self.points]
        return tuple(o + (np.arange(n) + shift) * d for o, n, d in zip(self.origin, self.shape, self.spacing))

    def meshgrid(self) -> tuple[np.ndarray, ...]:
        """Coordinates broadcast to the full grid (`indexing="ij"`), each of shape `shape`."""
        return tuple(np.meshgrid(*self.coords(), indexing="ij"))

    def integrate(self, u: Float[ArrayLike, "*batch *grid"]) -> Float[Array, "*batch"]:
        """The integral of a grid field over the cells, i.e. between `walls` on every axis.

        `u`: an array whose last `ndim` axes have the grid's shape (any leading
        axes are batch axes, e.g. time or fields), or a dict of such arrays (an FD
        system's state; the result is then a dict). Returns `sum(u) * cell_volume`
        over the grid axes, shape `u.shape[:-ndim]`, in units of `u` times volume.

        This is the midpoint (rectangle) rule: exact to round-off for a periodic
        field resolved by the grid (trigonometric modes below the Nyquist mode),
        second order in the spacing for a smooth field on cell centres between
        walls. Linear in `u`, so differentiable; `jit`/`vmap` safe.
        """
        if isinstance(u, dict):
            return {key: self._integrate(value, f"u[{key!r}]") for key, value in u.items()}
        return self._integrate(u, "u")

    def _integrate(self, u, what: str):
        try:
            u = jnp.asarray(u)
        except TypeError:
            raise TypeError(
                f"Grid.integrate: {what} must be an array (or a dict of arrays), got {type(u).__name__}"
            ) from None
        if u.ndim < self.ndim or u.shape[u.ndim - self.ndim :] != self.shape:
            raise ValueError(
                f"Grid.integrate: the last {self.ndim} axes of {what} must have the grid's shape {self.shape}, "
                f"got shape {u.shape}"
            )
        if not jnp.issubdtype(u.dtype, jnp.inexact):
            u = u.astype(jnp.result_type(float))
        # A Python float is weakly typed: the result keeps u's precision (float32 stays float32).
        return jnp.sum(u, axis=tuple(range(u.ndim - self.ndim, u.ndim))) * self.cell_volume
