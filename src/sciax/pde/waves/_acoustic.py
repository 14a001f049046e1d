"""`AcousticWave`: variable-density acoustics `p_tt = rho c^2 div(grad(p) / rho) + sources` in 2-D/3-D."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import xarray as xr
from jaxtyping import Array, ArrayLike, Float

from ..._labels import Labels
from ...grid import CPML, AbstractHalo, Grid, Sponge, as_halo, fits, inner, layer_depth, split_evaluate, take
from ...grid.stencils import check_order, staggered_derivative, staggered_valid, symbol_radius
from ..fd._model import check_positive_field, grid_labels
from ._leapfrog import AbstractWaveModel

_OUTPUTS = ("p", "v", "seismogram")


def ricker(t: Float[ArrayLike, "..."], f0: float, amplitude: float = 1e-3) -> Float[Array, "..."]:
    """Ricker wavelet `amplitude (1 - 2 a (t - t0)^2) exp(-a (t - t0)^2)`, `a = (pi f0)^2`, `t0 = 1.2 / f0`.

    `f0`: dominant frequency (1/time). Differentiable in `t`.
    """
    a = (math.pi * f0) ** 2
    tau = jnp.asarray(t) - 1.2 / f0
    return amplitude * (1 - 2 * a * tau**2) * jnp.exp(-a * tau**2)


def _one_pass(halo, grid: Grid, reach: int, memory) -> bool:
    """Whether a leapfrog step takes `split_evaluate`'s one-pass route: on XLA:CPU (which does not fuse
    padded fields into their consumers; XLA:GPU does, and is no faster split), with a halo that can pad
    folded blocks, a grid wide enough, and no CPML memory (its extra outputs made the split step, and
    the gradients of full-waveform inversion, slower than the padded one when measured)."""
    return jax.default_backend() == "cpu" and halo.foldable and fits(grid, reach) and all(m is None for m in memory)


class AcousticWave(AbstractWaveModel):
    """Acoustic waves in a medium of variable velocity `c` and density `rho` (2-D or 3-D).

    `p_tt = kappa div(grad(p) / rho) + 4 pi c^2 s(t) delta_src` with bulk modulus
    `kappa = rho c^2` and a Ricker source `s = ricker(t, f0, amplitude)` at each
    source point. Space: staggered differences of order `order` (pressure on the
    points, `grad(p)/rho` on the half points, `rho` averaged to the half points by
    two-point means). With `order=2`, `bc=Neumann()` it is, to round-off, the
    classic variable-density scheme `p+ = 2p - p- + dt^2 (kappa d + 4 pi c^2 s delta)`.

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
    all sides), `Neumann()`, `Dirichlet(0)` (pressure release), `Periodic()`, per
    side as for any FD model, or an `AbstractHalo` (then no CPML); `order`: 2-8;
    `amplitude` of the wavelet (default 1e-3).

    **Speed and scale:** on XLA:CPU a `Leapfrog` step without CPML is one pass over memory (interior
    from shifted slices, edge strips from folded blocks: `split_evaluate`), the same values as the
    halo-padded step. Sharded with `sciax.parallel.shard`, sources, receivers and CPML layers may lie
    along sharded axes.

    Reference for the CPML: Komatitsch & Martin, Geophysics 72 (2007) SM155.
    """

    grid: Grid = eqx.field(static=True)
    halo: AbstractHalo
    order: int = eqx.field(static=True)
    info: Labels = eqx.field(static=True)
    f0: float = eqx.field(static=True)
    amplitude: float = eqx.field(static=True)
    receivers: tuple[tuple[int, ...], ...] = eqx.field(static=True)

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
        self.info = grid_labels(grid, "p", None, None, time_units)

    # ---- medium, sources, absorbing layers ----------------------------------------------------
    def medium(self, params) -> tuple[Array, Array]:
        """`(c, rho)` broadcast to `grid.shape`, checked > 0."""
        if not isinstance(params, dict) or "c" not in params:
            raise TypeError('AcousticWave: params must be a dict with "c" (velocity), optional "rho" and "source"')
        out = []
        for key in ("c", "rho"):
            # The default density takes c's dtype, so a float32 model stays float32 under x64.
            value = jnp.asarray(params[key]) if key in params else jnp.ones((), out[0].dtype)
            if value.ndim and value.shape != self.grid.shape:
                raise ValueError(
                    f'AcousticWave: params["{key}"] has shape {value.shape}, but the grid has shape {self.grid.shape}'
                )
            value = check_positive_field(value, "AcousticWave", f'params["{key}"]')
            out.append(jnp.broadcast_to(value, self.grid.shape))
        return out[0], out[1]

    def _source(self, params):
        if "source" not in params:
            return None
        src = jnp.asarray(params["source"])
        if not jnp.issubdtype(src.dtype, jnp.integer) or src.shape[-1:] != (self.grid.ndim,) or src.ndim > 2:
            raise ValueError(
                f'AcousticWave: params["source"] must be integer grid indices of shape ({self.grid.ndim},) '
                f"or (n_sources, {self.grid.ndim}), got {src.dtype} {src.shape}"
            )
        src = src.reshape(-1, self.grid.ndim)
        shape = self.halo.placement(self.grid.shape)[1]  # the whole grid's, also on one block of it
        outside = jnp.any((src < 0) | (src >= jnp.asarray(shape)))
        if not isinstance(src, jax.core.Tracer):
            if bool(outside):
                raise ValueError(
                    f"AcousticWave: source {np.asarray(src).tolist()} lies outside the grid of shape {shape}"
                )
            return src
        return eqx.error_if(src, outside, "AcousticWave: a source lies outside the grid")

    def _profiles(self, axis: int, c_max):
        """`(d, alpha, 1/kappa)` at the points and at the half points along `axis`, or `None`."""
        low, high = getattr(self.halo, "sides", ((None, None),) * self.grid.ndim)[axis]
        if not (isinstance(low, CPML) or isinstance(high, CPML)):
            return None
        offsets, global_shape = self.halo.placement(self.grid.shape)
        n, dx = global_shape[axis], self.grid.spacing[axis]  # layers sit at the whole grid's edges
        shape = [1] * self.grid.ndim
        shape[axis] = n
        dtype = jnp.result_type(c_max)  # the medium's dtype: float32 profiles for a float32 model
        out = []
        for shift in (0.0, 0.5):
            d = alpha = 0.0
            inv_k = 1.0
            for side, q in (
                (low, layer_depth(n, low, None, CPML, shift)),
                (high, layer_depth(n, None, high, CPML, shift)),
            ):
                if not isinstance(side, CPML):
                    continue
                d0 = -(side.power + 1) * c_max * math.log(side.reflection) / (2 * side.width * dx)
                alpha_max = math.pi * self.f0 if side.alpha_max is None else side.alpha_max
                d = d + d0 * q**side.power
                alpha = alpha + alpha_max * (1 - q) * (q > 0)
                inv_k = inv_k / (1 + (side.kappa_max - 1) * q**side.power)
            whole = (
                jnp.asarray(x, dtype).reshape(shape) for x in (d * jnp.ones(n), alpha * np.ones(n), inv_k * np.ones(n))
            )
            out.append(tuple(self._local(x, axis, offsets) for x in whole))
        return out

    def _local(self, x, axis: int, offsets):
        """The block's part along `axis` of a whole-grid profile `x` (unchanged on a whole grid)."""
        m = self.grid.shape[axis]
        if x.shape[axis] == m and isinstance(offsets[axis], int):
            return x
        return jax.lax.dynamic_slice_in_dim(x, offsets[axis], m, axis=axis)

    def _cpml(self, axis: int, c_max, dt: float):
        """`(b, a, 1/kappa)` at the points and at the half points along `axis`, or `None`."""
        profiles = self._profiles(axis, c_max)
        if profiles is None:
            return None
        out = []
        for d, alpha, inv_k in profiles:
            b = jnp.exp(-(d * inv_k + alpha) * dt)
            # Guard the denominator: outside the layer d = alpha = 0 and 0/0 would poison gradients.
            denom = jnp.where(d > 0, d + alpha / inv_k, 1.0)
            a = jnp.where(d > 0, d * (b - 1) / denom * inv_k, 0.0)
            out.extend([b, a, inv_k])
        return tuple(out)

    # ---- the operator ---------------------------------------------------------------------------
    def _operator(self, p, inv_rho_face, t, cpml=None, memory=None, grid=None):
        """`div(grad(p) / rho)` (with CPML memory updates), and the new memory; on `grid` (default the
        model's; `split_evaluate` passes folded blocks), halos padded."""
        grid = self.grid if grid is None else grid
        total, new_memory = 0.0, []
        for axis in range(grid.ndim):
            dp = staggered_derivative(p, grid, axis, bc=self.halo, order=self.order, t=t)
            coef = None if cpml is None else cpml[axis]
            if coef is not None:
                b, a, ik, bh, ah, ikh = coef
                psi_p = bh * memory[axis][0] + ah * dp
                dp = dp * ikh + psi_p
            acc = dp * inv_rho_face[axis]
            da = staggered_derivative(acc, grid, axis, bc=self.halo, order=self.order, t=t, forward=False, flux=True)
            if coef is not None:
                psi_a = b * memory[axis][1] + a * da
                da = da * ik + psi_a
                new_memory.append((psi_p, psi_a))
            else:
                new_memory.append(None)
            total = total + da
        return total, tuple(new_memory)

    def _operator_interior(self, p, inv_rho_face, cpml, memory):
        """`_operator` on the points `R .. n - R - 1` of every axis (`R = order - 1`, its reach), from
        shifted slices only: no halo, no padded copy, the same arithmetic in the same order."""
        nd, order, half, reach = self.grid.ndim, self.order, self.order // 2, self.order - 1
        total, new_memory = 0.0, []
        for axis in range(nd):
            n, h = p.shape[axis], self.grid.spacing[axis]

            def across(x, axis=axis):  # the interior along every other axis
                for b in range(nd):
                    x = x if b == axis else take(x, b, reach, x.shape[b] - reach)
                return x

            def on_faces(x, n=n, axis=axis):  # the half points half - 1 .. n - half - 1 along axis
                return take(across(x), axis, half - 1, n - half)

            def inside(x, n=n, axis=axis):  # the points R .. n - R - 1 along axis
                return take(across(x), axis, reach, n - reach)

            dp = staggered_valid(across(p), axis, order, h)
            coef = None if cpml is None else cpml[axis]
            if coef is not None:
                b, a, ik, bh, ah, ikh = coef
                psi_p = on_faces(bh) * on_faces(memory[axis][0]) + on_faces(ah) * dp
                dp = dp * on_faces(ikh) + psi_p
            acc = dp * on_faces(inv_rho_face[axis])
            da = staggered_valid(acc, axis, order, h)
            if coef is not None:
                psi_a = inside(b) * inside(memory[axis][1]) + inside(a) * da
                da = da * inside(ik) + psi_a
                new_memory.append((take(psi_p, axis, half, half + n - 2 * reach), psi_a))
            else:
                new_memory.append(None)
            total = total + da
        return total, tuple(new_memory)

    def _update(self, fields, grid=None):
        """`(p_next, memory)` without the source: the leapfrog update `2p - p_prev + kappa dt^2 d`."""
        t, p, p_prev, k_dt2, inv_rho_face, cpml, memory = fields
        d, memory = self._operator(p, inv_rho_face, t, cpml, memory, grid=grid)
        return 2 * p - p_prev + k_dt2 * d, memory

    def _update_interior(self, fields):
        """`_update` on the points `R .. n - R - 1` of every axis (`R = order - 1`), without halos."""
        _, p, p_prev, k_dt2, inv_rho_face, cpml, memory = fields
        d, memory = self._operator_interior(p, inv_rho_face, cpml, memory)
        reach = self.order - 1
        return 2 * inner(p, reach) - inner(p_prev, reach) + inner(k_dt2, reach) * d, memory

    def _inverse_face_density(self, rho):
        out = []
        for axis in range(self.grid.ndim):
            rp = self.halo.pad(rho, 1, flux=True, axes=(axis,))
            index = [slice(None)] * self.grid.ndim
            index[axis] = slice(2, None)
            out.append(2.0 / (rho + rp[tuple(index)][tuple(slice(0, n) for n in self.grid.shape)]))
        return tuple(out)

    def _inject(self, field, src, c, t, scale):
        if src is None:
            return field
        local, inside = self._locate(src)
        idx = tuple(local.T)
        value = scale * 4 * math.pi * c[idx] ** 2 * ricker(t, self.f0, self.amplitude).astype(field.dtype)
        # On one block of a sharded grid only the block holding a source injects it.
        return field.at[idx].add(value if inside is None else jnp.where(inside, value, 0))

    def _locate(self, points):
        """`(local, inside)`: global grid indices `(m, ndim)` as indices into this block (clipped to it)
        and whether each lies in it; `inside` is `None` on a whole grid (every point is inside)."""
        offsets, global_shape = self.halo.placement(self.grid.shape)
        if global_shape == self.grid.shape and all(isinstance(o, int) and o == 0 for o in offsets):
            return points, None
        local = points - jnp.asarray(offsets, dtype=jnp.int32)
        inside = jnp.all((local >= 0) & (local < jnp.asarray(self.grid.shape)), axis=-1)
        return jnp.clip(local, 0, jnp.asarray(self.grid.shape) - 1), inside

    # ---- leapfrog -------------------------------------------------------------------------------
    def leapfrog_prepare(self, params, dt):
        c, rho = self.medium(params)
        # The layer's damping is held fixed under differentiation (it is not part of the model to invert).
        c_max = self.halo.all_max(jax.lax.stop_gradient(jnp.max(c)))
        return {
            "c": c,
            "k_dt2": rho * c**2 * dt**2,
            "inv_rho": self._inverse_face_density(rho),
            "source": self._source(params),
            "cpml": tuple(self._cpml(ax, c_max, dt) for ax in range(self.grid.ndim)),
        }

    def leapfrog_init(self, y0, dt, prep):
        self.check_state(y0, "y0")
        p0, v0 = y0["p"], y0["v"]
        d, _ = self._operator(p0, prep["inv_rho"], 0.0)
        p_prev = p0 - dt * v0 + 0.5 * prep["k_dt2"] * d  # Taylor start, second order in dt
        memory = tuple(None if coef is None else (jnp.zeros_like(p0), jnp.zeros_like(p0)) for coef in prep["cpml"])
        return p0, p_prev, memory

    def leapfrog_step(self, carry, t, dt, prep):
        p, p_prev, memory = carry
        fields, reach = (t, p, p_prev, prep["k_dt2"], prep["inv_rho"], prep["cpml"], memory), self.order - 1
        if _one_pass(self.halo, self.grid, reach, memory):
            # One pass over memory per step: interior from shifted slices, edge strips from folded blocks.
            p_next, memory = split_evaluate(self._update, self._update_interior, fields, self.grid, reach)
        else:
            p_next, memory = self._update(fields)
        return self._inject(p_next, prep["source"], prep["c"], t, dt**2), p, memory

    def leapfrog_observe(self, carry, dt, prep, save):
        save = ("p", "seismogram") if save is None else ((save,) if isinstance(save, str) else tuple(save))
        unknown = [s for s in save if s not in _OUTPUTS]
        if unknown:
            raise ValueError(f"AcousticWave: save must name outputs among {_OUTPUTS}, got {unknown}")
        p, p_prev, _ = carry
        out = {"p": p, "v": (p - p_prev) / dt, "seismogram": self.record(p)}
        return {k: out[k] for k in save}

    @property
    def leapfrog_reach(self) -> int:
        """How far one leapfrog step reads along any axis (points): `order - 1`. Sets the halo width
        of `sciax.parallel.shard(..., halo_every=k)` (`k * leapfrog_reach`)."""
        return self.order - 1

    def leapfrog_stable_dt(self, params):
        self._source(params)  # checked here, before tracing, so a bad index is a ValueError
        return 2.0 / self._omega_max(params)

    def _omega_max(self, params):
        c, rho = self.medium(params)
        lam = (
            jnp.max(rho * c**2)
            * jnp.max(1 / rho)
            * sum(symbol_radius("staggered2", self.order) / h**2 for h in self.grid.spacing)
        )
        return jnp.sqrt(lam)

    # ---- method of lines ------------------------------------------------------------------------
    def tendency(self, t, y, params):
        c, rho = self.medium(params)
        d, _ = self._operator(y["p"], self._inverse_face_density(rho), t)
        dv = self._inject(rho * c**2 * d, self._source(params), c, t, 1.0)
        damping = self._damping(c)
        if damping is not None:
            dv = dv - damping * y["v"]
        return {"p": y["v"], "v": dv}

    def _damping(self, c):
        """The layers' damping rate `d / kappa + alpha` (1/time) at the points, or `None` without CPML."""
        c_max = self.halo.all_max(jax.lax.stop_gradient(jnp.max(c)))
        profiles = [self._profiles(axis, c_max) for axis in range(self.grid.ndim)]
        if all(x is None for x in profiles):
            return None
        # The rate itself, not -log(b) at dt = 1: b = exp(-rate) underflows to 0 in float32 for
        # realistic layers (rate > 87/time), which made the rate, and RK4's stable dt, inf.
        total = 0.0
        for x in profiles:
            if x is not None:
                d, alpha, inv_k = x[0]
                total = total + jnp.where(d > 0, d * inv_k + alpha, 0.0)
        return total

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
