"""`AcousticWave`: variable-density acoustics `p_tt = rho c^2 div(grad(p) / rho) + sources` in 2-D/3-D."""

from __future__ import annotations

import math
from typing import ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from jaxtyping import Array, ArrayLike, Float

from ..._labels import Labels
from ...grid import CPML, AbstractHalo, Grid, Sponge, as_halo, fold, inner, materialize, take
from ...grid.stencils import apply, check_order, staggered, staggered_derivative, staggered_valid, symbol_radius
from ..fd._model import grid_labels, locate, positive_field_problem, tie_problems
from ._buoyancy import FaceBuoyancy, check_density_average, mean, next_point, points_with_ghosts
from ._cpml import CPMLAxis, CPMLMemory, cpml_axis, cpml_profiles, damping_rate
from ._flux_rules import _joint_flux_pays, _stores_flux
from ._leapfrog import AbstractWaveModel, WaveCoefficients, _apart_interior, _block_threads, leapfrog_weights
from ._padded_layout import pad_zeros, place_ghosts

_OUTPUTS = ("p", "v", "seismogram")


def ricker(t: Float[ArrayLike, "..."], f0: float, amplitude: float = 1e-3) -> Float[Array, "..."]:
    """Ricker wavelet `amplitude (1 - 2 a (t - t0)^2) exp(-a (t - t0)^2)`, `a = (pi f0)^2`, `t0 = 1.2 / f0`.

    `f0`: dominant frequency (1/time). Differentiable in `t`.
    """
    a = (math.pi * f0) ** 2
    tau = jnp.asarray(t) - 1.2 / f0
    return amplitude * (1 - 2 * a * tau**2) * jnp.exp(-a * tau**2)


class AcousticOperator(NamedTuple):
    """What `AcousticWave.acceleration` reads: the bulk modulus `kappa = rho c^2` (points), `1 / rho`
    at the half points of each axis (`FaceBuoyancy`), and each axis's CPML coefficients (`None` without
    a layer)."""

    kappa: Array
    inv_rho_faces: tuple[FaceBuoyancy, ...]
    cpml: tuple[CPMLAxis | None, ...]


class AcousticSource(NamedTuple):
    """What `AcousticWave.add_source` reads: the velocity and the source grid indices (or `None`)."""

    c: Array
    points: Array | None


