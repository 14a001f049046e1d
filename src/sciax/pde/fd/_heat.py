"""Heat (diffusion) equation with variable diffusivity, by finite differences."""

from __future__ import annotations

from ...grid import Grid
from ...grid.stencils import diffusion
from ._model import FDModel, diffusion_radius, positive_param


def _tendency(t, u, p, model):
    d = positive_param(p, "D", model, "heat")
    return diffusion(u, d, model.grid, bc=model.halo, order=model.order, t=t)


def _radius(p, model):
    return diffusion_radius(positive_param(p, "D", model, "heat"), model), 0.0


def heat(grid: Grid, *, bc, order: int = 2) -> FDModel:
    """`u_t = div(D grad u)` in 1-3 dimensions (conservative form).

    Params: `{"D": diffusivity}` (length^2/time, > 0), a scalar or an array of
    shape `grid.shape`; differentiable. `bc`: any of `Periodic`, `Dirichlet`,
    `Neumann`, `Sponge` (per side). Stiff, yet the explicit default `Tsit5` is the
    faster here than the stiff methods (see `FDModel.default_method`); use
    `sciax.pde.RK4(dt)` for fixed, CFL-checked steps.
    """
    return FDModel(grid, _tendency, bc=bc, order=order, radius=_radius, long_name="temperature")
