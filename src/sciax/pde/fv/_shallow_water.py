"""`ShallowWater`: the shallow-water equations over a bottom in 1-D and 2-D, well balanced by the hydrostatic
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
from ._model import AbstractFVModel, swap_normal
from ._muscl import MUSCL
from ._numerical_flux import AbstractNumericalFlux
from ._params import require_params
from ._reconstruction import AbstractReconstruction


class ShallowWater(AbstractFVModel):
    """`h_t + (h u)_x = 0`, `(h u)_t + (h u^2 + g h^2 / 2)_x = -g h b_x`: depth `h` over a bottom at
    height `b(x)`; in 2-D `h_t + div(h u) = 0`, `(h u)_t + div(h u u^T + g h^2 / 2 I) = -g h grad b`.

    State: `(2, n)` cell averages of depth and discharge `h u` (`(3, nx, ny)` in 2-D: depth and the
    discharge along each axis). `params = {"g": 9.81, "bottom": b}`,
    gravity (length/time^2) and the bottom height at the cell centres (shape `grid.shape`, length;
    optional, flat if absent); both differentiable. Depth must be >= 0 (0: dry).

    Each face sees the depths `h* = max(0, h + b - max(b_l, b_r))` of the two reconstructed states
    (the hydrostatic reconstruction), with the flux corrected by `g (h^2 - h*^2) / 2` on each side
    and a centred bottom source, so a lake at rest (`h + b` constant, `u = 0`) stays at rest to
    round-off and the depth stays >= 0 under the CFL condition. A cell whose reconstructed depth
    is negative falls back to first order. Depth, velocity `hu / h` (0 where `h <= dry_depth`)
    and the surface `h + b` are reconstructed. In 2-D all of it is done along each axis in turn (the
    tangential velocity reconstructed and carried too), so the lake at rest is kept in 2-D as well.

    **Arguments:** `grid` (1-D or 2-D); `bc`: `Periodic()`, `Outflow()` or `Reflective()` (a wall) per
    side; `reconstruction` (default `MUSCL("mc")`); `numerical_flux` (default `HLL()`; any
    flux but `HLLC`); `dry_depth` (length, default 1e-10).
    """

    grid: Grid = eqx.field(static=True)
    halos: tuple[AbstractHalo, ...]
    reconstruction: AbstractReconstruction
    numerical_flux: AbstractNumericalFlux
    dry_depth: float = eqx.field(static=True)
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
        d = grid.ndim if isinstance(grid, Grid) else 1
        self._assemble(
            grid,
            Outflow() if bc is None else bc,
            MUSCL("mc") if reconstruction is None else reconstruction,
            HLL() if numerical_flux is None else numerical_flux,
            fields=d + 1,
            normal=tuple(range(1, d + 1)),
            walls=True,
            ndims=(1, 2),
        )
        if not dry_depth > 0:
            raise ValueError(f"ShallowWater: dry_depth must be > 0, got {dry_depth!r}")
        self.dry_depth = float(dry_depth)

    @property
    def field_names(self) -> tuple[str, ...]:
        if self.grid.ndim == 1:
            return ("depth", "discharge")
        return ("depth", *(f"discharge_{x}" for x in self.grid.dims))

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
        tangential = [u[k] * vel for k in range(2, u.shape[0])]
        return jnp.stack([u[1], u[1] * vel + 0.5 * params["g"] * u[0] ** 2, *tangential])

    def wave_speeds(self, u, params):
        vel = self.velocity(u[0], u[1])
        c = jnp.sqrt(params["g"] * jnp.maximum(u[0], 0.0))
        return vel - c, vel + c

    def admissible(self, u, params):
        return u[0] >= 0

    def rotate(self, u, axis):
        return swap_normal(u, axis)

    def rhs(self, t, y, params):
        self.check_state(y)
        bottom = jnp.broadcast_to(jnp.asarray(params.get("bottom", 0.0), y.dtype), self.grid.shape)
        total = None
        for axis, dx in enumerate(self.grid.spacing):
            change = jnp.moveaxis(self._axis_change(t, y, bottom, params, axis) / dx, -1, axis + 1)
            total = change if total is None else total + change
        return total

    def _axis_change(self, t, y, bottom, params, axis):
        """`dx` times the change of each field from the fluxes and bottom source along `axis`
        (`axis` moved last)."""
        g, n, gc = params["g"], y.shape[axis + 1], self.reconstruction.ghost_cells
        padded = self.rotate(jnp.moveaxis(self.pad(y, gc, t, axis), axis + 1, -1), axis)
        # The bottom continues past the edges like the depth (mirrored, or wrapped if periodic).
        surface = padded[0] + jnp.moveaxis(self.halos[0].pad(bottom, gc, t=t, axes=(axis,)), axis, -1)
        # Velocity rather than discharge is reconstructed (as Audusse et al. do): a limited face
        # velocity stays within its neighbours', so the CFL step from the cell averages holds at
        # the faces too, even where a face depth is tiny.
        velocities = [self.velocity(padded[0], padded[k]) for k in range(1, padded.shape[0])]
        stacked = jnp.stack([padded[0], *velocities, surface])
        right_edge, left_edge = self.reconstruction.edges(stacked)
        cells = stacked[..., gc - 1 : n + gc + 1]
        ok = (right_edge[0] >= 0) & (left_edge[0] >= 0)
        right_edge, left_edge = jnp.where(ok, right_edge, cells), jnp.where(ok, left_edge, cells)
        # Face states: `left` from the cell before each face, `right` from the cell after it (normal
        # velocity first, then the tangential ones).
        (h_l, *v_l, eta_l), (h_r, *v_r, eta_r) = right_edge[..., :-1], left_edge[..., 1:]
        b_face = jnp.maximum(eta_l - h_l, eta_r - h_r)
        hs_l, hs_r = jnp.maximum(0.0, eta_l - b_face), jnp.maximum(0.0, eta_r - b_face)
        star_l = jnp.stack([hs_l, *(hs_l * v for v in v_l)])
        star_r = jnp.stack([hs_r, *(hs_r * v for v in v_r)])
        faces = self.numerical_flux(self, star_l, star_r, params)
        leaving = faces[1] + 0.5 * g * (h_l**2 - hs_l**2)  # seen from the cell before the face
        entering = faces[1] + 0.5 * g * (h_r**2 - hs_r**2)  # seen from the cell after it
        # The centred bottom source of each cell from its own two face values (Audusse et al. eq. 3.6).
        (h_hi, *_, eta_hi), (h_lo, *_, eta_lo) = right_edge[..., 1:-1], left_edge[..., 1:-1]
        source = 0.5 * g * (h_hi + h_lo) * ((eta_lo - h_lo) - (eta_hi - h_hi))
        d_depth = -(faces[0, ..., 1:] - faces[0, ..., :-1])
        d_normal = -(leaving[..., 1:] - entering[..., :-1]) + source
        d_tangential = [-(faces[k, ..., 1:] - faces[k, ..., :-1]) for k in range(2, faces.shape[0])]
        return self.rotate(jnp.stack([d_depth, d_normal, *d_tangential]), axis)
