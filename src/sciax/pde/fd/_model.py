"""Finite-difference models by the method of lines: `AbstractFDModel` and `FDModel`."""

from __future__ import annotations

import abc
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PyTree, Real

from ..._checks import error_if_tied
from ..._labels import Labels
from ..._method import AbstractMethod
from ..._model import AbstractModel
from ...grid import CPML, AbstractAbsorbing, AbstractHalo, Grid, Periodic, Sponge, as_halo, layer_depth
from ...grid.stencils import check_order, symbol_radius
from ...linalg import stencil_pattern


def grid_labels(grid: Grid, variable: str, units, long_name, time_units) -> Labels:
    """`Labels` for fields on `grid` (dims x/y/z with coordinates)."""
    return Labels.build(
        variable=variable,
        dims=grid.dims,
        coords=dict(zip(grid.dims, grid.coords())),
        units=None if units is None else {variable: units},
        long_names=None if long_name is None else {variable: long_name},
        time_units=time_units,
    )


def block_part(x: Array, axis: int, offset, m: int) -> Array:
    """The `m` entries of a whole-grid profile `x` from `offset` along `axis` (the profile itself on
    a whole grid; a traced `offset` inside `jax.shard_map`)."""
    if x.shape[axis] == m and isinstance(offset, int):
        return x
    return jax.lax.dynamic_slice_in_dim(x, offset, m, axis=axis)


def locate(halo: AbstractHalo, shape: tuple[int, ...], points):
    """`(local, inside)`: global grid indices `points` `(m, ndim)` as indices into the block of `shape`
    that `halo` fills (clipped to it), and whether each lies in it; `inside` is `None` on a whole grid
    (every point is inside). Models with point sources and receivers ask this, so that the same code
    runs on a whole grid or on one block of a sharded one."""
    offsets, global_shape = halo.placement(shape)
    if global_shape == tuple(shape) and all(isinstance(o, int) and o == 0 for o in offsets):
        return points, None
    local = points - jnp.asarray(offsets, dtype=jnp.int32)
    inside = jnp.all((local >= 0) & (local < jnp.asarray(shape)), axis=-1)
    return jnp.clip(local, 0, jnp.asarray(shape) - 1), inside


def check_positive_field(value, name: str, what: str):
    """`ValueError` (concrete) or `equinox.error_if` (traced) unless every entry of `value` is > 0."""
    value, problem = positive_field_problem(value, name, what)
    return tie_problems(value, [problem])


def tie_problems(x, problems):
    """`x`, carrying the run-time checks `problems` (`(predicate, message)` pairs, or `None` for none)."""
    for problem in problems:
        x = x if problem is None else error_if_tied(x, *problem)
    return x


def positive_field_problem(value, name: str, what: str):
    """`(value, problem)`: `ValueError` now if `value` is concrete and not > 0 everywhere (`problem` is then
    `None`); if traced, `problem = (predicate, message)` for `error_if_tied` on whatever array the caller
    computes from `value` anyway (tying the check to `value` itself costs a pass over it where it has
    several consumers)."""
    value = jnp.asarray(value)
    if not isinstance(value, jax.core.Tracer):
        # NumPy, not jnp: inside a jit trace jnp would stage the test on a closed-over concrete array.
        host = np.asarray(value)
        if not np.all(host > 0):
            raise ValueError(f"{name}: {what} must be > 0 everywhere, got minimum {float(host.min())!r}")
        return value, None
    # A min-reduction: `any(value <= 0)` wrote the whole comparison out before reducing it (XLA:CPU).
    return value, (jnp.min(value) <= 0, f"{name}: {what} must be > 0 everywhere")


