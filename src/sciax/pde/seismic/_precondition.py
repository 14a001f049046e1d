"""Gradient preconditioning for full-waveform inversion: the illumination (diagonal
pseudo-Hessian) of the source wavefields, muting near sources and receivers and in the absorbing layers."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._survey import Survey


def mute_mask(survey: Survey, radius: float, dtype=jnp.float32) -> Float[Array, "..."]:
    """Grid-shaped weights: 0 inside the absorbing layers; around every source and receiver a cosine
    taper rising from 0 at the point to 1 at `radius` grid points (`radius=0`: no taper); 1 elsewhere.

    Why: the gradient of a seismogram misfit is largest at the sources and receivers (the
    wavefields are singular there), and an update concentrated there fits the data by changing
    the injected and recorded amplitudes instead of the medium.
    """
    grid = survey.model.grid
    mask = np.asarray(survey.interior_mask(jnp.float32), np.float64)  # 0 or 1: exact in float32
    if radius > 0:
        index = np.indices(grid.shape).reshape(grid.ndim, -1).T
        points = np.concatenate([np.asarray(survey.sources), survey.receivers])
        dist = np.full(index.shape[0], np.inf)
        for p in points:
            dist = np.minimum(dist, np.sqrt(np.sum((index - p) ** 2, axis=1)))
        ramp = np.clip(dist / radius, 0.0, 1.0)
        mask = mask * (0.5 * (1 - np.cos(np.pi * ramp))).reshape(grid.shape)
    return jnp.asarray(mask, dtype)


def illumination_preconditioner(
    energy: Float[Array, "..."], mask: Float[Array, "..."], stabilisation: float = 1e-2
) -> Float[Array, "..."]:
    """The diagonal scaling `s = mask / sqrt(E / max(mask E) + stabilisation)`, normalised to max 1.

    `E`: the source-wavefield energy `sum_shots sum_t p^2` (see `model_shots(..., energy=True)`),
    the diagonal of the pseudo-Hessian of Shin et al. (2001, Geophysical Prospecting 49, 592).
    Used as a change of variables `c = c_start + s x`: a gradient step in `x` moves `c` by
    `s^2` times the gradient in `c`, the pseudo-Hessian-scaled step `g / (E + eps)`, so deep,
    poorly lit cells are updated as much as shallow ones. `stabilisation` (relative to the
    largest energy) bounds the amplification where little energy arrives.
    """
    lit = energy * mask
    scaled = energy / jnp.maximum(jnp.max(lit), jnp.finfo(energy.dtype).tiny)
    s = mask / jnp.sqrt(scaled + stabilisation)
    return s / jnp.max(s)
