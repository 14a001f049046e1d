"""`ElasticWave`: 2-D isotropic elastic waves (P-SV, plane strain) in velocity–stress form."""

from __future__ import annotations

import math
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ..._checks import error_if_tied
from ..._labels import Labels
from ...grid import CPML, Dirichlet, Grid, Periodic, as_halo, materialize, take
from ...grid.stencils import check_order, staggered, symbol_radius
from ..fd._model import grid_labels, locate
from ._acoustic import ricker
from ._blocks import exchange_ghosts, pad_zero
from ._buoyancy import check_density_average
from ._cpml import CPMLAxis, cpml_axis, cpml_profiles, damping_rate
from ._staggered import AbstractStaggeredModel

_VELOCITY, _STRESS = ("vx", "vz"), ("sxx", "szz", "sxz")
_COMPONENT = {"vx": 0, "vz": 1, "sxx": 0, "szz": 1, "sxz": 2}  # in the padded layout's velocity / stress
# XLA:CPU updates a `(nx, c, width)` block of a `(nx, c, nz)` field in place on jax 0.12 (35 us at 1000²,
# CPML(20)); jax 0.10.2's copies the whole field (0.55 ms; 52 us through the view `(nx c, nz)`, which jax
# 0.12 copies instead, and the padded step with CPML stayed slower than the plain one on 0.10.2 either way:
# 1000², order 8, 500 steps, 7.2-9.1 against 6.4 s; on 0.12 2.9 against 8.7 s).
_STRIPS_IN_PLACE = tuple(int(x) for x in jax.__version__.split(".")[:2]) >= (0, 12)
_OUTPUTS = _VELOCITY + _STRESS + ("seismogram",)
_SOURCES = ("explosive", "vx", "vz")
# The derivatives a CPML stretches: name -> (field, axis, forward). Forward differences land on the
# half points of their axis, backward ones on the points.
_DERIVATIVES = {
    "dx_sxx": ("sxx", 0, True),
    "dz_sxz": ("sxz", 1, False),
    "dx_sxz": ("sxz", 0, False),
    "dz_szz": ("szz", 1, True),
    "dx_vx": ("vx", 0, False),
    "dz_vz": ("vz", 1, False),
    "dz_vx": ("vx", 1, True),
    "dx_vz": ("vz", 0, True),
}


class ElasticOperator(NamedTuple):
    """The medium on the staggered grid: buoyancy `1/rho` at `vx` and `vz`; the coefficients of
    `d_x vx` and of `d_z vz` in `(sxx, szz)_t` at the points, `(lambda + 2 mu, lambda)` and
    `(lambda, lambda + 2 mu)` stacked; `mu` at `sxz`; each axis's CPML coefficients (or `None`)."""

    bx: Array
    bz: Array
    cx: Array
    cz: Array
    mu_xz: Array
    cpml: tuple[CPMLAxis | None, ...]


class ElasticSource(NamedTuple):
    """What the source terms read: the source grid indices (or `None`) and the buoyancy there."""

    points: Array | None
    bx: Array
    bz: Array