class AbstractFDModel(AbstractModel):
    """A PDE on a `Grid` discretised in space by finite differences (method of lines).

    The state is an array of shape `grid.shape`, or a dict of such arrays (one
    per field). `rhs` is the spatial discretisation `tendency(t, u, params)` plus,
    where the halo is built from boundary conditions with `sciax.pde.Sponge`
    sides, the sponge damping `-sigma(x) u`, so equations never special-case
    boundaries. Any `sciax.ode` method integrates it; `sciax.pde.RK4(dt)` is a
    fixed-step alternative that checks the CFL condition using `spectral_radius`.

    **Fields** (set by subclasses): `grid`; `halo` (an `AbstractHalo`, built from
    the boundary conditions); `order` (2, 4, 6 or 8); `info` (labels).
    """

    grid: eqx.AbstractVar[Grid]
    halo: eqx.AbstractVar[AbstractHalo]
    order: eqx.AbstractVar[int]
    info: eqx.AbstractVar[Labels]

    @abc.abstractmethod
    def tendency(self, t: Real[Array, ""], u: PyTree[Array], params: PyTree) -> PyTree[Array]:
        """The discretised right-hand side without absorbing layers; same structure as `u`."""

    def check_state(self, u, what: str = "the state") -> None:
        """`ValueError`/`TypeError` unless every leaf of `u` is a real array of shape `grid.shape`."""
        name = type(self).__name__
        for path, leaf in jax.tree_util.tree_flatten_with_path(u)[0]:
            shape = getattr(leaf, "shape", None)
            if shape is None or tuple(shape) != self.grid.shape:
                raise ValueError(
                    f"{name}: {what}{jax.tree_util.keystr(path)} has shape {shape}, but the grid has "
                    f"shape {self.grid.shape}; they must match"
                )
            if not jnp.issubdtype(leaf.dtype, jnp.floating):
                raise TypeError(
                    f"{name}: {what}{jax.tree_util.keystr(path)} must be real floating point, got {leaf.dtype}"
                )

    @property
    def rhs_reach(self) -> int:
        """How many points past a point one evaluation of `rhs` reads along any axis: `order - 1`, the
        farthest a `sciax.pde.fd` stencil of this order reads (`diffusion` and a staggered pair:
        `order - 1`; central derivatives: `order // 2`; `upwind`: 1). A tendency that nests
        stencils (a derivative of a derivative: the sum of their reaches) or uses wider ones
        (`weno5`: 3) reads further and says so (`FDModel`'s `reach=`). Sets the wide halo of
        `sciax.parallel.shard(..., halo_every=k)` under `sciax.pde.RK4`: `4 k rhs_reach` points,
        as each RK4 step chains four evaluations."""
        return self.order - 1

    def jacobian_sparsity(self, y0):
        """The star pattern of reach `rhs_reach` over every field (`sciax.linalg.stencil_pattern`).

        Every field at a point is taken as coupled to every field at the points a stencil
        reads (an over-estimate is harmless: it costs a few more `jvp`s). `None` (unknown)
        for states whose leaves are not all of `grid.shape`, or absorbing layers other
        than sponges. Stiff methods check the pattern with a probe before using it.
        """
        sides = getattr(self.halo, "sides", None)
        leaves = jax.tree_util.tree_leaves(y0)
        if sides is None or any(np.shape(leaf) != tuple(self.grid.shape) for leaf in leaves):
            return None
        if any(isinstance(b, AbstractAbsorbing) and not isinstance(b, Sponge) for pair in sides for b in pair):
            return None
        periodic = tuple(all(isinstance(b, Periodic) for b in pair) for pair in sides)
        return stencil_pattern(self.grid, self.rhs_reach, periodic, fields=len(leaves))

    def sponge(self, dtype) -> Array | None:
        """The sponge damping rate `sigma` on the grid (1/time), or `None` without sponge sides.

        The layers sit at the edges of the whole grid: on one block of a sharded grid the
        profile is the whole grid's, sliced where the halo says the block sits
        (`AbstractHalo.placement`), so a sharded run damps exactly as the unsharded one.
        """
        sides = getattr(self.halo, "sides", None)
        if sides is None or not any(isinstance(b, Sponge) for pair in sides for b in pair):
            return None
        offsets, whole = self.halo.placement(self.grid.shape)
        sigma = jnp.zeros((1,) * self.grid.ndim, dtype)
        for axis, (low, high) in enumerate(sides):
            n = whole[axis]
            profile = np.zeros(n)
            for side, depth in ((low, layer_depth(n, low, None, Sponge)), (high, layer_depth(n, None, high, Sponge))):
                if isinstance(side, Sponge):
                    profile = np.maximum(profile, side.strength * depth**2)
            if profile.any():
                shape = [1] * self.grid.ndim
                shape[axis] = n
                part = block_part(
                    jnp.asarray(profile.reshape(shape), dtype), axis, offsets[axis], self.grid.shape[axis]
                )
                sigma = jnp.maximum(sigma, part)
        return jnp.broadcast_to(sigma, self.grid.shape)

    def rhs(self, t, y, params):
        """`tendency(t, y, params)` minus the sponge damping `sigma * y` (method of lines)."""
        self.check_state(y)
        out = self.tendency(t, y, params)
        sigma = self.sponge(jnp.result_type(*jax.tree_util.tree_leaves(y)))
        if sigma is not None:
            out = jax.tree_util.tree_map(lambda du, u: du - sigma * u, out, y)
        return out

    def default_method(self) -> AbstractMethod:
        """`sciax.ode.Tsit5()`: adaptive and explicit, even for diffusion, which is stiff.

        An explicit method needs about `ρ(J)·T / 3.3` steps (`ρ(J) ≈ 4 D d / dx²` for
        diffusion), but each step is a few stencil passes, while sciax's stiff methods
        take few steps, each with a Jacobian solve that is dense (O(N³)) or, matrix-free,
        many unpreconditioned Krylov iterations. On the heat equation in 1-D and 2-D
        `Tsit5` was the fastest of them at equal error (`benchmarks/fd_stiff_default.py`;
        numbers in docs/benchmarks.md, guidance in docs/choosing.md). For a fixed,
        CFL-checked step use `sciax.pde.RK4(dt)`.
        """
        from ...ode import Tsit5  # local: keeps pde importable on its own

        return Tsit5()

    def labels(self) -> Labels:
        return self.info


