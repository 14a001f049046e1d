"""`ShallowWater`: the 1-D shallow-water equations over a bottom, well balanced by the hydrostatic
reconstruction of Audusse et al. and positivity preserving for the depth (dry states allowed).

Reference: E. Audusse, F. Bouchut, M.-O. Bristeau, R. Klein and B. Perthame, "A fast and stable
well-balanced scheme with hydrostatic reconstruction for shallow water flows", SIAM J. Sci.
Comput. 25 (2004) 2050-2065 (section 2 and the second-order extension of section 3).
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from ...grid import AbstractBoundary, AbstractHalo, Grid, Outflow
from ._hll import HLL
from ._model import AbstractFVModel
from ._muscl import MUSCL
from ._numerical_flux import AbstractNumericalFlux
from ._params import require_params
from ._reconstruction import AbstractReconstruction


class ShallowWater(AbstractFVModel):
    """`h_t + (h u)_x = 0`, `(h u)_t + (h u^2 + g h^2 / 2)_x = -g h b_x`: depth `h` over a bottom at
    height `b(x)`.

    State: `(2, n)` cell averages of depth and discharge `h u`. `params = {"g": 9.81, "bottom": b}`,
    gravity (length/time^2) and the bottom height at the cell centres (shape `grid.shape`, length;
    optional, flat if absent); both differentiable. Depth must be >= 0 (0: dry).

    Each face sees the depths `h* = max(0, h + b - max(b_l, b_r))` of the two reconstructed states
    (the hydrostatic reconstruction), with the flux corrected by `g (h^2 - h*^2) / 2` on each side
    and a centred bottom source, so a lake at rest (`h + b` constant, `u = 0`) stays at rest to
    round-off and the depth stays >= 0 under the CFL condition. A cell whose reconstructed depth
    is negative falls back to first order. Depth, velocity `hu / h` (0 where `h <= dry_depth`)
    and the surface `h + b` are reconstructed.

    **Arguments:** `grid` (1-D); `bc`: `Periodic()`, `Outflow()` or `Reflective()` (a wall) per
    side; `reconstruction` (default `MUSCL("mc")`); `numerical_flux` (default `HLL()`; any
    flux but `HLLC`); `dry_depth` (length, default 1e-10).
    """

    grid: Grid = eqx.field(static=True)
    halos: tuple[AbstractHalo, ...]
    reconstruction: AbstractReconstruction
    numerical_flux: AbstractNumericalFlux
    dry_depth: float = eqx.field(static=True)
    field_names: ClassVar[tuple[str, ...]] = ("depth", "discharge")
    admissibility: ClassVar[str] = "depth >= 0"

    def __init__(
        self,
        grid: Grid,
        bc: AbstractBoundary | None = None,
        *,
        reconstruction: AbstractReconstruction | None = None,
        numerical_flux: AbstractNumericalFlux | None = None,
        dry_depth: float = 1e-10,
    ):
        self._assemble(
            grid,
            Outflow() if bc is None else bc,
            MUSCL("mc") if reconstruction is None else reconstruction,
            HLL() if numerical_flux is None else numerical_flux,
            fields=2,
            odd=(1,),
            walls=True,
        )
        if not dry_depth > 0:
            raise ValueError(f"ShallowWater: dry_depth must be > 0, got {dry_depth!r}")
        self.dry_depth = float(dry_depth)

    def check_params(self, params) -> None:
        require_params("ShallowWater", params, ("g",), "{'g': 9.81, 'bottom': b}")
        if "bottom" in params and jnp.shape(params["bottom"]) != self.grid.shape:
            raise ValueError(
                f"ShallowWater: params['bottom'] must have the grid's shape {self.grid.shape}, "
                f"got {jnp.shape(params['bottom'])}"
            )

    def velocity(self, h, hu):
        wet = h > self.dry_depth
        return jnp.where(wet, hu / jnp.where(wet, h, 1.0), 0.0)

    def flux(self, u, params):
        vel = self.velocity(u[0], u[1])
        return jnp.stack([u[1], u[1] * vel + 0.5 * params["g"] * u[0] ** 2])

    def wave_speeds(self, u, params):
        vel = self.velocity(u[0], u[1])
        c = jnp.sqrt(params["g"] * jnp.maximum(u[0], 0.0))
        return vel - c, vel + c

    def admissible(self, u, params):
        return u[0] >= 0

    def rhs(self, t, y, params):
        self.check_state(y)
        g, n, gc = params["g"], y.shape[-1], self.reconstruction.ghost_cells
        bottom = jnp.broadcast_to(jnp.asarray(params.get("bottom", 0.0), y.dtype), self.grid.shape)
        padded = self.pad(y, gc, t)
        # The bottom continues past the edges like the depth (mirrored, or wrapped if periodic).
        surface = padded[0] + self.halos[0].pad(bottom, gc, t=t)
        # Velocity rather than discharge is reconstructed (as Audusse et al. do): a limited face
        # velocity stays within its neighbours', so the CFL step from the cell averages holds at
        # the faces too, even where a face depth is tiny.
        stacked = jnp.stack([padded[0], self.velocity(padded[0], padded[1]), surface])
        right_edge, left_edge = self.reconstruction.edges(stacked)
        cells = stacked[:, gc - 1 : n + gc + 1]
        ok = (right_edge[0] >= 0) & (left_edge[0] >= 0)
        right_edge, left_edge = jnp.where(ok, right_edge, cells), jnp.where(ok, left_edge, cells)
        # Face states: `left` from the cell before each face, `right` from the cell after it.
        (h_l, u_l, eta_l), (h_r, u_r, eta_r) = right_edge[:, :-1], left_edge[:, 1:]
        b_face = jnp.maximum(eta_l - h_l, eta_r - h_r)
        hs_l, hs_r = jnp.maximum(0.0, eta_l - b_face), jnp.maximum(0.0, eta_r - b_face)
        star_l = jnp.stack([hs_l, hs_l * u_l])
        star_r = jnp.stack([hs_r, hs_r * u_r])
        faces = self.numerical_flux(self, star_l, star_r, params)
        leaving = faces[1] + 0.5 * g * (h_l**2 - hs_l**2)  # seen from the cell before the face
        entering = faces[1] + 0.5 * g * (h_r**2 - hs_r**2)  # seen from the cell after it
        # The centred bottom source of each cell from its own two face values (Audusse et al. eq. 3.6).
        (h_hi, _, eta_hi), (h_lo, _, eta_lo) = right_edge[:, 1:-1], left_edge[:, 1:-1]
        source = 0.5 * g * (h_hi + h_lo) * ((eta_lo - h_lo) - (eta_hi - h_hi))
        dx = self.grid.spacing[0]
        d_depth = -(faces[0, 1:] - faces[0, :-1]) / dx
        d_discharge = (-(leaving[1:] - entering[:-1]) + source) / dx
        return jnp.stack([d_depth, d_discharge])