class ElasticWave(AbstractStaggeredModel):
    """2-D isotropic elastic waves (P-SV, plane strain) in velocity–stress form on a staggered grid.

        rho vx_t = d_x sxx + d_z sxz + F_x        sxx_t = (lam + 2 mu) d_x vx + lam d_z vz + M
        rho vz_t = d_x sxz + d_z szz + F_z        szz_t = lam d_x vx + (lam + 2 mu) d_z vz + M
                                                  sxz_t = mu (d_z vx + d_x vz)

    with `mu = rho vs^2`, `lam = rho (vp^2 - 2 vs^2)`. Axes `(x, z)` are the grid's `(0, 1)`.
    **Grid** (Virieux 1986): `sxx`, `szz` at the points `(x_i, z_j)`; `vx` at `(x_i + hx/2, z_j)`;
    `vz` at `(x_i, z_j + hz/2)`; `sxz` at `(x_i + hx/2, z_j + hz/2)`; index `[i, j]` of each
    field is its position next to point `(i, j)`. Staggered differences of order `order` (2:
    Virieux; 4: Levander 1988; up to 8). The medium at the staggered positions: `1/rho` from
    two-point means of `rho` (`density_average="arithmetic"`, the default) or of `1/rho` (`"harmonic"`,
    the mean buoyancy, as Devito's elastic examples take `b` at `vx` and `vz`), `mu` at `sxz` the mean of
    the four surrounding points' `mu`.

    **Sources** (`source=`): `"explosive"` adds `M(t) / (hx hz)` to `sxx` and `szz` at point
    `(i, j)` (an isotropic moment density, `M` a Ricker wavelet `ricker(t, f0, amplitude)`);
    `"vx"` / `"vz"` add a force `F(t) / (hx hz)` at `vx[i, j]` / `vz[i, j]`.

    **State** (`y0` and `rhs`): `{"vx", "vz", "sxx", "szz", "sxz"}`, each of shape
    `grid.shape` (velocity in length/time, stress in the units of `rho vp^2`). Under
    `sciax.pde.StaggeredLeapfrog(dt)` the outputs named by `save` are any of these and
    `"seismogram"`, shape `(n_receivers, 2)`: `(vx, vz)` at each receiver's `vx[i, j]`,
    `vz[i, j]`; velocities are half a step behind the saved time (`v(t - dt/2)`). Default
    `("vx", "vz", "seismogram")`. `rhs` (method of lines) drives any `sciax.ode` method; there a
    CPML acts as a plain damping `-d(x)` of every field.

    **Stable steps:** `dt <= 2 / omega_max`, `omega_max^2 = max(rho vp^2) max(1/rho) sum_axes
    R / h^2` with `R` the squared symbol radius of the staggered difference (order 2, equal
    spacing: `vp dt / h <= 1 / sqrt(2)`, Virieux's condition).

    **Params:** `{"vp", "vs", "rho", "source"}`: `vp > 0`, `vs >= 0`, `rho > 0` (`rho` optional,
    default 1), scalars or arrays of `grid.shape`, with a positive bulk modulus `rho (vp^2 - 4 vs^2
    / 3)` (`vs < sqrt(3)/2 vp`); differentiable in all three. `"source"`: integer grid indices
    `(2,)` or `(n_sources, 2)` (optional); vmap over it runs several shots.

    **Arguments:** `grid` (2-D); `f0` (wavelet frequency, 1/time); `source` (kind, above);
    `receivers`: grid indices `(n_receivers, 2)`; `bc`: `CPML(width)` on all four sides
    (default `CPML(20)`; fields vanish past the layer), `Dirichlet(0)` (every field zero past the
    edge: rigid, no absorption) or `Periodic()`; `order`: 2, 4, 6 or 8; `amplitude`; `density_average`
    (above).

    **Devices:** `sciax.parallel.shard(model, mesh)` cuts the grid into blocks over a device mesh
    (the same run to round-off, gradients included): each block takes its neighbours' points across its
    inner sides, the CPML profiles of the whole grid, and the sources and receivers it holds. On a
    multi-core CPU one XLA device per core pays from about 1000² points (docs/parallel.md).

    References: J. Virieux, Geophysics 51 (1986) 889; A. R. Levander, Geophysics 53 (1988) 1425;
    D. Komatitsch and R. Martin, Geophysics 72 (2007) SM155 (CPML, one memory variable per
    stretched derivative).
    """

    grid: Grid = eqx.field(static=True)
    halo: object
    order: int = eqx.field(static=True)
    info: Labels = eqx.field(static=True)
    f0: float = eqx.field(static=True)
    amplitude: float = eqx.field(static=True)
    source_kind: str = eqx.field(static=True)
    receivers: tuple[tuple[int, int], ...] = eqx.field(static=True)
    periodic: bool = eqx.field(static=True)
    width: int = eqx.field(static=True)
    density_average: str = eqx.field(static=True)

    def __init__(
        self,
        grid: Grid,
        *,
        f0: float,
        source: str = "explosive",
        receivers=(),
        bc=None,
        order: int = 4,
        amplitude: float = 1.0,
        time_units: str | None = "s",
        density_average: str = "arithmetic",
    ):
        name = "ElasticWave"
        if not isinstance(grid, Grid) or grid.ndim != 2:
            raise ValueError(f"{name}: grid must be a 2-D sciax.pde.Grid, got {grid!r}")
        if not (isinstance(f0, (int, float, np.integer, np.floating)) and f0 > 0):
            raise ValueError(f"{name}: f0 (source frequency) must be a number > 0, got {f0!r}")
        if source not in _SOURCES:
            raise ValueError(f"{name}: source must be one of {_SOURCES}, got {source!r}")
        self.density_average = check_density_average(name, density_average)
        bc = CPML(20) if bc is None else bc
        if isinstance(bc, Dirichlet) and not (isinstance(bc.value, (int, float)) and bc.value == 0):
            raise ValueError(f"{name}: bc=Dirichlet must have value 0 (every field zero past the edge)")
        if not isinstance(bc, (CPML, Dirichlet, Periodic)):
            raise ValueError(f"{name}: bc must be CPML(width), Dirichlet(0) or Periodic(), got {bc!r}")
        self.width = bc.width if isinstance(bc, CPML) else 0
        if 2 * self.width >= min(grid.shape):
            raise ValueError(f"{name}: CPML width {self.width} is too large for grid shape {grid.shape}")
        self.grid, self.order = grid, check_order(order, f"{name}: order")
        self.halo, self.periodic = as_halo(grid, bc), isinstance(bc, Periodic)
        self.f0, self.amplitude, self.source_kind = float(f0), float(amplitude), source
        rec = np.asarray(receivers, dtype=np.int64).reshape(-1, 2) if len(receivers) else np.zeros((0, 2), int)
        for r in rec:
            self._check_point(tuple(int(i) for i in r), "receiver")
        self.receivers = tuple((int(i), int(j)) for i, j in rec)
        self.info = grid_labels(grid, "vx", None, None, time_units)

    def _check_point(self, point: tuple[int, ...], what: str) -> None:
        """`ValueError` if `point` lies outside the grid or inside the CPML (saying which side)."""
        shape, w = self.halo.placement(self.grid.shape)[1], self.width  # the whole grid's, also on a block
        if any(not 0 <= i < n for i, n in zip(point, shape)):
            raise ValueError(f"ElasticWave: {what} {point} lies outside the grid of shape {shape}")
        for axis, (i, n) in enumerate(zip(point, shape)):
            if not w <= i <= n - 1 - w:
                raise ValueError(
                    f"ElasticWave: {what} {point} lies inside the CPML layer (width {w}) on the "
                    f"{'low' if i < w else 'high'} side of axis {self.grid.dims[axis]}; keep it within "
                    f"indices {w}..{n - 1 - w} along that axis"
                )

    # ---- medium and sources -----------------------------------------------------------------
    def medium(self, params) -> tuple[Array, Array, Array]:
        """`(vp, vs, rho)` broadcast to `grid.shape`, checked (`vp, rho > 0`, `vs >= 0`, bulk modulus > 0).

        Concrete values are checked and returned as NumPy arrays (no device work before the run)."""
        if not isinstance(params, dict) or "vp" not in params or "vs" not in params:
            raise TypeError('ElasticWave: params must be a dict with "vp", "vs", optional "rho" and "source"')
        out = {}
        for key in ("vp", "vs", "rho"):
            value = params[key] if key in params else np.ones((), out["vp"].dtype)
            traced = isinstance(value, jax.core.Tracer)
            value = value if traced else np.asarray(value)
            if value.ndim and value.shape != self.grid.shape:
                raise ValueError(
                    f'ElasticWave: params["{key}"] has shape {value.shape}, but the grid has shape {self.grid.shape}'
                )
            value = _check_sign(value, f'params["{key}"]', strict=key != "vs")
            out[key] = (jnp if traced else np).broadcast_to(value, self.grid.shape)
        return out["vp"], _check_bulk(out["vp"], out["vs"]), out["rho"]

    def _source(self, params):
        if "source" not in params:
            return None
        src = params["source"]
        src = src if isinstance(src, jax.core.Tracer) else np.asarray(src)
        if not jnp.issubdtype(src.dtype, jnp.integer) or src.shape[-1:] != (2,) or src.ndim > 2:
            raise ValueError(
                'ElasticWave: params["source"] must be integer grid indices of shape (2,) or (n_sources, 2), '
                f"got {src.dtype} {src.shape}"
            )
        src = src.reshape(-1, 2)
        if not isinstance(src, jax.core.Tracer):
            for point in src:
                self._check_point(tuple(int(i) for i in point), "source")
            return src
        hi = jnp.asarray(self.halo.placement(self.grid.shape)[1]) - 1 - self.width
        bad = jnp.any((src < self.width) | (src > hi))
        return eqx.error_if(src, bad, "ElasticWave: a source lies outside the grid or inside the CPML")

    def _shift(self, x, axis):
        """`x` at index `i + 1` along `axis`: the last index repeated past the grid's edge (the halo's
        even reflection of a face field), wrapped when periodic, the neighbour's first on a block."""
        n = x.shape[axis]
        return take(self.halo.pad(jnp.asarray(x), 1, flux=True, axes=(axis,)), axis, 2, n + 2)

    def _operator(self, params, dt):
        vp, vs, rho = self.medium(params)
        mu = rho * vs**2
        mu_xz = 0.5 * (mu + self._shift(mu, 0))
        mu_xz = 0.5 * (mu_xz + self._shift(mu_xz, 1))
        if self.density_average == "harmonic":
            b = 1 / rho
            bx, bz = 0.5 * (b + self._shift(b, 0)), 0.5 * (b + self._shift(b, 1))
        else:
            bx, bz = 2 / (rho + self._shift(rho, 0)), 2 / (rho + self._shift(rho, 1))
        layers = self._layers(vp)
        cpml = tuple(None if dt is None else cpml_axis(x, dt) for x in layers)
        lam2mu, lam = rho * vp**2, rho * vp**2 - 2 * mu
        return ElasticOperator(bx, bz, jnp.stack([lam2mu, lam]), jnp.stack([lam, lam2mu]), mu_xz, cpml), layers

    def _layers(self, vp):
        """Each axis's CPML profiles (fixed under differentiation: built from the largest `vp` of the whole
        grid, also on one block of it)."""
        vp_max = self.halo.all_max(jax.lax.stop_gradient(jnp.max(vp)))
        return [cpml_profiles(self.halo, self.grid, axis, vp_max, self.f0) for axis in range(2)]

    def _wavelet(self, t, dtype):
        return ricker(t, self.f0, self.amplitude).astype(dtype) / math.prod(self.grid.spacing)

    # ---- differences ------------------------------------------------------------------------
    def _diff(self, u, axis: int, forward: bool):
        """The staggered difference of `u` along `axis`: forward lands on the half points `i + 1/2`
        (reads `i - M + 1 .. i + M`), backward on the points (reads `i - M + 1/2 .. i + M - 1/2`).

        Shifted slices of one copy of `u` padded along `axis` (zeros, or wrapped when periodic).
        Padding each shifted slice on its own instead made XLA:CPU store every one of them at order 8
        (14 stored copies per stress update; 1000², 100 steps, one core: 4.6 s against 2.0 s)."""
        half, n, h = self.order // 2, u.shape[axis], self.grid.spacing[axis]
        first = 1 - half if forward else -half
        padded = pad_zero(self.halo, self.grid.shape, u, axis, (-first, first + self.order - 1), self.periodic)
        out = None
        for k, w in enumerate(staggered(1, self.order)):
            term = float(w / h) * jax.lax.slice_in_dim(padded, k, k + n, axis=axis)
            out = term if out is None else out + term
        return out

    def _derivatives(self, fields, names, memory, cpml):
        """The named derivatives, each stretched by its axis's CPML (`memory` updated) where there is one."""
        out, new = {}, {}
        for name in names:
            field, axis, forward = _DERIVATIVES[name]
            layer = cpml[axis]
            if layer is None or memory is None:
                out[name] = self._diff(fields[field], axis, forward)
                continue

            def stretched(u, psi, c, axis=axis, forward=forward):
                d = self._diff(u, axis, forward)
                psi = c.b * psi + c.a * d
                return d * c.inv_kappa + psi, psi

            # Stored once: read twice (memory update and field update), XLA would store each of the
            # difference's shifted copies instead.
            coefficients = layer.faces if forward else layer.points
            out[name], new[name] = materialize(stretched, fields[field], memory[name], coefficients)
        return out, new

    # ---- what StaggeredLeapfrog asks for ------------------------------------------------------
    def staggered_coefficients(self, params, dt):
        operator, _ = self._operator(params, dt)
        return operator, ElasticSource(self._source(params), operator.bx, operator.bz)

    def split(self, y):
        if not isinstance(y, dict) or set(y) != set(_VELOCITY + _STRESS):
            got = sorted(y) if isinstance(y, dict) else type(y).__name__
            raise ValueError(f"ElasticWave: the state must be a dict with keys {_VELOCITY + _STRESS}, got {got}")
        # Carried stacked: one fused loop then reads the inputs that vx and vz (sxx and szz) share once.
        return {"v": jnp.stack([y["vx"], y["vz"]])}, {"s": jnp.stack([y["sxx"], y["szz"]]), "sxz": y["sxz"]}

    @staticmethod
    def _unpack(velocity, stress) -> dict:
        """The five fields by name from the carried (stacked) velocity and stress."""
        out = {}
        if velocity is not None:
            out.update(vx=velocity["v"][0], vz=velocity["v"][1])
        if stress is not None:
            out.update(sxx=stress["s"][0], szz=stress["s"][1], sxz=stress["sxz"])
        return out

    def initial_memory(self, velocity, operator: ElasticOperator):
        zeros = jnp.zeros_like(velocity["v"][0])
        return {k: zeros for k, (_, axis, _) in _DERIVATIVES.items() if operator.cpml[axis] is not None}

    def velocity_rate(self, t, stress, memory, op: ElasticOperator):
        names = ("dx_sxx", "dz_sxz", "dx_sxz", "dz_szz")
        d, new = self._derivatives(self._unpack(None, stress), names, memory, op.cpml)
        rate = {"v": jnp.stack([op.bx * (d["dx_sxx"] + d["dz_sxz"]), op.bz * (d["dx_sxz"] + d["dz_szz"])])}
        return rate, None if memory is None else {**memory, **new}

    def stress_rate(self, t, velocity, memory, op: ElasticOperator):
        names = ("dx_vx", "dz_vz", "dz_vx", "dx_vz")
        d, new = self._derivatives(self._unpack(velocity, None), names, memory, op.cpml)
        # Each difference appears once (broadcast over the pair), so XLA fuses it rather than storing it.
        diagonal = op.cx * d["dx_vx"][None] + op.cz * d["dz_vz"][None]
        rate = {"s": diagonal, "sxz": op.mu_xz * (d["dz_vx"] + d["dx_vz"])}
        return rate, None if memory is None else {**memory, **new}

    def add_sources(self, velocity, stress, t, source: ElasticSource, dt, which):
        if source.points is None:
            return velocity, stress
        if which == "stress" and self.source_kind == "explosive":
            points, value = self._here(source, dt * self._wavelet(t, stress["s"].dtype))
            stress = {**stress, "s": _add_at(stress["s"], points, value, (0, 1))}
        elif which == "velocity" and self.source_kind != "explosive":
            component = _VELOCITY.index(self.source_kind)
            points, value = self._force(source, component, t, dt)
            velocity = {"v": _add_at(velocity["v"], points, value, (component,))}
        return velocity, stress

    def _here(self, source: ElasticSource, value, buoyancy=None):
        """`(points, values)`: the sources' indices into this block (the grid's on a whole grid) and `value`
        times `buoyancy` there (if given) per source, zero for those another block of a sharded grid holds."""
        points, inside = locate(self.halo, self.grid.shape, source.points)
        value = jnp.broadcast_to(value, (len(points),)) * (1 if buoyancy is None else _take_at(buoyancy, points))
        return points, value if inside is None else jnp.where(inside, value, 0)

    def _force(self, source: ElasticSource, component: int, t, dt):
        """`_here` for the force sources: `dt F(t) / (rho hx hz)` at `vx` or `vz` (`component` 0 or 1)."""
        b = source.bx if component == 0 else source.bz
        return self._here(source, dt * self._wavelet(t, b.dtype), b)

    # ---- the padded-state step (StaggeredLeapfrog on XLA:CPU; rigid edges or CPML) -----------------
    # Layout: velocity `(nx + 2r, 2, nz + 2r)` (vx, vz), stress `(nx + 2r, 3, nz + 2r)` (sxx, szz, sxz),
    # `r = order // 2` zero ghost points on each side. The components of a point sit one row apart,
    # so one pass computes all of them while the rows they share are in cache. A CPML's memory lives
    # on the strips of `width + 1` points at each end of its axis (outside them `a = 0`, `b = 1`,
    # `1 / kappa = 1`): the pass takes the plain differences everywhere and the strips are corrected.
    has_padded_step: ClassVar[bool] = True

    def padded_step_applies(self) -> bool:
        # Zero ghosts stay zero (rigid edges, or fields vanishing past a CPML); periodic ghosts would not.
        # With a CPML only where XLA updates the strips along z in place (`_STRIPS_IN_PLACE`), and the
        # strips of the two sides do not overlap.
        strips_apart = 2 * (self.width + 1) <= min(self.grid.shape)
        return not self.periodic and (self.width == 0 or (_STRIPS_IN_PLACE and strips_apart))

    def to_padded(self, velocity, stress, memory):
        r, s = self.order // 2, self.width + 1

        def pad(x):  # (c, nx, nz) -> (nx + 2r, c, nz + 2r), the ghosts from the neighbours on a block
            return exchange_ghosts(self.halo, self.grid.shape, jnp.pad(jnp.moveaxis(x, 0, 1), ((r, r), (0, 0), (r, r))))

        def strips(psi, axis):  # the low and the high strip
            n = psi.shape[axis]
            return (jax.lax.slice_in_dim(psi, 0, s, axis=axis), jax.lax.slice_in_dim(psi, n - s, n, axis=axis))

        memory = {k: strips(psi, _DERIVATIVES[k][1]) for k, psi in memory.items()}
        stress = {"s": pad(jnp.concatenate([stress["s"], stress["sxz"][None]]))}
        return {"v": pad(velocity["v"])}, stress, memory

    def from_padded(self, velocity, stress):
        r = self.order // 2
        s = jnp.moveaxis(stress["s"][r:-r, :, r:-r], 1, 0)
        return {"v": jnp.moveaxis(velocity["v"][r:-r, :, r:-r], 1, 0)}, {"s": s[:2], "sxz": s[2]}

    def _diff_padded(self, u, component: int, axis: int, forward: bool, box=None):
        """`_diff` of one component of a padded field at the interior points (the same arithmetic), or on
        `box = ((x0, x1), (z0, z1))` of them."""
        half, h = self.order // 2, self.grid.spacing[axis]
        (x0, x1), (z0, z1) = box or ((0, self.grid.shape[0]), (0, self.grid.shape[1]))
        first = 1 - half if forward else -half
        out = None
        for k, w in enumerate(staggered(1, self.order)):
            start = half + first + k
            if axis == 0:
                term = u[start + x0 : start + x1, component, half + z0 : half + z1]
            else:
                term = u[half + x0 : half + x1, component, start + z0 : start + z1]
            term = float(w / h) * term
            out = term if out is None else out + term
        return out

    def _correct_strips(self, field, inputs, memory, op: ElasticOperator, terms, dt):
        """`field` (padded) plus `dt` times each CPML term on the strips, and the memory there updated.

        `terms`: derivative name -> `[(output component, coefficient), ...]`, covering every component
        along each axis; the stretched derivative is `d / kappa + psi+`, `psi+ = b psi + a d`, so the
        correction is `(1 / kappa - 1) d + psi+`. One in-place update per strip, all components at once."""
        r, s, shape = self.order // 2, self.width + 1, self.grid.shape
        new = {}
        for axis in range(2):
            names = [k for k in terms if _DERIVATIVES[k][1] == axis and k in memory and op.cpml[axis] is not None]
            for side, lo in enumerate((0, shape[axis] - s)):
                box = tuple((lo, lo + s) if b == axis else (0, shape[b]) for b in range(2))
                sums = {}
                for name in names:
                    source, _, forward = _DERIVATIVES[name]
                    c = op.cpml[axis].faces if forward else op.cpml[axis].points
                    d = self._diff_padded(inputs, _COMPONENT[source], axis, forward, box)
                    b_, a_, k_ = (jax.lax.slice_in_dim(x, lo, lo + s, axis=axis) for x in c)
                    psi = b_ * memory[name][side] + a_ * d
                    new.setdefault(name, [None, None])[side] = psi
                    correction = dt * ((k_ - 1) * d + psi)
                    for out, coefficient in terms[name]:
                        part = coefficient[box[0][0] : box[0][1], box[1][0] : box[1][1]] * correction
                        sums[out] = part if out not in sums else sums[out] + part
                if not sums:
                    continue
                delta = jnp.stack([sums[k] for k in range(field.shape[1])], 1).astype(field.dtype)
                start = (box[0][0] + r, 0, box[1][0] + r)
                now = jax.lax.dynamic_slice(field, start, delta.shape)
                field = jax.lax.dynamic_update_slice(field, now + delta, start)
        return field, {**memory, **{k: tuple(v) for k, v in new.items()}}

    def padded_velocity_update(self, t, velocity, stress, memory, out, op: ElasticOperator, source, dt):
        r, d, v, s = self.order // 2, self._diff_padded, velocity["v"], stress["s"]
        vx = v[r:-r, 0, r:-r] + dt * (op.bx * (d(s, 0, 0, True) + d(s, 2, 1, False)))
        vz = v[r:-r, 1, r:-r] + dt * (op.bz * (d(s, 2, 0, False) + d(s, 1, 1, True)))
        v = jax.lax.dynamic_update_slice(out["v"], jnp.stack([vx, vz], 1).astype(v.dtype), (r, 0, r))
        # Behind a barrier, the next update reads the padded buffer, not the interior values: jax 0.12's
        # XLA otherwise stores those apart and copies them in (1000², 500 steps: 6.0 against 1.5 s, order 2).
        v = jax.lax.optimization_barrier(v)
        terms = {"dx_sxx": [(0, op.bx)], "dz_sxz": [(0, op.bx)], "dx_sxz": [(1, op.bz)], "dz_szz": [(1, op.bz)]}
        v, memory = self._correct_strips(v, stress["s"], memory, op, terms, dt)
        if source.points is not None and self.source_kind != "explosive":
            component = _VELOCITY.index(self.source_kind)
            points, value = self._force(source, component, t, dt)
            v = _add_padded(v, points + r, value, component, 1)
        return {"v": exchange_ghosts(self.halo, self.grid.shape, v)}, memory

    def padded_stress_update(self, t, velocity, stress, memory, out, op: ElasticOperator, source, dt):
        r, d, v, s = self.order // 2, self._diff_padded, velocity["v"], stress["s"]
        # cz is cx reversed: reading cx alone streams two coefficient fields instead of four.
        lam2mu, lam = op.cx[0], op.cx[1]
        dx_vx, dz_vz = d(v, 0, 0, False), d(v, 1, 1, False)
        sxx = s[r:-r, 0, r:-r] + dt * (lam2mu * dx_vx + lam * dz_vz)
        szz = s[r:-r, 1, r:-r] + dt * (lam * dx_vx + lam2mu * dz_vz)
        sxz = s[r:-r, 2, r:-r] + dt * (op.mu_xz * (d(v, 0, 1, True) + d(v, 1, 0, True)))
        new = jnp.stack([sxx, szz, sxz], 1).astype(s.dtype)
        s = jax.lax.optimization_barrier(jax.lax.dynamic_update_slice(out["s"], new, (r, 0, r)))
        terms = {
            "dx_vx": [(0, lam2mu), (1, lam)],
            "dz_vz": [(0, lam), (1, lam2mu)],
            "dz_vx": [(2, op.mu_xz)],
            "dx_vz": [(2, op.mu_xz)],
        }
        s, memory = self._correct_strips(s, velocity["v"], memory, op, terms, dt)
        if source.points is not None and self.source_kind == "explosive":
            points, value = self._here(source, dt * self._wavelet(t, s.dtype))
            s = _add_padded(s, points + r, value, 0, 2)
        return {"s": exchange_ghosts(self.halo, self.grid.shape, s)}, memory

    def staggered_outputs(self, velocity, stress, save):
        save = ("vx", "vz", "seismogram") if save is None else ((save,) if isinstance(save, str) else tuple(save))
        unknown = [s for s in save if s not in _OUTPUTS]
        if unknown:
            raise ValueError(f"ElasticWave: save must name outputs among {_OUTPUTS}, got {unknown}")
        fields = self._unpack(velocity, stress)
        return {k: self.record(fields["vx"], fields["vz"]) if k == "seismogram" else fields[k] for k in save}

    def staggered_stable_dt(self, params):
        self._source(params)  # checked here, before tracing, so a bad index is a ValueError
        return 2.0 / self._omega_max(params)

    def _omega_max(self, params):
        vp, _, rho = self.medium(params)
        xp = jnp if isinstance(vp, jax.core.Tracer) or isinstance(rho, jax.core.Tracer) else np
        radius = sum(symbol_radius("staggered2", self.order) / h**2 for h in self.grid.spacing)
        return xp.sqrt(xp.max(rho * vp**2) * xp.max(1 / rho) * radius)

    def record(self, vx: Float[Array, "... nx nz"], vz: Float[Array, "... nx nz"]) -> Float[Array, "... R 2"]:
        """`(vx, vz)` at the receivers (at their staggered positions), shape `(..., n_receivers, 2)`."""
        if not self.receivers:
            return jnp.zeros(vx.shape[:-2] + (0, 2), vx.dtype)
        local, inside = locate(self.halo, self.grid.shape, np.asarray(self.receivers))
        i, j = local.T
        values = jnp.stack([vx[..., i, j], vz[..., i, j]], axis=-1)
        # On one block of a sharded grid each block records the receivers it holds; the sum adds zeros (exact).
        return values if inside is None else self.halo.all_sum(jnp.where(inside[:, None], values, 0))

    # ---- method of lines --------------------------------------------------------------------
    def tendency(self, t, y, params):
        op, layers = self._operator(params, None)
        velocity, stress = self.split(y)
        dv, _ = self.velocity_rate(t, stress, None, op)
        ds, _ = self.stress_rate(t, velocity, None, op)
        dv, ds = self.add_sources(dv, ds, t, ElasticSource(self._source(params), op.bx, op.bz), 1.0, "velocity")
        dv, ds = self.add_sources(dv, ds, t, ElasticSource(self._source(params), op.bx, op.bz), 1.0, "stress")
        rates = self._unpack(dv, ds)
        damping = [damping_rate(points) for points, _ in (x for x in layers if x is not None)]
        if damping:
            rates = {k: r - sum(damping) * y[k] for k, r in rates.items()}
        return rates

    def spectral_radius(self, params):
        """`(d_max, omega_max)`: the largest layer damping rate and the largest frequency (1/time)."""
        vp, _, _ = self.medium(params)
        damping = [jnp.max(damping_rate(x[0])) for x in self._layers(vp) if x is not None]
        return (sum(damping) if damping else 0.0), self._omega_max(params)