class FDModel(AbstractFDModel):
    """A finite-difference PDE given by its right-hand side (final: instantiate, don't subclass).

    **Arguments:**

    - `grid`: the `sciax.pde.Grid`.
    - `tendency`: `tendency(t, u, params, model) -> du/dt` with the structure of `u`;
      inside, call `sciax.pde.fd` stencils with `bc=model.halo, order=model.order, t=t`.
    - `bc`: boundary conditions (one for all sides, one per axis, or `(low, high)`
      pairs; `Periodic`, `Dirichlet`, `Neumann`, `Sponge`) or an `AbstractHalo`.
      `CPML` is for wave equations and is rejected here.
    - `order`: stencil order, 2, 4, 6 or 8.
    - `radius`: optional `radius(params, model) -> (diffusive, oscillatory)` bounds
      used for the CFL check of `sciax.pde.RK4`.
    - `reach`: how many points past a point `tendency` reads along any axis (see
      `rhs_reach`); default `order - 1`, enough for terms that each apply one central or
      staggered `sciax.pde.fd` stencil of that order to the state. State it for nested
      stencils (e.g. a `derivative` of a `derivative`: the sum of their reaches) or `weno5`
      (3); used only by `sciax.parallel.shard(..., halo_every=k)`.
    - `variable`, `units`, `long_name`, `time_units`: labels for `to_xarray`.

    `tendency`, `radius` and the boundary conditions are static; `params` is
    differentiable.
    """

    grid: Grid = eqx.field(static=True)
    halo: AbstractHalo
    order: int = eqx.field(static=True)
    info: Labels = eqx.field(static=True)
    fn: Callable = eqx.field(static=True)
    radius: Callable | None = eqx.field(static=True)
    reach: int | None = eqx.field(static=True)

    def __init__(
        self,
        grid: Grid,
        tendency: Callable,
        *,
        bc,
        order: int = 2,
        radius: Callable | None = None,
        reach: int | None = None,
        variable: str = "u",
        units: str | None = None,
        long_name: str | None = None,
        time_units: str | None = None,
    ):
        if not isinstance(grid, Grid):
            raise TypeError(f"FDModel: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
        if not callable(tendency):
            raise TypeError(
                f"FDModel: tendency must be callable tendency(t, u, params, model), got {type(tendency).__name__}"
            )
        self.grid = grid
        self.halo = as_halo(grid, bc)
        sides = getattr(self.halo, "sides", ())
        if any(isinstance(b, CPML) for pair in sides for b in pair):
            raise ValueError(
                "FDModel: CPML is an absorbing layer for wave equations (sciax.pde.AcousticWave); "
                "for this equation use sciax.pde.Sponge(width, strength) as the absorbing boundary"
            )
        self.order = check_order(order, "FDModel: order")
        self.fn, self.radius = tendency, radius
        if reach is not None and (isinstance(reach, bool) or not isinstance(reach, (int, np.integer)) or reach < 1):
            raise ValueError(
                f"FDModel: reach must be None or an integer >= 1 (points the tendency reads past a "
                f"point), got {reach!r}"
            )
        self.reach = None if reach is None else int(reach)
        self.info = grid_labels(grid, variable, units, long_name, time_units)

    def tendency(self, t, u, params):
        return self.fn(t, u, params, self)

    def spectral_radius(self, params):
        return None if self.radius is None else self.radius(params, self)

    @property
    def rhs_reach(self) -> int:
        return self.order - 1 if self.reach is None else self.reach


def positive_param(params, key: str, model: AbstractFDModel, what: str):
    """`params[key]` as an array (scalar or grid-shaped), checked > 0; errors name the equation."""
    name = what
    if not isinstance(params, dict) or key not in params:
        raise TypeError(f"{name}: params must be a dict with key {key!r}, got {params!r:.100}")
    value = jnp.asarray(params[key])
    if value.ndim and value.shape != model.grid.shape:
        raise ValueError(f'{name}: params["{key}"] has shape {value.shape}, but the grid has shape {model.grid.shape}')
    return check_positive_field(value, name, f'params["{key}"]')


def diffusion_radius(diffusivity, model: AbstractFDModel):
    """Spectral radius of `div(D grad)` at the model's order: `max D * sum_i R / dx_i^2`."""
    return jnp.max(diffusivity) * sum(symbol_radius("staggered2", model.order) / h**2 for h in model.grid.spacing)
