"""Advection–diffusion equation `u_t + v . grad u = div(D grad u)` by finite differences."""

from __future__ import annotations

import jax.numpy as jnp

from ...grid import Grid
from ...grid.stencils import derivative, diffusion, symbol_radius
from ._advection import upwind, weno5
from ._model import FDModel, diffusion_radius, positive_param


def _velocity(p, model):
    v = p.get("velocity") if isinstance(p, dict) else None
    if v is None or len(v) != model.grid.ndim:
        raise ValueError(
            f'advection_diffusion: params["velocity"] must give {model.grid.ndim} components (one per axis)'
        )
    return tuple(jnp.asarray(vi) for vi in v)


def _central(u, vi, axis, model, t):
    return vi * derivative(u, model.grid, axis, bc=model.halo, order=model.order, t=t)


def _upwind(u, vi, axis, model, t):
    return vi * upwind(u, vi, model.grid, axis, bc=model.halo, t=t)


def _weno5(u, vi, axis, model, t):
    # Advective form: du/dx reconstructed from the upwind side of vi.
    return vi * weno5(u, model.grid, axis, wind=vi, bc=model.halo, t=t)


def _tendency(advect):
    def tendency(t, u, p, model):
        d = positive_param(p, "D", model, "advection_diffusion")
        adv = sum(advect(u, vi, i, model, t) for i, vi in enumerate(_velocity(p, model)))
        return diffusion(u, d, model.grid, bc=model.halo, order=model.order, t=t) - adv

    return tendency


def _radius(central: bool):
    def radius(p, model):
        d = positive_param(p, "D", model, "advection_diffusion")
        speed = sum(jnp.max(jnp.abs(vi)) / h for vi, h in zip(_velocity(p, model), model.grid.spacing))
        if central:
            return diffusion_radius(d, model), symbol_radius("d1", model.order) * speed
        # Upwind-biased schemes: eigenvalues within a disc of radius ~ speed centred at -speed.
        return diffusion_radius(d, model) + 2.0 * speed, 2.0 * speed

    return radius


# Built once, so that models with the same scheme share compiled code (static fields hash equal).
_SCHEMES = {
    "central": (_tendency(_central), _radius(True)),
    "upwind": (_tendency(_upwind), _radius(False)),
    "weno5": (_tendency(_weno5), _radius(False)),
}


def advection_diffusion(grid: Grid, *, bc, order: int = 2, scheme: str = "central") -> FDModel:
    """`u_t + sum_i v_i du/dx_i = div(D grad u)` (advective form) in 1-3 dimensions.

    Params: `{"velocity": (v_x, ...)}` (one component per axis, scalars or
    grid-shaped, length/time) and `{"D": diffusivity}` (> 0); differentiable.
    `scheme`: `"central"` (order `order`), `"upwind"` (first order) or `"weno5"`
    (fifth order, non-oscillatory) for the advection term.
    """
    if scheme not in _SCHEMES:
        raise ValueError(f"advection_diffusion: scheme must be one of {tuple(_SCHEMES)}, got {scheme!r}")
    tendency, radius = _SCHEMES[scheme]
    reach = max(order - 1, 3) if scheme == "weno5" else None  # WENO5 reads 3 points each way
    return FDModel(grid, tendency, bc=bc, order=order, radius=radius, reach=reach, long_name="concentration")
