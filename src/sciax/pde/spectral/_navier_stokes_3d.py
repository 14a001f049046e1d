"""3-D incompressible Navier–Stokes in velocity form on a periodic box, by Leray projection.

`u_t = nu laplacian(u) - mu u - P[(u . grad) u]`, where `P` removes the gradient
part of a field (the pressure). Using `(u . grad) u = grad(|u|^2 / 2) - u x omega`
with `omega = curl u`, the projected advection is `P(u x omega)`: six inverse FFTs
and three forward per evaluation (the rotational form of Canuto, Hussaini,
Quarteroni & Zang, "Spectral Methods: Evolution to Complex Geometries", 2007, sec. 3.3).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
from jaxtyping import Array, Complex, Float

from ...grid import Grid
from ...grid.fourier import derivative_symbol, laplacian_symbol, to_physical, to_spectral
from ._reaction import param, scalar_params
from ._semilinear import SemilinearPDE


def _project_hat(a_hat: Complex[Array, "*batch 3 nx ny nzh"], grid: Grid) -> Complex[Array, "*batch 3 nx ny nzh"]:
    """Leray projection in Fourier space: `a - k (k . a) / |k|^2` (the mean mode is kept)."""
    d = [derivative_symbol(grid, i, 1) for i in range(3)]  # i k_i, Nyquist zeroed
    k2 = -laplacian_symbol(grid)
    inv = jnp.where(k2 == 0, 0.0, 1.0 / jnp.where(k2 == 0, 1.0, k2))
    comps = jnp.unstack(a_hat, axis=-4)
    # with d_i = i k_i: k (k . a) / |k|^2 = -d (d . a) / |k|^2
    div = sum(di * ai for di, ai in zip(d, comps))
    return jnp.stack([ai + di * div * inv for di, ai in zip(d, comps)], axis=-4)


def project_divergence_free(u: Float[Array, "*batch 3 nx ny nz"], grid: Grid) -> Float[Array, "*batch 3 nx ny nz"]:
    """The divergence-free part of the velocity field `u` (Leray–Helmholtz projection); linear, differentiable."""
    _check_3d(grid, "project_divergence_free")
    return to_physical(_project_hat(to_spectral(u, grid), grid), grid)


def _check_3d(grid: Grid, name: str) -> None:
    if not isinstance(grid, Grid) or grid.ndim != 3:
        raise ValueError(f"{name}: needs a 3-D sciax.pde.Grid, got {grid!r:.80}")


def _ns3d_linear(k, p):
    drag = p.get("drag", 0.0) if isinstance(p, dict) else 0.0
    return -param(p, "nu", "navier_stokes_3d") * (k[0] ** 2 + k[1] ** 2 + k[2] ** 2) - drag


@dataclasses.dataclass(frozen=True)
class _RotationalAdvection:
    """`N_hat = P(rfft(u x curl u))`."""

    def __call__(self, t, u_hat, p, grid):
        d = [derivative_symbol(grid, i, 1) for i in range(3)]
        ux, uy, uz = jnp.unstack(u_hat, axis=-4)
        w_hat = [d[1] * uz - d[2] * uy, d[2] * ux - d[0] * uz, d[0] * uy - d[1] * ux]
        u, v, w, ox, oy, oz = jnp.unstack(to_physical(jnp.stack([ux, uy, uz, *w_hat], axis=-4), grid), axis=-4)
        cross = jnp.stack([v * oz - w * oy, w * ox - u * oz, u * oy - v * ox], axis=-4)
        return _project_hat(to_spectral(cross, grid), grid)


def navier_stokes_3d(grid: Grid, *, dealias: bool | float = True, bc=None) -> SemilinearPDE:
    """3-D incompressible Navier–Stokes for the velocity, state shape `(3, nx, ny, nz)` (fields u, v, w).

    `u_t = nu laplacian(u) - mu u - P[(u . grad) u]`, `P` the Leray projection (pressure eliminated).
    `u0` must be divergence-free (apply `project_divergence_free` first): the steppers keep
    the divergence it has. Beltrami flows (`curl u = k u`, e.g. the ABC flow) have `N = 0`
    and decay as `exp(-(nu k^2 + mu) t)`.

    **Params:** `{"nu": viscosity (length^2/time), "drag": mu (1/time, optional, default 0)}`.
    Split: `L = -nu |k|^2 - mu` per component, `N = P(u x curl u)`.
    """
    _check_3d(grid, "navier_stokes_3d")
    return SemilinearPDE(
        grid,
        _ns3d_linear,
        nonlinear_spectral=_RotationalAdvection(),
        fields=("u", "v", "w"),
        dealias=dealias,
        bc=bc,
        variable="velocity",
        param_shapes=scalar_params("navier_stokes_3d", "nu", optional=("drag",)),
    )
