"""Viscous Burgers equation `u_t + (u^2/2)_x = nu u_xx` by finite differences (1-D)."""

from __future__ import annotations

import jax.numpy as jnp

from ...grid import Grid
from ...grid.stencils import diffusion
from ._advection import weno5
from ._model import FDModel, diffusion_radius, positive_param


def _tendency(t, u, p, model):
    nu = positive_param(p, "nu", model, "burgers")
    flux = weno5(0.5 * u**2, model.grid, 0, wind=u, bc=model.halo, t=t)
    return diffusion(u, nu, model.grid, bc=model.halo, order=model.order, t=t) - flux


def _radius(p, model):
    # Advective speed bounded by the largest |u| is state dependent; the check covers diffusion only.
    return diffusion_radius(positive_param(p, "nu", model, "burgers"), model), jnp.zeros(())


def burgers(grid: Grid, *, bc, order: int = 2) -> FDModel:
    """Viscous Burgers `u_t + (u^2 / 2)_x = nu u_xx` (1-D), conservative WENO5 flux, viscous term of order `order`.

    Params: `{"nu": viscosity}` (length^2/time, > 0); differentiable. Shocks stay
    non-oscillatory thanks to WENO5. RK4's CFL check covers the viscous term only:
    also keep `dt * max|u| / dx` below about 1.
    """
    if grid.ndim != 1:
        raise ValueError(f"burgers: this equation is 1-D; got a {grid.ndim}-D grid of shape {grid.shape}")
    # WENO5 reads 3 points each way, the viscous term `order - 1`.
    return FDModel(grid, _tendency, bc=bc, order=order, radius=_radius, reach=max(order - 1, 3), long_name="velocity")