def _take_at(field, points):
    """`field` at each of `points` (`(n_points, 2)` indices), shape `(n_points,)`."""
    return jnp.stack([jax.lax.dynamic_slice(field, tuple(p), (1, 1))[0, 0] for p in points])


def _add_at(field, points, value, leading=()):
    """`field` plus `value` (a scalar or one per point) at each of `points` (of the last two axes; in
    each of the `leading` entries of the first axis, if given): one-element updates, which XLA makes in
    place (a scatter was lowered to a select over the whole field, a copy per step)."""
    value = jnp.broadcast_to(value, (len(points),)).astype(field.dtype)
    first = (leading[0],) if leading else ()
    size = (len(leading),) * bool(leading) + (1, 1)
    for k, p in enumerate(points):
        start = first + tuple(p)
        field = jax.lax.dynamic_update_slice(field, jax.lax.dynamic_slice(field, start, size) + value[k], start)
    return field


def _add_padded(field, points, value, component: int, count: int):
    """`field` (padded layout `(nx, c, nz)`) plus `value` (a scalar or one per point) at each of `points`
    (indices of the padded axes), in components `component .. component + count - 1`; in place."""
    value = jnp.broadcast_to(value, (len(points),)).astype(field.dtype)
    for k, p in enumerate(points):
        start = (p[0], component, p[1])
        field = jax.lax.dynamic_update_slice(
            field, jax.lax.dynamic_slice(field, start, (1, count, 1)) + value[k], start
        )
    return field


