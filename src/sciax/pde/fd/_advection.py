"""Upwind-biased derivatives for advection: first-order upwind and WENO5.

Reference for WENO5: G.-S. Jiang and C.-W. Shu, "Efficient implementation of
weighted ENO schemes", J. Comput. Phys. 126 (1996) 202–228 (smoothness
indicators, linear weights 1/10, 6/10, 3/10).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ...grid import Grid, as_halo
from ...grid.stencils import check_axis, check_field, shift


def _wind(velocity, u, grid: Grid, name: str):
    v = jnp.asarray(velocity, u.dtype)
    if v.ndim and v.shape != grid.shape:
        raise ValueError(f"{name}: velocity has shape {v.shape}; expected a scalar or the grid shape {grid.shape}")
    return v


def upwind(
    u: Float[Array, "..."], velocity: Float[ArrayLike, "..."], grid: Grid, axis: int = 0, *, bc, t: ArrayLike = 0.0
) -> Float[Array, "..."]:
    """First-order upwind `du/dx_axis`: the backward difference where `velocity > 0`, forward elsewhere.

    `velocity`: the advecting velocity component along `axis` (scalar or grid-shaped);
    only its sign is used. Shape `grid.shape`; order 1. Differentiable in `u`.
    """
    u = check_field(u, grid, "upwind")
    axis = check_axis(axis, grid, "upwind")
    v = _wind(velocity, u, grid, "upwind")
    n, dx = grid.shape[axis], grid.spacing[axis]
    up = as_halo(grid, bc).pad(u, 1, t=t, axes=(axis,))
    backward = (shift(up, axis, 1, n) - shift(up, axis, 0, n)) / dx
    forward = (shift(up, axis, 2, n) - shift(up, axis, 1, n)) / dx
    return jnp.where(v > 0, backward, forward)


def _weno_face(v1, v2, v3, v4, v5, eps):
    # Reconstruction at the face between v3 and v4, biased towards v1 (the upwind side).
    q0 = (2 * v1 - 7 * v2 + 11 * v3) / 6
    q1 = (-v2 + 5 * v3 + 2 * v4) / 6
    q2 = (2 * v3 + 5 * v4 - v5) / 6
    b0 = 13 / 12 * (v1 - 2 * v2 + v3) ** 2 + 0.25 * (v1 - 4 * v2 + 3 * v3) ** 2
    b1 = 13 / 12 * (v2 - 2 * v3 + v4) ** 2 + 0.25 * (v2 - v4) ** 2
    b2 = 13 / 12 * (v3 - 2 * v4 + v5) ** 2 + 0.25 * (3 * v3 - 4 * v4 + v5) ** 2
    a0, a1, a2 = 0.1 / (eps + b0) ** 2, 0.6 / (eps + b1) ** 2, 0.3 / (eps + b2) ** 2
    return (a0 * q0 + a1 * q1 + a2 * q2) / (a0 + a1 + a2)


def weno5(
    f: Float[Array, "..."],
    grid: Grid,
    axis: int = 0,
    *,
    wind: Float[ArrayLike, "..."],
    bc,
    t: ArrayLike = 0.0,
    eps: float = 1e-6,
) -> Float[Array, "..."]:
    """WENO5 (Jiang–Shu) derivative `df/dx_axis` in flux-difference form, shape `grid.shape`.

    `f` is reconstructed at every half point from the upwind side given by the
    sign of `wind` (scalar or grid-shaped; averaged to the half points), then
    differenced: `(F_{i+1/2} - F_{i-1/2}) / dx`. Fifth order where `f` is smooth,
    non-oscillatory at shocks. For `u_t + c u_x = 0` use `f = u, wind = c`; for
    Burgers `f = u**2 / 2, wind = u`. Differentiable in `f` (almost everywhere).
    """
    f = check_field(f, grid, "weno5")
    axis = check_axis(axis, grid, "weno5")
    w = _wind(wind, f, grid, "weno5")
    n, dx = grid.shape[axis], grid.spacing[axis]
    halo = as_halo(grid, bc)
    fp = halo.pad(f, 3, t=t, axes=(axis,))
    # Faces j + 1/2 for j = -1 .. n-1 (n + 1 of them); padded index of point j is j + 3.
    v = [shift(fp, axis, s, n + 1) for s in range(6)]  # v[k] = f[j - 2 + k]
    left = _weno_face(v[0], v[1], v[2], v[3], v[4], eps)
    right = _weno_face(v[5], v[4], v[3], v[2], v[1], eps)
    if w.ndim:
        wp = halo.pad(w, 1, flux=True, axes=(axis,))
        w_face = 0.5 * (shift(wp, axis, 0, n + 1) + shift(wp, axis, 1, n + 1))
    else:
        w_face = w
    face = jnp.where(w_face > 0, left, right)
    return (shift(face, axis, 1, n) - shift(face, axis, 0, n)) / dx
