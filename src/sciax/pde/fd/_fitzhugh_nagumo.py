"""FitzHugh–Nagumo reaction–diffusion by finite differences."""

from __future__ import annotations

from ...grid import Grid
from ...grid.stencils import laplacian
from ._model import FDModel, diffusion_radius, positive_param


def _tendency(t, y, p, model):
    du, dv = positive_param(p, "Du", model, "fitzhugh_nagumo"), positive_param(p, "Dv", model, "fitzhugh_nagumo")
    u, v = y["u"], y["v"]
    lap = lambda f: laplacian(f, model.grid, bc=model.halo, order=model.order, t=t)  # noqa: E731
    return {"u": du * lap(u) + u - u**3 - v, "v": dv * lap(v) + p["epsilon"] * (u - p["a"] * v - p["b"])}


def _radius(p, model):
    d = max(
        positive_param(p, "Du", model, "fitzhugh_nagumo").max(), positive_param(p, "Dv", model, "fitzhugh_nagumo").max()
    )
    return diffusion_radius(d, model) + 1.0, 0.0


def fitzhugh_nagumo(grid: Grid, *, bc, order: int = 2) -> FDModel:
    """FitzHugh–Nagumo `u_t = Du lap(u) + u - u^3 - v`, `v_t = Dv lap(v) + epsilon (u - a v - b)`.

    State: `{"u": activator, "v": inhibitor}`, each of shape `grid.shape`.
    Params: `{"Du", "Dv"}` (> 0), `"epsilon"` (time-scale ratio), `"a"`, `"b"`; differentiable.
    Turing patterns for `Dv >> Du`.
    """
    return FDModel(grid, _tendency, bc=bc, order=order, radius=_radius, variable="u")