def _check_bulk(vp, vs):
    """`vs`, after checking the bulk modulus `rho (vp^2 - 4/3 vs^2) > 0`, i.e. `vs < sqrt(3)/2 vp`."""
    bad = vs >= math.sqrt(3) / 2 * vp
    if isinstance(bad, jax.core.Tracer):
        return error_if_tied(vs, jnp.any(bad), "ElasticWave: the bulk modulus is not positive (vs >= sqrt(3)/2 vp)")
    if np.any(bad):
        point = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"ElasticWave: the bulk modulus rho (vp^2 - 4 vs^2 / 3) is not positive at grid point {point}: "
            f"vp = {float(vp[point])!r}, vs = {float(vs[point])!r} (vs must be < sqrt(3)/2 vp = "
            f"{math.sqrt(3) / 2 * float(vp[point])!r})"
        )
    return vs


def _check_sign(value, what: str, strict: bool):
    """`value`, checked `> 0` (`strict`) or `>= 0` everywhere: `ValueError` if concrete, else `equinox.error_if`."""
    relation = "> 0" if strict else ">= 0"
    if isinstance(value, jax.core.Tracer):
        bad = jnp.any(value <= 0) if strict else jnp.any(value < 0)
        return error_if_tied(value, bad, f"ElasticWave: {what} must be {relation} everywhere")
    ok = np.all(value > 0) if strict else np.all(value >= 0)
    if not (ok and np.all(np.isfinite(value))):
        raise ValueError(
            f"ElasticWave: {what} must be finite and {relation} everywhere, got minimum {float(np.min(value))!r}"
        )
    return value
