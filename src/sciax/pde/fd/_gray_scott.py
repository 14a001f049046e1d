"""Gray–Scott reaction–diffusion by finite differences."""

from __future__ import annotations

from ...grid import Grid
from ...grid.stencils import laplacian
from ._model import FDModel, diffusion_radius, positive_param


def _tendency(t, y, p, model):
    du, dv = positive_param(p, "Du", model, "gray_scott"), positive_param(p, "Dv", model, "gray_scott")
    u, v = y["u"], y["v"]
    uvv = u * v * v
    lap = lambda f: laplacian(f, model.grid, bc=model.halo, order=model.order, t=t)  # noqa: E731
    return {"u": du * lap(u) - uvv + p["F"] * (1 - u), "v": dv * lap(v) + uvv - (p["F"] + p["k"]) * v}


def _radius(p, model):
    d = max(positive_param(p, "Du", model, "gray_scott").max(), positive_param(p, "Dv", model, "gray_scott").max())
    return diffusion_radius(d, model) + 1.0, 0.0  # + O(1) reaction rates near the uniform states


def gray_scott(grid: Grid, *, bc, order: int = 2) -> FDModel:
    """Gray–Scott model `u_t = Du lap(u) - u v^2 + F (1 - u)`, `v_t = Dv lap(v) + u v^2 - (F + k) v`.

    State: `{"u": ..., "v": ...}`, each of shape `grid.shape`. Params: `{"Du", "Dv"}`
    (> 0, length^2/time), feed rate `"F"` and kill rate `"k"` (1/time); differentiable.
    Reference: J. E. Pearson, "Complex patterns in a simple system", Science 261 (1993) 189.
    """
    return FDModel(grid, _tendency, bc=bc, order=order, radius=_radius, variable="u")
