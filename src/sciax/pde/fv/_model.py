"""`AbstractFVModel`: a conservation law `u_t + f(u)_x = 0` discretised by finite volumes.

The state holds cell averages. One evaluation of the right-hand side pads each field with ghost
cells from its halo (the boundary conditions, or a neighbouring device's cells), reconstructs the
two states at every face, keeps them admissible, and takes the difference of the numerical fluxes
(LeVeque, "Finite Volume Methods for Hyperbolic Problems", 2002, ch. 4 and 6; Toro, "Riemann
Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., 2009, ch. 13-14).
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtyping import Array, Bool, Float, PyTree

from ..._checks import error_if_tied
from ..._model import AbstractModel
from ...grid import (
    AbstractHalo,
    BoundaryHalo,
    Dirichlet,
    Grid,
    Outflow,
    Periodic,
    Reflective,
    materialize,
    normalise_boundaries,
)
from ._numerical_flux import AbstractNumericalFlux
from ._quadrature import STENCIL_RADIUS, crop_transverse, face_points, gauss_weights
from ._reconstruction import AbstractReconstruction

_FV_BOUNDARIES = (Periodic, Outflow, Reflective)


def build_halos(
    name: str, grid: Grid, bc, fields: int, normal: tuple[int, ...], walls: bool, ndims: tuple[int, ...] = (1,)
) -> tuple[AbstractHalo, ...]:
    """One halo per field from the user's `bc`: at a `Reflective` side of axis `k` the field
    `normal[k]` (the momentum or velocity normal to that wall) is mirrored with a change of sign
    (`Dirichlet(0)` ghosts), every other field without. `ndims`: the grid dimensions allowed."""
    if not isinstance(grid, Grid):
        raise TypeError(f"{name}: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
    if grid.ndim not in ndims:
        raise ValueError(
            f"{name}: grid must have {' or '.join(map(str, ndims))} dimension(s), got a grid of shape {grid.shape}"
        )
    sides = normalise_boundaries(bc, grid.ndim, f"{name}: bc")
    for pair in sides:
        for side in pair:
            if not isinstance(side, _FV_BOUNDARIES):
                raise TypeError(
                    f"{name}: bc must be Periodic(), Outflow() or Reflective() on each side, got {type(side).__name__}"
                )
            if isinstance(side, Reflective) and not walls:
                raise ValueError(
                    f"{name}: this equation cannot take a Reflective wall (it has no velocity to reflect); "
                    "use Periodic() or Outflow()"
                )

    def field_sides(c):
        return tuple(
            tuple(Dirichlet(0.0) if isinstance(s, Reflective) and normal[axis] == c else s for s in pair)
            for axis, pair in enumerate(sides)
        )

    return tuple(BoundaryHalo(grid, field_sides(c)) for c in range(fields))


def swap_normal(u: Array, axis: int) -> Array:
    """The fields of `u` (first axis) with the momenta normal to axes 0 and `axis` (fields 1 and
    `axis + 1`) swapped: the state seen along axis 0 when `axis` is the normal. Its own inverse."""
    if axis == 0:
        return u
    order = list(range(u.shape[0]))
    order[1], order[axis + 1] = axis + 1, 1
    return u[np.array(order)]


def check_parts(name: str, grid: Grid, reconstruction, numerical_flux) -> None:
    """`TypeError`/`ValueError` for a reconstruction or flux of the wrong kind, or a reconstruction
    reading more ghost cells than the grid holds cells (a periodic halo wraps interior cells)."""
    if not isinstance(reconstruction, AbstractReconstruction):
        raise TypeError(
            f"{name}: reconstruction must be a sciax.pde.fv.AbstractReconstruction (e.g. WENO5Z()), "
            f"got {type(reconstruction).__name__}"
        )
    if not isinstance(numerical_flux, AbstractNumericalFlux):
        raise TypeError(
            f"{name}: numerical_flux must be a sciax.pde.fv.AbstractNumericalFlux (e.g. HLL()), "
            f"got {type(numerical_flux).__name__}"
        )
    need, have = reconstruction.ghost_cells, min(grid.shape)
    if need > have:
        raise ValueError(
            f"{name}: {type(reconstruction).__name__} needs {need} ghost cells on each side, but the grid has "
            f"only {have} cells to fill them from; use at least {need} cells or a narrower reconstruction"
        )


class AbstractFVModel(AbstractModel):
    """A system of conservation laws `u_t + sum_k f_k(u)_{x_k} = 0` in finite-volume form, on a
    1-, 2- or 3-D `Grid` (dimension by dimension).

    `rhs(t, u, params) = -sum_k (F_{k, i+1/2} - F_{k, i-1/2}) / dx_k`, with `F_k` the
    `numerical_flux` of the face states along axis `k` from `reconstruction` (component-wise,
    along that axis only, ghost cells from the halos along it). A system with a velocity gives its
    flux along axis `k` as the flux along axis 0 of the state with the momenta normal to axes 0
    and `k` swapped (`rotate`, rotational invariance), so one Riemann solver serves every axis.
    A cell whose reconstruction along an axis is not `admissible` (negative density, pressure or
    depth at a face or in the remainder of `positivity_ok`) falls back to its average along that
    axis, the first-order state. With a positivity-preserving flux (HLL, HLLC, Rusanov) this keeps
    strong rarefactions and dry fronts free of NaN (tested on Toro's 123 problem and dry dam breaks
    at `cfl=0.5`); Zhang and Shu's guarantee for every state needs `cfl` at most `w = 1/4` of
    `positivity_ok` (divided among the axes in several dimensions).

    In 2-D/3-D (`face_quadrature=1`) `rhs` sweeps the grid in strips of `strip_rows()` cells
    along axis 0, so that the intermediate arrays of a strip stay in cache, and slices the
    stencils along each axis in place; per cell the arithmetic is that of the whole grid at once.

    The state is an array of cell averages of shape `grid.shape` (scalar laws) or
    `(fields, *grid.shape)` (systems), cell `i` centred at `grid.coords()[0][i]`.

    **Fields** (set by subclasses): `grid`, `halos` (one `AbstractHalo` per field),
    `reconstruction`, `numerical_flux`. **Class variables:** `field_names`, `scalar`.
    """

    def _assemble(
        self,
        grid,
        bc,
        reconstruction,
        numerical_flux,
        *,
        fields: int,
        normal: tuple[int, ...],
        walls: bool,
        ndims: tuple[int, ...] = (1,),
    ):
        """Set `grid`, `halos`, `reconstruction` and `numerical_flux` (defaults resolved), all checked."""
        name = type(self).__name__
        self.grid = grid
        self.halos = build_halos(name, grid, bc, fields, normal=normal, walls=walls, ndims=ndims)
        check_parts(name, grid, reconstruction, numerical_flux)
        numerical_flux.check_model(self)
        self.reconstruction, self.numerical_flux = reconstruction, numerical_flux

    grid: eqx.AbstractVar[Grid]
    halos: eqx.AbstractVar[tuple[AbstractHalo, ...]]
    reconstruction: eqx.AbstractVar[AbstractReconstruction]
    numerical_flux: eqx.AbstractVar[AbstractNumericalFlux]
    field_names: ClassVar[tuple[str, ...]]
    scalar: ClassVar[bool] = False
    # What `admissible` requires, for error messages ("" when every state is admissible).
    admissibility: ClassVar[str] = ""
    # Gauss nodes per transverse axis of a face (1: the face centre; 3: see `face_flux`).
    face_quadrature: ClassVar[int] = 1
    # Cells along axis 0 per strip of `rhs` in 2-D/3-D (None: `strip_rows` chooses), and the
    # automatic choice's target size of a strip: 16 rows of 512 cells at 512^2 keep a strip's
    # intermediates in a 2 MiB L2 cache (float64, SSP-RK3 run at 512^2: 13.6 s against 17.3 s
    # for 32 rows on jax 0.12, 7.3 s against 8.8 s sharded over two CPU devices; 4 % slower on
    # one device on jax 0.10, whose step uses a second thread; benchmarks/finite_volume.py).
    tile: ClassVar[int | None] = None
    strip_cells: ClassVar[int] = 8192

    # ---- the equation ----------------------------------------------------------------------------
    @abc.abstractmethod
    def flux(self, u: Float[Array, "fields ..."], params: PyTree) -> Float[Array, "fields ..."]:
        """The physical flux `f(u)` along axis 0 of states stacked along the first axis."""

    @abc.abstractmethod
    def wave_speeds(
        self, u: Float[Array, "fields ..."], params: PyTree
    ) -> tuple[Float[Array, " ..."], Float[Array, " ..."]]:
        """The slowest and fastest characteristic speeds along axis 0 (eigenvalues of `f'(u)`) of each state."""

    def admissible(self, u: Float[Array, "fields ..."], params: PyTree) -> Bool[Array, " ..."]:
        """Whether each state is physical (default: all are)."""
        return jnp.ones(u.shape[1:], bool)

    def rotate(self, u: Float[Array, "fields ..."], axis: int) -> Float[Array, "fields ..."]:
        """The states as seen along axis 0 when `axis` is the normal direction; its own inverse.
        Default: unchanged (no velocity, or one dimension)."""
        return u

    # ---- the discretisation ----------------------------------------------------------------------
    def as_fields(self, y: Array) -> Float[Array, "fields ..."]:
        """The state as `(fields, *grid.shape)`."""
        return y[None] if self.scalar else y

    def from_fields(self, u: Array) -> Array:
        """`(fields, *grid.shape)` back to the state's shape."""
        return u[0] if self.scalar else u

    def pad(self, u: Float[Array, "fields ..."], width: int, t, axis: int | None = None) -> Array:
        """Each field padded with `width` ghost cells on both sides along `axis` (all axes if `None`)
        by its halo."""
        axes = None if axis is None else (axis,)
        return jnp.stack([halo.pad(u[c], width, t=t, axes=axes) for c, halo in enumerate(self.halos)])

    def face_states(
        self, t, u: Float[Array, "fields ..."], params, axis: int = 0, transverse_width: int = 0
    ) -> tuple[Array, Array]:
        """The left and right states at the `n + 1` faces along `axis`, each `(fields, ..., n + 1)`
        with `axis` moved last; the other axes with `transverse_width` ghost cells on both sides."""
        g = self.reconstruction.ghost_cells
        padded = self.pad(u, g, t, axis)
        for other in range(self.grid.ndim):
            if transverse_width and other != axis:
                padded = self.pad(padded, transverse_width, t, other)
        return self.padded_face_states(jnp.moveaxis(padded, axis + 1, -1), params, -1)

    def padded_face_states(self, padded: Float[Array, "fields ..."], params, along: int) -> tuple[Array, Array]:
        """The left and right states at the `n + 1` faces along array axis `along` of `padded`,
        which holds `n` cells and `ghost_cells` ghosts on both sides along it, sliced in place."""
        g = self.reconstruction.ghost_cells
        along = along % padded.ndim
        n = padded.shape[along] - 2 * g
        if self.admissibility and self.reconstruction.radius > 0:
            # Stored once: the check and the fluxes both read the face values, and XLA would
            # otherwise compute the reconstruction in each of their fused loops.
            right_edge, left_edge = materialize(lambda v: self.reconstruction.edges(v, along), padded)
            cells = lax.slice_in_dim(padded, g - 1, n + g + 1, axis=along)
            ok = self.positivity_ok(cells, right_edge, left_edge, params)

            def fallback(right_edge, left_edge):
                return jnp.where(ok, right_edge, cells), jnp.where(ok, left_edge, cells)

            # The fallback's selects cost as much as the reconstruction; almost every call keeps
            # every cell, so they run only when one fails (under `vmap` both branches run).
            right_edge, left_edge = lax.cond(jnp.all(ok), lambda r, e: (r, e), fallback, right_edge, left_edge)
        else:
            right_edge, left_edge = self.reconstruction.edges(padded, along)
        return (
            lax.slice_in_dim(right_edge, 0, n + 1, axis=along),
            lax.slice_in_dim(left_edge, 1, n + 2, axis=along),
        )

    def face_flux(self, t, u: Float[Array, "fields ..."], params, axis: int) -> Array:
        """The numerical flux through the faces along `axis`, `(fields, ..., n + 1)` with `axis`
        moved last: of the face states (`face_quadrature=1`), or averaged over the Gauss nodes of
        each face (`face_quadrature=3`, 2-D/3-D; a face with a node state that is not admissible
        takes the flux of its face-average states)."""
        transverse = self.grid.ndim - 1 if self.face_quadrature == 3 else 0
        width = max(self.reconstruction.ghost_cells, STENCIL_RADIUS) if transverse else 0
        left, right = self.face_states(t, u, params, axis, width)
        if transverse:
            nodes_l, nodes_r = face_points(left, width, transverse), face_points(right, width, transverse)
            ok = jnp.all(self.admissible(nodes_l, params) & self.admissible(nodes_r, params), axis=0)
            left = jnp.where(ok, nodes_l, crop_transverse(left, width, transverse)[:, None])
            right = jnp.where(ok, nodes_r, crop_transverse(right, width, transverse)[:, None])
        faces = self.rotate(self.numerical_flux(self, self.rotate(left, axis), self.rotate(right, axis), params), axis)
        if transverse:
            faces = jnp.tensordot(faces, jnp.asarray(gauss_weights(transverse), faces.dtype), axes=((1,), (0,)))
        return faces

    def positivity_ok(self, cells, right_edge, left_edge, params) -> Bool[Array, " ..."]:
        """Whether a cell keeps its reconstruction: its two face values and the remainder
        `u* = (mean - w (right + left)) / (1 - 2 w)`, `w = 1/4`, are admissible. The cell average is
        then a convex combination of admissible states, `w right + w left + (1 - 2 w) u*`, and the
        update is one of first-order updates from them, which positivity-preserving fluxes keep
        admissible under the CFL condition (Zhang & Shu, J. Comput. Phys. 229 (2010) 8918-8934,
        with their scaling reduced to all or nothing). A cell failing it falls back to first order."""
        w = 0.25
        rest = (cells - w * (right_edge + left_edge)) / (1 - 2 * w)
        return self.admissible(right_edge, params) & self.admissible(left_edge, params) & self.admissible(rest, params)

    def rhs(self, t, y, params):
        self.check_state(y)
        u = self.as_fields(y)
        if self.face_quadrature == 3 and self.grid.ndim > 1:
            total = None
            for axis, dx in enumerate(self.grid.spacing):
                faces = self.face_flux(t, u, params, axis)
                change = jnp.moveaxis(-(faces[..., 1:] - faces[..., :-1]) / dx, -1, axis + 1)
                total = change if total is None else total + change
            return self.from_fields(total)
        g = self.reconstruction.ghost_cells
        rows, n0 = self.strip_rows(), self.grid.shape[0]
        if rows >= n0:
            padded = [self.pad(u, g, t, axis) for axis in range(self.grid.ndim)]
            return self.from_fields(self._strip_change(padded, params, 0, n0))
        along_0 = self.pad(u, g, t, 0)

        # Strips of `rows` cells along axis 0 keep the few dozen intermediate arrays of one strip in
        # cache; the ghost cells along the other axes are added to each strip (in cache too).
        def strip(start, size):
            block = lax.dynamic_slice_in_dim(along_0, start, size + 2 * g, axis=1)
            inner = lax.slice_in_dim(block, g, g + size, axis=1)
            padded = [block, *(self.pad(inner, g, t, axis) for axis in range(1, self.grid.ndim))]
            return self._strip_change(padded, params, 0, size)

        count, rest = divmod(n0, rows)
        strips = lax.map(lambda i: strip(i * rows, rows), jnp.arange(count))
        total = jnp.moveaxis(strips, 0, 1).reshape(u.shape[0], count * rows, *u.shape[2:])
        if rest:
            total = jnp.concatenate([total, strip(count * rows, rest)], axis=1)
        return self.from_fields(total)

    def _strip_change(self, padded: list[Array], params, start, rows: int) -> Array:
        """The rate of change of cells `start .. start + rows - 1` along axis 0, from `padded[k]`,
        the fields with ghost cells along axis `k`."""
        g = self.reconstruction.ghost_cells
        total = None
        for axis, dx in enumerate(self.grid.spacing):
            width = rows + 2 * g if axis == 0 else rows
            block = padded[axis]
            if width != block.shape[1]:
                block = lax.dynamic_slice_in_dim(block, start, width, axis=1)
            left, right = self.padded_face_states(block, params, axis + 1)
            faces = self.rotate(
                self.numerical_flux(self, self.rotate(left, axis), self.rotate(right, axis), params), axis
            )
            n = faces.shape[axis + 1] - 1
            change = -(lax.slice_in_dim(faces, 1, n + 1, axis=axis + 1) - lax.slice_in_dim(faces, 0, n, axis=axis + 1))
            change = change / dx
            total = change if total is None else total + change
        return total

    def strip_rows(self) -> int:
        """Cells along axis 0 per strip of `rhs` (all of them in 1-D): `tile` if set, else about
        `strip_cells` cells per strip (at least 8 rows)."""
        shape = self.grid.shape
        if len(shape) == 1:
            return shape[0]
        if self.tile is not None:
            return min(self.tile, shape[0])
        return min(shape[0], max(8, self.strip_cells // math.prod(shape[1:])))

    def max_speed(self, y: Array, params: PyTree, axis: int = 0) -> Float[Array, ""]:
        """The largest characteristic speed along `axis` in modulus over all cells (of this block)."""
        low, high = self.wave_speeds(self.rotate(self.as_fields(y), axis), params)
        return jnp.maximum(jnp.max(jnp.abs(low)), jnp.max(jnp.abs(high)))

    def cfl_step(self, y: Array, params: PyTree, cfl: float) -> Float[Array, ""]:
        """The CFL step `cfl / sum_k (max|lambda_k| / dx_k)` (`cfl dx / max|lambda|` in 1-D), the
        maxima taken over all blocks of a sharded grid (the halo's `all_max`), so that every
        block takes the same step."""
        every = self.halos[0].all_max
        spacing = self.grid.spacing
        if len(spacing) == 1:
            return cfl * spacing[0] / every(self.max_speed(y, params))
        rate = sum(every(self.max_speed(y, params, axis)) / dx for axis, dx in enumerate(spacing))
        return cfl / rate

    @property
    def rhs_reach(self) -> int:
        """Cells past a cell that one `rhs` evaluation reads: the reconstruction's ghost cells (at
        least the transverse stencil's 2 with `face_quadrature=3`)."""
        if self.face_quadrature == 3 and self.grid.ndim > 1:
            return max(self.reconstruction.ghost_cells, STENCIL_RADIUS)
        return self.reconstruction.ghost_cells

    def default_method(self):
        from ._ssprk import SSPRK3

        return SSPRK3(cfl=0.5)

    # ---- checks ----------------------------------------------------------------------------------
    def check_state(self, y, what: str = "the state") -> None:
        """`ValueError`/`TypeError` unless `y` is a real array of the state's shape."""
        name = type(self).__name__
        shape = self.grid.shape if self.scalar else (len(self.field_names), *self.grid.shape)
        got = getattr(y, "shape", None)
        if got is None or tuple(got) != shape:
            fields = "" if self.scalar else f" (fields {', '.join(self.field_names)} along the first axis)"
            raise ValueError(f"{name}: {what} must have shape {shape}{fields}, got shape {got}")
        if not jnp.issubdtype(y.dtype, jnp.floating):
            raise TypeError(f"{name}: {what} must be real floating point, got {y.dtype}")

    def check_admissible(self, y: Array, params: PyTree, what: str = "y0") -> Array:
        """`y`, after a `ValueError` naming the first cell (in C order) that is not `admissible`,
        with its coordinates (concrete values), or with an `equinox.error_if` on it (traced values)."""
        if not self.admissibility:
            return y
        ok = self.admissible(self.as_fields(y), params)
        if isinstance(ok, jax.core.Tracer):
            return error_if_tied(y, ~jnp.all(ok), f"{type(self).__name__}: {what} needs {self.admissibility}")
        ok = np.asarray(ok)
        if not ok.all():
            index = np.unravel_index(int(np.argmin(ok)), ok.shape)
            position = ", ".join(
                f"{dim}={float(c[i]):.6g}" for dim, c, i in zip(self.grid.dims, self.grid.coords(), index)
            )
            cell = int(index[0]) if len(index) == 1 else tuple(int(i) for i in index)
            values = ", ".join(
                f"{k}={float(v):.6g}"
                for k, v in zip(self.field_names, np.asarray(self.as_fields(y))[(slice(None), *index)])
            )
            raise ValueError(
                f"{type(self).__name__}: {what} needs {self.admissibility}; the first offending cell is "
                f"{cell} ({position}) with {values}"
            )
        return y
