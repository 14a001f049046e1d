"""`Advection`: the linear advection equation `u_t + a u_x = 0` in finite-volume form."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ...grid import AbstractBoundary, AbstractHalo, Grid, Periodic
from ._model import AbstractFVModel
from ._numerical_flux import AbstractNumericalFlux, Rusanov
from ._params import require_params
from ._reconstruction import AbstractReconstruction
from ._weno import WENO5Z


class Advection(AbstractFVModel):
    """Scalar linear advection `u_t + (a u)_x = 0` at speed `params = {"velocity": a}`
    (length/time, differentiable). State: `grid.shape` cell averages.

    **Arguments:** `grid` (1-D); `bc`: `Periodic()` (default) or `Outflow()` (no wall: a scalar has
    no velocity to reflect); `reconstruction` (default `WENO5Z()`); `numerical_flux` (default
    `Rusanov()`, the upwind flux here).
    """

    grid: Grid = eqx.field(static=True)
    halos: tuple[AbstractHalo, ...]
    reconstruction: AbstractReconstruction
    numerical_flux: AbstractNumericalFlux
    field_names: ClassVar[tuple[str, ...]] = ("u",)
    scalar: ClassVar[bool] = True

    def __init__(
        self,
        grid: Grid,
        bc: AbstractBoundary | None = None,
        *,
        reconstruction: AbstractReconstruction | None = None,
        numerical_flux: AbstractNumericalFlux | None = None,
    ):
        self._assemble(
            grid,
            Periodic() if bc is None else bc,
            WENO5Z() if reconstruction is None else reconstruction,
            Rusanov() if numerical_flux is None else numerical_flux,
            fields=1,
            normal=(),
            walls=False,
        )

    def check_params(self, params) -> None:
        require_params("Advection", params, ("velocity",), "{'velocity': 1.0}")

    def flux(self, u, params):
        return params["velocity"] * u

    def wave_speeds(self, u, params):
        a = jnp.broadcast_to(jnp.asarray(params["velocity"], u.dtype), u.shape[1:])
        return a, a
