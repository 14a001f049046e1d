"""Coarse graining of fine periodic solutions to a grid `factor` times coarser (along the last
axis): cell averaging (`coarse_grain`, the finite-volume view) and Fourier truncation
(`spectral_filter`, the spectral view)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

POINTS = ("start", "centre")


def _coarse_cells(name: str, u, factor) -> int:
    """The number of fine cells along the last axis, after checking that `factor` divides it."""
    n = jnp.shape(u)[-1] if jnp.ndim(u) else None
    if isinstance(factor, bool) or not isinstance(factor, (int, np.integer)) or factor < 1:
        raise ValueError(f"{name}: factor must be an integer >= 1, got {factor!r}")
    if n is None or n % factor:
        raise ValueError(
            f"{name}: the coarsening factor {factor} must divide the number of fine cells along the last "
            f"axis, got {n} cells"
        )
    return n


def coarse_grain(u: Float[Array, "... n"], factor: int) -> Float[Array, "... n/factor"]:
    """Cell averages on a grid `factor` times coarser along the last axis: coarse cell `j` is the
    mean of fine cells `j factor .. (j + 1) factor - 1` (grids with `points="centre"`). Exact for
    conservation: the total is kept. `ValueError` unless `factor` is an integer >= 1 dividing
    the number of cells."""
    n = _coarse_cells("coarse_grain", u, factor)
    return jnp.mean(jnp.reshape(u, (*jnp.shape(u)[:-1], n // factor, factor)), axis=-1)


def spectral_filter(u: Float[Array, "... n"], factor: int, *, points: str = "start") -> Float[Array, "... n/factor"]:
    """The fine periodic field's Fourier modes below the coarse grid's Nyquist wavenumber, sampled
    at the coarse grid's points (a sharp spectral cutoff: the coarse-graining of spectral models,
    e.g. Kochkov et al., PNAS 2021, for 2-D turbulence). Along the last axis, `n` fine points to
    `n / factor`; `points` is the grids' layout (`sciax.pde.Grid(points=...)`): `"start"`, points at
    `i dx` (the spectral solvers' default), or `"centre"`, at `(i + 1/2) dx`, where the coarse
    points are not fine points and the modes are shifted to them. The coarse Nyquist mode (a
    cosine the coarse grid cannot tell from its sine) is dropped. Exact for fields whose modes are
    all below it; keeps the mean and the precision; linear, so differentiable. `ValueError` unless `factor` is an
    integer >= 1 dividing `n`, or for another `points`."""
    n = _coarse_cells("spectral_filter", u, factor)
    if points not in POINTS:
        raise ValueError(f"spectral_filter: points must be one of {POINTS}, got {points!r}")
    n_coarse = n // factor
    kept = (n_coarse + 1) // 2  # modes 0 .. kept - 1: strictly below the coarse Nyquist wavenumber
    u_hat = jnp.fft.rfft(u, axis=-1)[..., :kept]
    if points == "centre":
        # Coarse point i sits at fine position i factor + (factor - 1) / 2 (in fine spacings).
        shift = (factor - 1) / 2
        u_hat = u_hat * jnp.exp(2j * jnp.pi * jnp.arange(kept) * shift / n).astype(u_hat.dtype)
    return jnp.fft.irfft(u_hat, n=n_coarse, axis=-1) / factor