class AcousticWave(AbstractWaveModel):
    """Acoustic waves in a medium of variable velocity `c` and density `rho` (2-D or 3-D).

    `p_tt = kappa div(grad(p) / rho) + 4 pi c^2 s(t) delta_src` with bulk modulus
    `kappa = rho c^2` and a Ricker source `s = ricker(t, f0, amplitude)` at each
    source point. Space: staggered differences of order `order` (pressure on the
    points, `grad(p)/rho` on the half points, `1/rho` at a half point from the two
    points beside it: `density_average`). With `order=2`, `bc=Neumann()` it is, to
    round-off, the classic variable-density scheme `p+ = 2p - p- + dt^2 (kappa d + 4 pi c^2 s delta)`.

    **State** (what `y0` and `rhs` use): `{"p": pressure, "v": dp/dt}`, each of
    shape `grid.shape`. Under `sciax.pde.Leapfrog(dt)` (the intended method) the
    outputs chosen by `save` are `"p"`, `"v"` (backward difference) and
    `"seismogram"` (`p` at the receivers, shape `(len(receivers),)`); default
    `("p", "seismogram")`. The method-of-lines `rhs` drives any `sciax.ode` method;
    there a `CPML` side acts as a plain damping layer `-d(x) v` (not perfectly
    matched), since its memory variables live in the leapfrog state only.

    **Stable steps:** `Leapfrog(dt)` needs `dt <= 2 / omega_max`, `omega_max` the
    largest frequency of the discrete operator. `sciax.pde.RK4(dt)` has its own rule
    (from `spectral_radius`: the method-of-lines eigenvalues `-d/2 +- i omega`):
    `dt <= 1 / (d_max / 2.785 + omega_max / 2.828)`, `d_max` the largest layer
    damping rate `d / kappa + alpha` (0 without CPML): `sqrt(2)` times the leapfrog
    limit without layers.

    **Params:** `{"c": velocity, "rho": density (optional, default 1), "source": int
    grid indices}`; `c`, `rho` scalars or arrays of shape `grid.shape`, > 0;
    `"source"` of shape `(ndim,)` or `(n_sources, ndim)` (optional: no source).
    Differentiable in `c` and `rho` (e.g. for full-waveform inversion); vmap over
    `"source"` runs many shots at once.

    **Arguments:** `grid` (2-D or 3-D); `f0` (source frequency, 1/time);
    `receivers`: grid indices `(n_receivers, ndim)`; `bc`: `CPML(width)` (default,
    all sides), `Neumann()`, `Dirichlet(0)` (pressure release), `ZeroPadding()` (Devito's zero halos, with
    `1/rho` or `rho` zero past the edge too; no ghost written per step), `Periodic()`, per
    side as for any FD model, or an `AbstractHalo` (then no CPML); `order`: 2-8;
    `amplitude` of the wavelet (default 1e-3); `density_average`: `"arithmetic"` (default:
    `1 / rho` at a half point is `2 / (rho_i + rho_{i+1})`, the effective density of Moczo et al.,
    Bull. Seismol. Soc. Am. 92 (2002) 3042) or `"harmonic"` (`(1/rho_i + 1/rho_{i+1}) / 2`, the mean
    buoyancy: Devito's `div(b grad(p))` with `b = 1/rho` averaged to the half points). The two agree to
    second order where `rho` is smooth and differ at jumps. The harmonic rule computes its face values where
    they are read, from `1/rho` at the points (one array for every axis, none stored per solve; on XLA:CPU,
    one core, 2000^2 order 2 x 100 steps: 0.41 -> 0.32 s), except at order 4 and on small order-2 grids, where
    it stores them as the arithmetic rule does (`_stores_faces`).

    **Speed and scale:** on XLA:CPU a `Leapfrog` step without CPML is one pass over memory (interior
    from shifted slices, edge strips from folded blocks: `split_evaluate`), the same values as the
    halo-padded step. Each axis's face flux `grad(p)/rho` is stored once per step
    (`sciax.grid.materialize`): fused into the second derivative it would be recomputed at each of
    its `order` offsets. From order 4, where the edge strips of that step are many of the points (small
    grids, 3-D), `Leapfrog` carries the pressure with its ghost points instead (`padded_update`: no
    edge strips; 200^3 order 8 ran 1.6x faster, order 4 1.4x). Sharded with `sciax.parallel.shard`, sources,
    receivers and CPML layers may lie along sharded axes; on a multi-core CPU one XLA device per core,
    with the grid sharded over them, is how a large 2-D grid uses every core (docs/parallel.md).

    Reference for the CPML: Komatitsch & Martin, Geophysics 72 (2007) SM155.
    """

    grid: Grid = eqx.field(static=True)
    halo: AbstractHalo
    order: int = eqx.field(static=True)
    info: Labels = eqx.field(static=True)
    f0: float = eqx.field(static=True)
    amplitude: float = eqx.field(static=True)
    receivers: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    density_average: str = eqx.field(static=True)

    def __init__(
        self,
        grid: Grid,
        *,
        f0: float,
        receivers=(),
        bc=None,
        order: int = 2,
        amplitude: float = 1e-3,
        time_units: str | None = "s",
        density_average: str = "arithmetic",
    ):
        if not isinstance(grid, Grid) or grid.ndim not in (2, 3):
            raise ValueError(f"AcousticWave: grid must be a 2-D or 3-D sciax.pde.Grid, got {grid!r}")
        if not (isinstance(f0, (int, float, np.integer, np.floating)) and f0 > 0):
            raise ValueError(f"AcousticWave: f0 (source frequency) must be a number > 0, got {f0!r}")
        self.grid, self.order = grid, check_order(order, "AcousticWave: order")
        self.halo = as_halo(grid, CPML(20) if bc is None else bc)
        sides = getattr(self.halo, "sides", ())
        if any(isinstance(b, Sponge) for pair in sides for b in pair):
            raise ValueError("AcousticWave: use CPML(width) as the absorbing boundary for waves, not Sponge")
        for pair in sides:
            for b in pair:
                if isinstance(b, CPML) and 2 * b.width >= min(grid.shape):
                    raise ValueError(f"AcousticWave: CPML width {b.width} is too large for grid shape {grid.shape}")
        rec = (
            np.asarray(receivers, dtype=np.int64).reshape(-1, grid.ndim)
            if len(receivers)
            else np.zeros((0, grid.ndim), int)
        )
        bad = np.any((rec < 0) | (rec >= np.asarray(grid.shape)), axis=1)
        if np.any(bad):
            raise ValueError(
                f"AcousticWave: receiver {tuple(rec[np.argmax(bad)])} lies outside the grid of shape {grid.shape}"
            )
        self.receivers = tuple(tuple(int(i) for i in r) for r in rec)
        self.f0, self.amplitude = float(f0), float(amplitude)
        self.density_average = check_density_average("AcousticWave", density_average)
        self.info = grid_labels(grid, "p", None, None, time_units)

    # ---- medium, sources, absorbing layers ----------------------------------------------------
    def medium(self, params) -> tuple[Array, Array]:
        """`(c, rho)` broadcast to `grid.shape`, checked > 0."""
        c, rho, problems = self._medium(params)
        return tie_problems(c, problems[:1]), tie_problems(rho, problems[1:])

    def _medium(self, params):
        """`(c, rho, problems)`: shapes checked and concrete values checked > 0 now; traced values' checks as
        `(predicate, message)` pairs in `problems`, for `error_if_tied` on what the caller computes from them."""
        if not isinstance(params, dict) or "c" not in params:
            raise TypeError('AcousticWave: params must be a dict with "c" (velocity), optional "rho" and "source"')
        out, problems = [], []
        for key in ("c", "rho"):
            # The default density takes c's dtype, so a float32 model stays float32 under x64.
            value = jnp.asarray(params[key]) if key in params else jnp.ones((), out[0].dtype)
            if value.ndim and value.shape != self.grid.shape:
                raise ValueError(
                    f'AcousticWave: params["{key}"] has shape {value.shape}, but the grid has shape {self.grid.shape}'
                )
            value, problem = positive_field_problem(value, "AcousticWave", f'params["{key}"]')
            out.append(jnp.broadcast_to(value, self.grid.shape))
            problems.append(problem)
        return out[0], out[1], problems

    def _source(self, params):
        if "source" not in params:
            return None
        src = params["source"]
        # Concrete sources are checked in NumPy: inside `jit`, jnp would turn even a captured constant into a tracer.
        src = src if isinstance(src, jax.core.Tracer) else np.asarray(src)
        if not jnp.issubdtype(src.dtype, jnp.integer) or src.shape[-1:] != (self.grid.ndim,) or src.ndim > 2:
            raise ValueError(
                f'AcousticWave: params["source"] must be integer grid indices of shape ({self.grid.ndim},) '
                f"or (n_sources, {self.grid.ndim}), got {src.dtype} {src.shape}"
            )
        src = src.reshape(-1, self.grid.ndim)
        shape = self.halo.placement(self.grid.shape)[1]  # the whole grid's, also on one block of it
        if not isinstance(src, jax.core.Tracer):
            if np.any((src < 0) | (src >= np.asarray(shape))):
                raise ValueError(f"AcousticWave: source {src.tolist()} lies outside the grid of shape {shape}")
            return jnp.asarray(src)
        outside = jnp.any((src < 0) | (src >= jnp.asarray(shape)))
        return eqx.error_if(src, outside, "AcousticWave: a source lies outside the grid")

    def _layers(self, c):
        """Each axis's CPML profiles (points, half points) or `None`. The layers' damping is held fixed
        under differentiation (it is not part of the model to invert); built from the largest
        velocity of the whole grid (also on one block of it)."""
        c_max = self.halo.all_max(jax.lax.stop_gradient(jnp.max(c)))
        return [cpml_profiles(self.halo, self.grid, axis, c_max, self.f0) for axis in range(self.grid.ndim)]

    # ---- the operator ---------------------------------------------------------------------------
    def _divergence(self, t, p, inv_rho_faces, cpml, memory, grid=None):
        """`div(grad(p) / rho)` (with CPML memory updates where `cpml` has a layer), and the new memory;
        on `grid` (default the model's; folded blocks on the one-pass route), halos padded."""
        grid = self.grid if grid is None else grid
        total, new_memory = 0.0, []
        order, weights = self.order, staggered(1, self.order)
        for axis in range(grid.ndim):
            layer, n, h = cpml[axis], grid.shape[axis], grid.spacing[axis]

            def face_flux(padded, faces, layer, psi, axis=axis, n=n, h=h):
                # `staggered_derivative(p, forward=True)` from the padded field: points i + 1 .. i + order.
                dp, inv_rho = apply(padded, axis, range(1, order + 1), weights, n, 1 / h), faces.at(axis)
                if layer is None:
                    return dp * inv_rho, None
                psi_p = layer.faces.b * psi + layer.faces.a * dp
                return (dp * layer.faces.inv_kappa + psi_p) * inv_rho, psi_p

            # Stored once: fused into the outer stencil it would be recomputed at each of its offsets.
            # The halo is filled outside (on a sharded grid by collectives, which stay out of the branch).
            padded = self.halo.pad(p, order // 2, t=t, axes=(axis,))
            psi = None if layer is None else memory[axis].faces
            flux, psi_p = materialize(face_flux, padded, inv_rho_faces[axis], layer, psi)
            div = staggered_derivative(flux, grid, axis, bc=self.halo, order=self.order, t=t, forward=False, flux=True)
            if layer is not None:
                psi_a = layer.points.b * memory[axis].points + layer.points.a * div
                div = div * layer.points.inv_kappa + psi_a
                new_memory.append(CPMLMemory(psi_p, psi_a))
            else:
                new_memory.append(None)
            total = total + div
        return total, tuple(new_memory)

    def _divergence_interior(self, p, operator: AcousticOperator, memory):
        """`_divergence` on the points `R .. n - R - 1` of every axis (`R = order - 1`, its reach), from
        shifted slices only: no halo, no padded copy, the same arithmetic in the same order."""
        nd, order, half, reach = self.grid.ndim, self.order, self.order // 2, self.order - 1
        inv_rho_faces, cpml = operator.inv_rho_faces, operator.cpml
        total, new_memory = 0.0, []
        joint = self._joint_fluxes(p, operator)
        for axis in range(nd):
            n, h = p.shape[axis], self.grid.spacing[axis]

            def across(x, axis=axis):  # the interior along every other axis
                return _across(x, axis, reach, reach)

            def on_faces(x, n=n, axis=axis):  # the half points half - 1 .. n - half - 1 along axis
                return take(across(x), axis, half - 1, n - half)

            def inside(x, n=n, axis=axis):  # the points R .. n - R - 1 along axis
                return take(across(x), axis, reach, n - reach)

            layer = cpml[axis]
            if layer is not None:
                dp = staggered_valid(across(p), axis, order, h)
                points, faces = layer.points, layer.faces
                psi_p = on_faces(faces.b) * on_faces(memory[axis].faces) + on_faces(faces.a) * dp
                dp = dp * on_faces(faces.inv_kappa) + psi_p
                flux = dp * on_faces(inv_rho_faces[axis].at(axis))
            elif joint is not None:
                flux = joint[axis]
            else:
                store = materialize if _stores_flux(order, p.size) else _call
                flux = store(
                    lambda p, f, axis=axis: self._flux_interior(p, f, axis, reach, reach), p, inv_rho_faces[axis]
                )
            div = staggered_valid(flux, axis, order, h)
            if layer is not None:
                psi_a = inside(points.b) * inside(memory[axis].points) + inside(points.a) * div
                div = div * inside(points.inv_kappa) + psi_a
                new_memory.append(CPMLMemory(take(psi_p, axis, half, half + n - 2 * reach), psi_a))
            else:
                new_memory.append(None)
            total = total + div
        return total, tuple(new_memory)

    def _flux_interior(self, p, faces: FaceBuoyancy, axis: int, lo: int, hi: int):
        """The face flux `(dp/dx_axis) / rho` without CPML on the half points `half - 1 .. n - half - 1` of `axis`
        and the points `lo .. n - hi - 1` of every other axis, from shifted slices of `p` and of the face
        values (`faces`: whole arrays, sliced here, so that XLA reads them in place)."""
        order, half, n = self.order, self.order // 2, p.shape[axis]
        cut = lambda x: _across(x, axis, lo, hi)  # noqa: E731
        dp = staggered_valid(cut(p), axis, order, self.grid.spacing[axis])
        if faces.points is None:
            return dp * take(cut(faces.values), axis, half - 1, n - half)
        # The mean buoyancy from the one array at the points (its ghosts unread here): one stream for every axis
        # (one core, 2000^2 order 2, 100 steps: 0.40 -> 0.32 s).
        b = cut(faces.points)
        return dp * mean(take(b, axis, half - 1, n - half), take(b, axis, half, n - half + 1))

    def _joint_fluxes(self, p, operator: AcousticOperator):
        """Both face fluxes of a 2-D one-pass step without CPML from one pass over `p` and the face values, where
        that pays (`_joint_flux_pays`), else `None`. They are computed on the same half-point rectangle and
        stored as one `(m, 2, m')` array whose rows alternate between the two: each element computes both
        fluxes and keeps one, so the rows of `p` a row of fluxes reads are still in cache for the other."""
        half, reach = self.order // 2, self.order - 1
        if p.ndim != 2 or any(layer is not None for layer in operator.cpml):
            return None
        if not _joint_flux_pays(self.order, p.size, _block_threads(self)):
            return None

        def both(p, faces):
            along0, along1 = (self._flux_interior(p, faces[axis], axis, half - 1, half) for axis in range(2))
            first = jnp.arange(2)[None, :, None] == 0
            return jnp.where(first, along0[:, None, :], along1[:, None, :])

        fluxes = materialize(both, p, operator.inv_rho_faces)
        # Back to the regions `_flux_interior(..., reach, reach)` gives: the interior points of the other axis.
        return [take(fluxes[:, axis, :], 1 - axis, half, half + p.shape[1 - axis] - 2 * reach) for axis in range(2)]

    def _inverse_face_density(self, rho) -> tuple[FaceBuoyancy, ...]:
        """`1 / rho` at the faces `i + 1/2` of each axis (`density_average`): `2 / (rho_i + rho_{i+1})` (stored) or
        `(1 / rho_i + 1 / rho_{i+1}) / 2` (from `1 / rho` where read), the last face's `rho_n` a ghost value
        (`1 / rho_n` the ghost of `1 / rho`)."""
        harmonic = self.density_average == "harmonic"
        x, out = (1 / rho if harmonic else rho), []
        for axis, n in enumerate(self.grid.shape):
            if self.halo.pads_from_edges and n >= 2:  # only the high ghost slab padded, not a copy of the field
                ghost = take(self.halo.pad(fold(x, axis, 1), 1, flux=True, axes=(axis,)), axis, 3, 4)
            else:
                ghost = take(self.halo.pad(x, 1, flux=True, axes=(axis,)), axis, n + 1, n + 2)
            if not harmonic:
                out.append(FaceBuoyancy(2.0 / (x + next_point(x, ghost, axis))))
            elif self._stores_faces():
                out.append(FaceBuoyancy(FaceBuoyancy(ghost, x).at(axis)))
            else:
                out.append(FaceBuoyancy(ghost, x))
        return tuple(out)

    def _stores_faces(self) -> bool:
        """Whether the harmonic rule stores its face values once per solve (as the arithmetic rule does) rather
        than computing them from `1 / rho` where read: at order 4, where the one-pass step recomputes each face
        flux at the 4 offsets of the outer stencil (and with it the face value), and at order 2 on grids that
        stay in cache. Measured on XLA:CPU, one core, float32, stored against computed: order 4, 300^2 x 1,000
        steps 0.10 against 0.12-0.13 s, 1000^2 x 300 0.29 against 0.34 s, 2000^2 x 100 even; order 2, 300^2
        0.043 against 0.046 s, but 600^2 x 500 0.130 against 0.109 s, 1000^2 x 300 0.22 against 0.18 s,
        2000^2 x 100 0.34 against 0.32 s (and no face arrays to allocate per solve). At order 4 on grids small enough
        that the face flux is stored (`_stores_flux`), stored face values still ran faster: 300^2 x 1,000 0.093-0.097
        against 0.097-0.100 s."""
        return self.order == 4 or (self.order == 2 and self.grid.size < 2**18)

    def _inject(self, field, src, c, t, scale, ghosts: int = 0):
        """`field` plus the sources of `scale` at `t`; `field` may carry `ghosts` points around the grid."""
        if src is None:
            return field
        local, inside = self._locate(src)
        idx = tuple(local.T)
        value = scale * 4 * math.pi * c[idx] ** 2 * ricker(t, self.f0, self.amplitude).astype(field.dtype)
        # On one block of a sharded grid only the block holding a source injects it.
        return field.at[tuple((local + ghosts).T)].add(value if inside is None else jnp.where(inside, value, 0))

    def _locate(self, points):
        return locate(self.halo, self.grid.shape, points)

    # ---- what Leapfrog asks for ----------------------------------------------------------------
    has_interior: ClassVar[bool] = True

    def wave_coefficients(self, params, dt) -> WaveCoefficients:
        # The run-time positivity checks of traced c and rho ride on the stable step (`leapfrog_stable_dt`),
        # which `Leapfrog` checks on y0 before every run, not on kappa: tied to kappa, XLA:CPU stored kappa
        # twice (the untied one read by the stable step's maximum), a pass over the grid more per solve
        # (jax 0.12.0.1, float32, 100 steps: 200^3 order 8 one core 4.23-4.27 -> 4.18-4.20 s).
        c, rho, _ = self._medium(params)
        cpml = tuple(cpml_axis(profiles, dt) for profiles in self._layers(c))
        operator = AcousticOperator(rho * c**2, self._inverse_face_density(rho), cpml)
        return WaveCoefficients(operator, AcousticSource(c, self._source(params)))

    def acceleration(self, t, p, memory, operator: AcousticOperator, grid=None):
        """`(kappa div(grad(p) / rho), new CPML memory)`; `memory=None`: without the layers' memory terms."""
        cpml = operator.cpml if memory is not None else (None,) * self.grid.ndim
        div, memory = self._divergence(t, p, operator.inv_rho_faces, cpml, memory, grid)
        return operator.kappa * div, memory

    def acceleration_interior(self, p, memory, operator: AcousticOperator):
        div, memory = self._divergence_interior(p, operator, memory)
        return inner(operator.kappa, self.order - 1) * div, memory

    def add_source(self, field, t, source: AcousticSource, scale):
        # The barrier keeps XLA from fusing the injection into the next step's reads of the edge rows, which
        # left the field before it live and cost a copy of the field per step (measured on jax 0.12 with the
        # grid sharded over 2 CPU devices, 2000^2 order 2: 0.59 -> 0.42 s; 200^3 order 8 on one device also
        # copied per step). jax 0.10.2's XLA fuses it regardless.
        return jax.lax.optimization_barrier(self._inject(field, source.points, source.c, t, scale))

    # ---- the padded-state step (Leapfrog on XLA:CPU) ---------------------------------------------
    has_padded_step: ClassVar[bool] = True

    def padded_step_applies(self) -> bool:
        """From order 4 where the one-pass step's edge slabs (`4 (order - 1)` points per axis, through the
        halo-padded operator) hold a tenth of the points or more (3-D, small 2-D grids), and at order 4 on grids
        that stay in cache, where the one-pass step stores its face flux as this one does (`_stores_flux`); not at
        order 2, whose one-pass step recomputes it in one fused pass. Any boundary conditions: the ghosts along an
        axis are padded onto the points next to its two edges, side by side, as a halo that `pads_from_edges`
        pads the whole axis (periodic sides wrap across the two; a `ShardedHalo` brings the neighbours' points).

        Measured (float32, 2-core machine, best of 5; jax 0.10.2 / 0.12.0.1), padded against one-pass: 200^3
        order 8, 100 steps, 3.33 / 3.11 against 5.30 / 5.15 s (one core 6.3 / 5.4 against 9.0 / 9.4 s); 300^2
        order 8, 1,000 steps, 0.219 / 0.139 against 0.235 / 0.156 s; at 2000^2 order 8 (slabs 2.8 % of the
        points) one core lost (1.88 / 1.37 against 1.33 / 1.29 s), both cores gained 5 %; sharded over 2 CPU
        devices, 200^3 order 8 2.90 / 3.17 against 5.49 / 5.41 s. Order 4 (session 47, jax 0.12.0.1, one core,
        harmonic rule): 48^3 x 300 0.067 against 0.145 s, 200^3 x 30 1.23 against 1.73 s (both cores 0.86 against
        1.44 s), 300^2 x 1,000 0.076 against 0.089 s, 362^2 x 700 0.104 against 0.114 s, but 500^2 x 400 0.154
        against 0.101 s. Order 2: 48^3 x 300 0.060 against 0.047 s, 128^3 x 60 0.34 against 0.19 s."""
        half, shape, order = self.order // 2, self.grid.shape, self.order
        slabs = sum(4 * (order - 1) / n for n in shape)
        pays = slabs >= 0.1 or (order == 4 and _stores_flux(order, self.grid.size))
        return order >= 4 and self.halo.pads_from_edges and all(n >= 4 * half for n in shape) and pays

    def to_padded(self, p, t):
        half = self.order // 2
        return self._refresh_ghosts(jnp.pad(p, half), t)

    def from_padded(self, p):
        return inner(p, self.order // 2)

    def _refresh_ghosts(self, p, t):
        """The padded field `p` with the ghosts along each axis (on the grid's points along the others)
        filled by the halo from the points next to each edge; the corners, which no stencil reads, as
        they are."""
        half, shape = self.order // 2, self.grid.shape
        pieces = []
        for axis in range(len(shape)):
            if self.halo.zero_ghosts(axis):  # zeros since `to_padded`, never written over
                pieces.append(None)
                continue
            ghosts = self.halo.pad(fold(inner(p, half), axis, 2 * half), half, t=t, axes=(axis,))
            pieces.append((take(ghosts, axis, 0, half), take(ghosts, axis, 5 * half, 6 * half)))
        return place_ghosts(p, jax.lax.optimization_barrier(pieces), half, padded=range(len(shape)))

    def padded_update(
        self, t, p, p_prev, out, operator: AcousticOperator, source: AcousticSource | None, dt, start: bool = False
    ):
        """`2p - p_prev + dt^2 (K(p) + S(t))` in the padded layout (`order // 2` ghost points around the
        grid), its ghosts filled for `t + dt`; written over `out` (a buffer of that layout, e.g. `p_prev`,
        which the step reads only at the points it writes) or, with `out=None`, into a new buffer.
        `start=True`: the Taylor start `p - dt v + dt^2 K(p) / 2` (`p_prev` holds `v`, grid-shaped), its
        ghosts filled for `t - dt`, without sources. The same arithmetic as the halo-padded step: each
        axis's face flux from shifted slices of `p`, its ghost faces by the halo's flux rule from the faces
        next to each edge (recomputed there), stored once, then the divergence from shifted slices of it."""
        half, order, shape = self.order // 2, self.order, self.grid.shape
        weights, total = staggered(1, order), 0.0
        points = points_with_ghosts(operator.inv_rho_faces)
        for axis, n in enumerate(shape):
            h, line = self.grid.spacing[axis], p
            for b in range(len(shape)):  # the grid's points along every other axis
                line = line if b == axis else take(line, b, half, half + shape[b])
            if points is None:
                stored = operator.inv_rho_faces[axis].values
                face_value = lambda first, count, stored=stored, axis=axis: take(stored, axis, first, first + count)  # noqa: E731
            else:
                below = _across(points, axis, 0, 1)  # the grid's points along every other axis
                face_value = lambda first, count, below=below, axis=axis: mean(  # noqa: E731
                    take(below, axis, first, first + count), take(below, axis, first + 1, first + count + 1)
                )

            def faces(first, count, line=line, axis=axis, h=h, face_value=face_value):
                # The faces first + 1/2 .. first + count - 1/2: points first + 1 - half .. first + count + half.
                window = take(line, axis, first, first + count + order)
                return apply(window, axis, range(1, order + 1), weights, count, 1 / h) * face_value(first, count)

            flux = pad_zeros(faces(0, n), half, axis)
            if self.halo.zero_ghosts(axis):  # stored once, not recomputed inside each shifted read of it
                flux = jax.lax.optimization_barrier(flux)
            else:
                edges = jnp.concatenate([faces(0, 2 * half), faces(n - 2 * half, 2 * half)], axis=axis)
                ghosts = self.halo.pad(edges, half, t=t, flux=True, axes=(axis,))
                ghosts = (take(ghosts, axis, 0, half), take(ghosts, axis, 5 * half, 6 * half))
                pieces = [jax.lax.optimization_barrier(ghosts) if b == axis else None for b in range(len(shape))]
                flux = place_ghosts(flux, pieces, half)
            total = total + apply(flux, axis, range(order), weights, n, 1 / h)
        a, b, c = leapfrog_weights(dt, start)
        new = a * inner(p, half) - b * (p_prev if start else inner(p_prev, half)) + c * (operator.kappa * total)
        if out is None:  # a new buffer: XLA:CPU may split this pass over its threads
            out = pad_zeros(new, half)
        else:
            new = jax.lax.optimization_barrier(new) if _apart_interior(self) else new
            out = jax.lax.dynamic_update_slice(out, new.astype(out.dtype), (half,) * len(shape))
        if not start:
            # The barriers keep the ghosts' reads of the new field out of the in-place writes (each a copy otherwise).
            out = jax.lax.optimization_barrier(self._inject(out, source.points, source.c, t, dt**2, ghosts=half))
        return jax.lax.optimization_barrier(self._refresh_ghosts(out, t - dt if start else t + dt))

    def initial_memory(self, p0, operator: AcousticOperator):
        zeros = jnp.zeros_like(p0)
        return tuple(None if layer is None else CPMLMemory(zeros, zeros) for layer in operator.cpml)

    def position_velocity(self, y):
        return y["p"], y["v"]

    def wave_outputs(self, p, v, save):
        save = ("p", "seismogram") if save is None else ((save,) if isinstance(save, str) else tuple(save))
        unknown = [s for s in save if s not in _OUTPUTS]
        if unknown:
            raise ValueError(f"AcousticWave: save must name outputs among {_OUTPUTS}, got {unknown}")
        out = {"p": lambda: p, "v": lambda: v, "seismogram": lambda: self.record(p)}
        return {k: out[k]() for k in save}

    def leapfrog_stable_dt(self, params):
        self._source(params)  # checked here, before tracing, so a bad index is a ValueError
        return 2.0 / self._omega_max(params)

    def _omega_max(self, params):
        c, rho, problems = self._medium(params)
        lam = (
            jnp.max(rho * c**2)
            * (1 / jnp.min(rho))  # = max(1 / rho), without a division per point
            * sum(symbol_radius("staggered2", self.order) / h**2 for h in self.grid.spacing)
        )
        return tie_problems(jnp.sqrt(lam), problems)

    # ---- method of lines ------------------------------------------------------------------------
    def tendency(self, t, y, params):
        c, rho = self.medium(params)
        d, _ = self._divergence(t, y["p"], self._inverse_face_density(rho), (None,) * self.grid.ndim, None)
        dv = self._inject(rho * c**2 * d, self._source(params), c, t, 1.0)
        damping = self._damping(c)
        if damping is not None:
            dv = dv - damping * y["v"]
        return {"p": y["v"], "v": dv}

    def _damping(self, c):
        """The layers' damping rate `d / kappa + alpha` (1/time) at the points, or `None` without CPML."""
        layers = [x for x in self._layers(c) if x is not None]
        if not layers:
            return None
        return sum(damping_rate(points) for points, _ in layers)

    def spectral_radius(self, params):
        """`(d_max, omega_max)`: the largest layer damping rate and the largest frequency (1/time),
        the bounds `sciax.pde.RK4` checks its step against."""
        c, _ = self.medium(params)
        damping = self._damping(c)
        return (0.0 if damping is None else jnp.max(damping)), self._omega_max(params)

    def record(self, p: Float[Array, "..."]) -> Float[Array, "... R"]:
        """Pressure at the receivers: `p[..., i, j]` for each receiver, last axis `len(receivers)`."""
        if not self.receivers:
            return jnp.zeros(p.shape[: p.ndim - self.grid.ndim] + (0,), p.dtype)
        local, inside = self._locate(np.asarray(self.receivers))
        values = p[(...,) + tuple(local.T)]
        # On one block of a sharded grid each block records the receivers it holds; the sum over blocks
        # adds zeros to each recorded value (exact).
        return values if inside is None else self.halo.all_sum(jnp.where(inside, values, 0))

    def add_at_receivers(self, field: Float[Array, "..."], values: Float[Array, "... R"]) -> Float[Array, "..."]:
        """`field + record^T(values)`: each receiver's value (last axis of `values`, in `receivers`'
        order) added to `field` at its grid point; the transpose of `record` (an adjoint source, e.g.
        the data residuals of an adjoint-state gradient). On a whole grid an in-place add at the
        receivers (no pass over the grid); on a block of a sharded grid through `record`'s
        transpose. Linear, differentiable in both arguments."""
        if not self.receivers:
            return field
        local, inside = self._locate(np.asarray(self.receivers))
        if inside is None:
            return field.at[(...,) + tuple(local.T)].add(values.astype(field.dtype))
        _, transpose = jax.vjp(self.record, jnp.zeros_like(field))
        return field + transpose(values.astype(field.dtype))[0]

    def seismograms(self, sol) -> xr.DataArray:
        """The `"seismogram"` output of a `Solution` as an `xarray.DataArray` (dims `time, receiver`)."""
        data = np.asarray(sol.ys["seismogram"])
        dims = ("member",) * (data.ndim - 2) + ("time", "receiver")
        coords = {"time": np.asarray(sol.ts).reshape(-1, data.shape[-2])[0], "receiver": np.arange(data.shape[-1])}
        for axis, name in enumerate(self.grid.dims):
            coords[name] = ("receiver", self.grid.coords()[axis][[r[axis] for r in self.receivers]])
        return xr.DataArray(
            data, dims=dims, coords=coords, name="seismogram", attrs={"long_name": "pressure at receivers"}
        )


def _across(x, axis: int, lo: int, hi: int):
    """`x` on the points `lo .. n - hi - 1` of every axis but `axis`."""
    for b in range(x.ndim):
        x = x if b == axis else take(x, b, lo, x.shape[b] - hi)
    return x


def _call(fn, *args):
    return fn(*args)
