"""The convolutional perfectly matched layer (CPML) of wave models: damping profiles, the
recursive-convolution coefficients of one step, and the memory variables they update.

Reference: D. Komatitsch and R. Martin, "An unsplit convolutional perfectly matched layer
improved at grazing incidence for the seismic wave equation", Geophysics 72 (2007) SM155
(the profiles `d`, `alpha`, `kappa` and the coefficients `b = exp(-(d / kappa + alpha) dt)`,
`a = d (b - 1) / (kappa (d + kappa alpha))`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array

from ...grid import CPML, AbstractHalo, Grid, layer_depth
from ..fd._model import block_part


class CPMLProfile(NamedTuple):
    """The layer's damping `d` (1/time), frequency shift `alpha` (1/time) and `1 / kappa` along one
    axis, at the points or at the half points (arrays of extent 1 along every other axis)."""

    d: Array
    alpha: Array
    inv_kappa: Array


class CPMLCoefficients(NamedTuple):
    """One step's recursive convolution `psi+ = b psi + a du` and stretch `1 / kappa`, where
    `du` is the derivative the layer modifies: `du / kappa + psi+`."""

    b: Array
    a: Array
    inv_kappa: Array


class CPMLAxis(NamedTuple):
    """The CPML coefficients of one axis at the points and at the half points (faces)."""

    points: CPMLCoefficients
    faces: CPMLCoefficients


class CPMLMemory(NamedTuple):
    """The memory variables of one axis: of the pressure gradient (at the half points, `faces`) and
    of the divergence (at the points, `points`). Part of the wave model's state under leapfrog."""

    faces: Array
    points: Array


def cpml_profiles(
    halo: AbstractHalo, grid: Grid, axis: int, c_max, f0: float
) -> tuple[CPMLProfile, CPMLProfile] | None:
    """The profiles at the points and at the half points along `axis`, or `None` without a `CPML` side.

    The layers sit at the whole grid's edges: on one block of a sharded grid the whole profile
    is built and the block's part sliced (`halo.placement`). `c_max`: the largest velocity (sets
    `d0 = -(power + 1) c_max log(R) / (2 L)`); `f0`: the source frequency (`alpha_max = pi f0`
    unless the side sets it). The profiles take `c_max`'s dtype.
    """
    low, high = getattr(halo, "sides", ((None, None),) * grid.ndim)[axis]
    if not (isinstance(low, CPML) or isinstance(high, CPML)):
        return None
    offsets, global_shape = halo.placement(grid.shape)
    n, dx = global_shape[axis], grid.spacing[axis]
    shape = [1] * grid.ndim
    shape[axis] = n
    dtype = jnp.result_type(c_max)
    out = []
    for shift in (0.0, 0.5):
        d = alpha = 0.0
        inv_k = 1.0
        for side, q in (
            (low, layer_depth(n, low, None, CPML, shift)),
            (high, layer_depth(n, None, high, CPML, shift)),
        ):
            if not isinstance(side, CPML):
                continue
            d0 = -(side.power + 1) * c_max * math.log(side.reflection) / (2 * side.width * dx)
            alpha_max = math.pi * f0 if side.alpha_max is None else side.alpha_max
            d = d + d0 * q**side.power
            alpha = alpha + alpha_max * (1 - q) * (q > 0)
            inv_k = inv_k / (1 + (side.kappa_max - 1) * q**side.power)
        whole = (
            jnp.asarray(x, dtype).reshape(shape) for x in (d * jnp.ones(n), alpha * np.ones(n), inv_k * np.ones(n))
        )
        out.append(CPMLProfile(*(block_part(x, axis, offsets[axis], grid.shape[axis]) for x in whole)))
    return out[0], out[1]


def cpml_step(profile: CPMLProfile, dt: float) -> CPMLCoefficients:
    """The coefficients of a step `dt` from a profile."""
    d, alpha, inv_k = profile
    b = jnp.exp(-(d * inv_k + alpha) * dt)
    # Guard the denominator: outside the layer d = alpha = 0 and 0/0 would poison gradients.
    denom = jnp.where(d > 0, d + alpha / inv_k, 1.0)
    a = jnp.where(d > 0, d * (b - 1) / denom * inv_k, 0.0)
    return CPMLCoefficients(b, a, inv_k)


def cpml_axis(profiles: tuple[CPMLProfile, CPMLProfile] | None, dt: float) -> CPMLAxis | None:
    """The coefficients of one axis for steps `dt`, or `None` without a layer."""
    if profiles is None:
        return None
    return CPMLAxis(cpml_step(profiles[0], dt), cpml_step(profiles[1], dt))


def damping_rate(profile: CPMLProfile) -> Array:
    """The layer's damping rate `d / kappa + alpha` (1/time), 0 outside the layer.

    The rate itself, not `-log(b)` at `dt = 1`: `b = exp(-rate)` underflows to 0 in float32 for
    realistic layers (rate > 87/time), which would make the rate, and RK4's stable dt, inf.
    """
    return jnp.where(profile.d > 0, profile.d * profile.inv_kappa + profile.alpha, 0.0)
