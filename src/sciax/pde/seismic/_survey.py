"""`Survey`: the acoustic model and the shots of a seismic experiment (sources, receivers), checked
against the grid and its absorbing layers."""

from __future__ import annotations

import warnings

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, Int

from ...grid import CPML, Grid
from ..waves import AcousticWave

# Below this many grid points per wavelength at the peak frequency, second-order waves are visibly
# dispersive and inversions cycle-skip on the numerical error itself.
MIN_POINTS_PER_WAVELENGTH = 5.0


def _interior_bounds(model: AcousticWave) -> list[tuple[int, int]]:
    """Per axis, the first and last index outside the absorbing (CPML) layers."""
    bounds = []
    for axis, n in enumerate(model.grid.shape):
        sides = getattr(model.halo, "sides", ())
        low, high = sides[axis] if sides else (None, None)
        first = low.width if isinstance(low, CPML) else 0
        last = n - 1 - (high.width if isinstance(high, CPML) else 0)
        bounds.append((first, last))
    return bounds


def _check_points(points, model: AcousticWave, what: str) -> np.ndarray:
    points = np.asarray(points)
    ndim = model.grid.ndim
    if points.ndim != 2 or points.shape[1] != ndim or not np.issubdtype(points.dtype, np.integer):
        raise ValueError(
            f"Survey: {what} must be integer grid indices of shape (n, {ndim}), got {points.dtype} {points.shape}"
        )
    if len(points) == 0:
        raise ValueError(f"Survey: {what} must hold at least one point, got none")
    shape = np.asarray(model.grid.shape)
    bounds = _interior_bounds(model)
    for k, point in enumerate(points):
        if np.any(point < 0) or np.any(point >= shape):
            raise ValueError(
                f"Survey: {what[:-1]} {k} at {tuple(point.tolist())} lies outside the grid of shape "
                f"{tuple(shape.tolist())}"
            )
        for axis, (first, last) in enumerate(bounds):
            if not first <= point[axis] <= last:
                raise ValueError(
                    f"Survey: {what[:-1]} {k} at {tuple(point.tolist())} lies inside the absorbing layer along axis "
                    f"{axis}; indices {first}..{last} are outside it"
                )
    return points.astype(np.int32)


class Survey(eqx.Module):
    """A seismic survey: an `AcousticWave` model and its shots.

    Each shot fires one source (a grid point, `sources[k]`) recorded by all
    `receivers` (grid points, shared by the shots). Sources and receivers may sit
    at any grid point outside the absorbing layers; a point outside the grid or
    inside a `CPML` layer is a `ValueError` naming it.

    **Arguments:** `grid` (2-D or 3-D `sciax.pde.Grid`, lengths in m); `sources`:
    integer indices `(n_shots, ndim)`; `receivers`: integer indices
    `(n_receivers, ndim)`; `f0`: the peak frequency (Hz) that sizes the CPML
    profiles (use the wavelet's); `bc` (default `CPML(20)` on every side),
    `order` (space order 2-8): as for `AcousticWave`.

    **Fields:** `model` (the `AcousticWave`, which records at `receivers`),
    `sources` (`int32` array, `(n_shots, ndim)`), `interior` (per axis the first and
    last index outside the absorbing layers).
    """

    model: AcousticWave
    sources: Int[Array, "shots ndim"]
    interior: tuple[tuple[int, int], ...] = eqx.field(static=True)

    def __init__(self, grid: Grid, sources: ArrayLike, receivers: ArrayLike, *, f0: float, bc=None, order: int = 2):
        model = AcousticWave(grid, f0=f0, receivers=np.zeros((0, grid.ndim), int), bc=bc, order=order)
        receivers = _check_points(receivers, model, "receivers")
        sources = _check_points(sources, model, "sources")
        self.model = AcousticWave(grid, f0=f0, receivers=receivers, bc=bc, order=order)
        self.sources = jnp.asarray(sources)
        self.interior = tuple(_interior_bounds(model))

    @property
    def n_shots(self) -> int:
        return int(self.sources.shape[0])

    @property
    def receivers(self) -> np.ndarray:
        return np.asarray(self.model.receivers, dtype=np.int32)

    def interior_mask(self, dtype=jnp.float32) -> Float[Array, "..."]:
        """1 outside the absorbing layers, 0 inside them (grid-shaped)."""
        mask = np.zeros(self.model.grid.shape)
        mask[tuple(slice(first, last + 1) for first, last in self.interior)] = 1.0
        return jnp.asarray(mask, dtype)

    def check_sampling(self, c: ArrayLike, f_peak: float) -> float:
        """Grid points per minimum wavelength `min(c) / (f_peak * max(spacing))`; warns (with the numbers)
        below 5. `c` in m/s, `f_peak` in Hz."""
        if not f_peak > 0:
            raise ValueError(f"Survey.check_sampling: f_peak must be > 0 (Hz), got {f_peak!r}")
        c_min = float(jnp.min(jnp.asarray(c)))
        h = max(self.model.grid.spacing)
        points = c_min / (f_peak * h)
        if points < MIN_POINTS_PER_WAVELENGTH:
            warnings.warn(
                f"Survey: {points:.2f} grid points per minimum wavelength (min velocity {c_min:g} m/s, peak "
                f"frequency {f_peak:g} Hz, spacing {h:g} m) is below {MIN_POINTS_PER_WAVELENGTH:g}: expect "
                "numerical dispersion",
                stacklevel=2,
            )
        return points
