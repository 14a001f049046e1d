"""`Burgers`: the inviscid Burgers equation `u_t + (u^2 / 2)_x = 0` in finite-volume form."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx

from ...grid import AbstractBoundary, AbstractHalo, Grid, Periodic
from ._model import AbstractFVModel
from ._numerical_flux import AbstractNumericalFlux, Rusanov
from ._reconstruction import AbstractReconstruction
from ._weno import WENO5Z


class Burgers(AbstractFVModel):
    """The inviscid Burgers equation `u_t + (u^2 / 2)_x = 0`; shocks move at the Rankine-Hugoniot
    speed `(u_l + u_r) / 2`. State: `grid.shape` cell averages; `params` unused (`None`).

    **Arguments:** `grid` (1-D); `bc`: `Periodic()` (default), `Outflow()` or `Reflective()`
    (`u` is a velocity: mirrored with a change of sign); `reconstruction` (default `WENO5Z()`);
    `numerical_flux` (default `Rusanov()`; `HLL()` is Godunov-like here).
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
            normal=(0,),
            walls=True,
        )

    def flux(self, u, params):
        return 0.5 * u**2

    def wave_speeds(self, u, params):
        return u[0], u[0]
