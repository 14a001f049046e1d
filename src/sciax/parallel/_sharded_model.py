"""`ShardedModel`: a finite-difference model whose grid is cut into blocks over a device mesh."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, PartitionSpec

from .._checks import check_y0, error_if_tied
from .._labels import Labels
from .._method import AbstractMethod
from .._model import AbstractModel
from .._replace_static import replace_static
from .._solution import Solution
from .._step_counts import step_counts
from ..grid import BoundaryHalo, Grid
from ..pde import RK4, AbstractFDModel, AbstractFixedStep, AbstractSemilinearPDE, Leapfrog
from ..pde.fv import AbstractFVModel, AbstractSSPRK
from ._fft import check_fft_decomposition
from ._halo import ShardedHalo
from ._mesh import resolve_axes, shard_sizes
from ._sharded_grid import ShardedGrid
from ._specs import concrete_times, field_spec, split_params, tree_specs
from ._wide_halo import WideBlockHalo, WideHaloStep, extended_grid, wide_axes


class ShardedModel(AbstractModel):
    """A grid model run with its grid cut into blocks over a device mesh (final; build it with
    `sciax.parallel.shard`).

    `sciax.simulate(sharded, y0, ts, params, method=...)` returns the same
    `Solution` as the unsharded model (to round-off), with every grid-shaped
    output a global `jax.Array` cut into the same blocks.

    - Finite differences, fixed-step methods (`sciax.pde.RK4`, `sciax.pde.Leapfrog`, `StaggeredLeapfrog`):
      the whole time loop runs inside one `jax.shard_map`, each device stepping
      its block of the model (`local`, whose `ShardedHalo` exchanges halos with
      `lax.ppermute`).
    - Finite differences, other methods (adaptive `sciax.ode` methods): the method
      runs on global arrays and each right-hand side is a `jax.shard_map` of the
      block model, so error norms and step sizes stay global.
    - Spectral (`SemilinearPDE`, any `AbstractSemilinearPDE`): `local` is the model on a `ShardedGrid`; any
      method runs on global arrays and every FFT is the distributed FFT.
    - `halo_every=k`: halos `k * reach` wide, exchanged once every `k` steps (`wide_step`, a
      `WideHaloStep` over the block model on the extended block), where `reach` is how far one
      step reads: `leapfrog_reach` under `sciax.pde.Leapfrog` (wave models), `4 * rhs_reach`
      under `sciax.pde.RK4` (any finite-difference model). Other methods are refused.
    - Finite volumes (`sciax.pde.fv`, e.g. `Euler` in 2-D), `SSPRK2`/`SSPRK3`: the whole run inside
      one `jax.shard_map`; each stage's right-hand side exchanges `rhs_reach` cells per side
      (one `ShardedHalo` per field), and the CFL step's maximal speeds are reduced over the
      blocks (`lax.pmax`), so every block takes the same steps as the unsharded run.
    - Layers and points at global positions work along sharded axes: the model asks its halo
      where the block sits (`ShardedHalo.placement`) and slices the whole grid's `Sponge`
      profile, or `AcousticWave`'s and `ElasticWave`'s CPML profiles (built with the global maximum
      velocity), per block; both inject and record on the owning block only (receivers summed over
      blocks). So do they with `halo_every=k` (not `ElasticWave`, whose `StaggeredLeapfrog` states no
      reach): the extended blocks know where they sit (`WideBlockHalo`), sources are injected on every
      extended block that holds them, and receivers record on the blocks themselves.
    - Padded-state steps on the CPU run on each block: `ElasticWave` under `sciax.pde.StaggeredLeapfrog`
      (the ghosts across inner sides refreshed from the neighbours after each half-update) and
      `AcousticWave` under `sciax.pde.Leapfrog` where it applies (its `ShardedHalo` pads the ghosts from
      the edge slabs, `pads_from_edges`).

    `y0` leaves must have the grid's shape; params leaves whose trailing axes are
    the grid's shape (e.g. a velocity model `c`) are split into the same blocks,
    others are replicated. The non-finite-state check (`throw=True`) is reduced
    over the blocks to one flag, so it gathers nothing. Run-time checks of traced inputs inside the
    blocks (`y0` finite, `AcousticWave`'s `c` and `rho` > 0, the CFL step) are reduced over the blocks
    too (`sciax._checks.agreed`), so every block raises the error together. Differentiable in `y0` and
    `params`, usable under `jax.jit` and `jax.vmap`.

    **Fields:** `model` (the unsharded model), `local` (see above), `mesh`,
    `names` (the mesh axis sharding each grid axis, or `None`), `halo_every`.
    """

    model: AbstractModel
    local: AbstractModel
    mesh: Mesh = eqx.field(static=True)
    names: tuple[str | None, ...] = eqx.field(static=True)
    halo_every: int = eqx.field(static=True)
    # On each block (`_solve_blocks`), or on the global arrays (`_solve_global`): the blocks fail it together.
    checks_traced_y0: ClassVar[bool] = True

    def __init__(self, model: AbstractModel, mesh: Mesh, axes: Sequence[str | None] | None = None, halo_every: int = 1):
        if isinstance(halo_every, bool) or not isinstance(halo_every, int) or halo_every < 1:
            raise ValueError(
                f"shard: halo_every must be an integer >= 1 (steps between halo exchanges), got {halo_every!r}"
            )
        self.halo_every = halo_every
        if isinstance(model, AbstractSemilinearPDE):
            if halo_every != 1:
                raise ValueError(
                    "shard: halo_every is for finite-difference models (halo exchange); a spectral "
                    "SemilinearPDE uses the distributed FFT and takes no halo"
                )
            grid = ShardedGrid(model.grid, mesh, axes)
            check_fft_decomposition(grid, "shard")
            self.model, self.local, self.mesh, self.names = model, model.on_grid(grid), mesh, grid.names
            return
        if isinstance(model, AbstractFVModel):
            self._shard_finite_volumes(model, mesh, axes)
            return
        if not isinstance(model, AbstractFDModel):
            raise TypeError(
                f"shard: expected a sciax.pde finite-difference model, finite-volume model or SemilinearPDE, "
                f"got {type(model).__name__}"
            )
        grid = model.grid
        if not isinstance(model.halo, BoundaryHalo):
            raise TypeError(
                f"shard: the model's halo must come from boundary conditions (a sciax.pde.BoundaryHalo), "
                f"got {type(model.halo).__name__}; build the model with bc=... and shard that"
            )
        sides = model.halo.sides
        # The widest halo a stencil of sciax.pde.fd asks for is `order` points (`diffusion`).
        names, sizes, local_grid = _local_block(
            grid, mesh, axes, model.order, f"the halo ({model.order} points at order {model.order})", "a lower order"
        )
        self.model = model
        self.local = replace_static(model, grid=local_grid, halo=ShardedHalo(local_grid, sides, names, sizes))
        self.mesh, self.names = mesh, names
        if halo_every > 1:
            # Fail at shard time if even the model's narrowest step (the fewest points read) needs a halo
            # wider than a shard; the halo of the method actually used is checked by `simulate`.
            reach = min(r for r in (m.step_reach(model) for m in (Leapfrog(1.0), RK4(1.0))) if r is not None)
            wide_axes(local_grid, sides, names, sizes, halo_every * reach, halo_every, reach)

    def _shard_finite_volumes(self, model: AbstractFVModel, mesh: Mesh, axes) -> None:
        """`local`: the model on one block, each field's halo a `ShardedHalo` (its own boundary
        conditions: a `Reflective` wall mirrors the normal momentum only), so that every stage of
        `SSPRK2`/`SSPRK3` exchanges `rhs_reach` cells and the CFL maxima are taken over all blocks."""
        if self.halo_every != 1:
            raise ValueError(
                f"shard: halo_every={self.halo_every} is for finite-difference models; a finite-volume model "
                "exchanges its halos at every stage of SSPRK2/SSPRK3 (halo_every=1)"
            )
        what = f"{type(model).__name__}'s halo ({model.rhs_reach} cells for {type(model.reconstruction).__name__})"
        names, sizes, local_grid = _local_block(model.grid, mesh, axes, model.rhs_reach, what, "a finer grid")
        halos = tuple(ShardedHalo(local_grid, halo.sides, names, sizes) for halo in model.halos)
        self.model, self.local = model, replace_static(model, grid=local_grid, halos=halos)
        self.mesh, self.names = mesh, names

    @property
    def finite_volume(self) -> bool:
        """Whether the model is a finite-volume model (`sciax.pde.fv`, stepped by `SSPRK2`/`SSPRK3`)."""
        return isinstance(self.model, AbstractFVModel)

    def wide_step(self, method: AbstractFixedStep) -> WideHaloStep:
        """`method` repeated `halo_every` times per halo exchange on blocks extended by `halo_every` times
        the reach of one of its steps; `ValueError` for a method whose reach is unknown or too wide."""
        k, model = self.halo_every, self.model
        reach = method.step_reach(model)
        if reach is None:
            raise ValueError(
                f"shard: halo_every={k} (wide halos) needs to know how far one step reads: it runs with "
                "sciax.pde.RK4 (any finite-difference model, from its rhs_reach) or sciax.pde.Leapfrog "
                f"(a wave model stating leapfrog_reach), got {type(method).__name__} for "
                f"{type(model).__name__}; use halo_every=1"
            )
        sides, block = model.halo.sides, self.local.grid
        axes = wide_axes(block, sides, self.names, shard_sizes(self.mesh, self.names), k * reach, k, reach)
        grid = extended_grid(block, axes)
        return WideHaloStep(method, replace_static(model, grid=grid, halo=WideBlockHalo(grid, sides, axes)), k, axes)

    @property
    def grid(self) -> Grid:
        """The global grid."""
        return self.model.grid

    def check_state(self, u, what: str = "the state") -> None:
        self.model.check_state(u, what)

    def check_params(self, params) -> None:
        if self.finite_volume:
            self.model.check_params(params)

    def labels(self) -> Labels:
        return self.model.labels()

    def default_method(self) -> AbstractMethod:
        return self.model.default_method()

    @property
    def spectral(self) -> bool:
        """Whether the model is spectral (distributed FFT) rather than finite-difference (halos)."""
        return isinstance(self.model, AbstractSemilinearPDE)

    def imex_split(self):
        return self.local.imex_split() if self.spectral else None

    def rhs(self, t, y, params):
        """The global right-hand side: block-wise under `jax.shard_map` (FD), or with the distributed FFT (spectral)."""
        if self.spectral:
            return self.local.rhs(t, y, params)
        self.check_state(y)
        arrays, static = split_params(params)
        specs = tree_specs(y, self.grid.shape, self.names)

        def block(t, y, arrays):
            return self.local.rhs(t, y, eqx.combine(arrays, static))

        run = jax.shard_map(
            block,
            mesh=self.mesh,
            in_specs=(PartitionSpec(), specs, tree_specs(arrays, self.grid.shape, self.names)),
            out_specs=specs,
            check_vma=False,
        )
        return run(jnp.asarray(t), y, arrays)

    def integrate(self, method, y0, ts, params, **options) -> Solution:
        if self.finite_volume:
            if not isinstance(method, AbstractSSPRK):
                raise TypeError(
                    f"shard: a sharded finite-volume model runs with sciax.pde.fv.SSPRK2 or SSPRK3, "
                    f"got {type(method).__name__}"
                )
            self.check_state(y0, "y0")
            # On the whole state, so that a bad cell is named with its global index (concrete values);
            # a traced state on each block (`_solve_blocks`), where the blocks fail the check together.
            if not isinstance(y0, jax.core.Tracer):
                y0 = self.model.check_admissible(y0, params)
            arrays, static = split_params(params)
            return _solve_blocks(self, method, y0, arrays, static, concrete_times(ts, "shard"), options)
        if self.spectral or not isinstance(method, AbstractFixedStep):
            if self.halo_every > 1:
                raise ValueError(
                    f"shard: halo_every={self.halo_every} (wide halos) needs a fixed-step method "
                    f"(sciax.pde.RK4 or sciax.pde.Leapfrog), got {type(method).__name__}; use halo_every=1"
                )
            return _solve_global(self, method, self.local if self.spectral else self, y0, ts, params, options)
        self.check_state(y0, "y0")
        # On the global model (each block alone sees only its own coefficients). A traced limit is
        # checked by every block at run time; where one block's coefficients fail it, all blocks raise.
        method.check_stable_step(self.model, params)
        arrays, static = split_params(params)
        times = concrete_times(ts, "shard")
        if self.halo_every == 1:
            return _solve_blocks(self, method, y0, arrays, static, times, options)
        k = self.halo_every
        step = self.wide_step(method)
        counts = step_counts(type(method).__name__, times.array(), method.dt)
        if any(c % k for c in counts):
            raise ValueError(
                f"shard: halo_every={k} needs every output interval to be a whole number of {k} steps "
                f"of dt={method.dt}, got intervals of {sorted(set(counts))} steps"
            )
        sol = _solve_blocks(self, step, y0, arrays, static, times, options)
        stats = dict(
            sol.stats,
            num_steps=sol.stats["num_steps"] * k,
            num_accepted_steps=sol.stats["num_accepted_steps"] * k,
            num_rhs_evals=sol.stats["num_rhs_evals"] * k * method.rhs_evals_per_step,
        )
        return eqx.tree_at(lambda s: s.stats, sol, stats)


def _solve_global(sharded: ShardedModel, method, model, y0, ts, params, options) -> Solution:
    """`method.solve` on global arrays; its non-finite check (`throw`) made on a reduced flag instead of
    on the whole state, which `equinox.error_if` would gather onto one device. The checks run inside a
    `jax.shard_map` (`_on_blocks`): in the global program a failed check stops device 0 alone (where its
    callback runs) while the others wait for it in the next collective."""
    throw = options.get("throw", True) is not False
    y0 = _on_blocks(sharded, lambda y: check_y0(y, throw=throw), y0)
    if "throw" not in method.options or not throw:
        return method.solve(model, y0, ts, params, **options)
    sol = method.solve(model, y0, ts, params, **{**options, "throw": False})
    message = (
        f"simulate: the sharded run under {type(method).__name__} failed (a non-finite state or a failed step); "
        "reduce dt or check the model and params"
    )
    # Tied to ys, so that the check runs whenever ys is used.
    ys = _on_blocks(
        sharded,
        lambda ys, ok: jax.tree_util.tree_map(lambda y: error_if_tied(y, ~ok, message), ys),
        sol.ys,
        sol.success,
    )
    return eqx.tree_at(lambda s: s.ys, sol, ys)


def _on_blocks(sharded: ShardedModel, fn, tree, *scalars):
    """`fn(tree, *scalars)` run on each block of the grid-shaped leaves of `tree` (`jax.shard_map`; the
    `scalars` replicated), returning blocks of the same layout."""
    specs = tree_specs(tree, sharded.grid.shape, sharded.names)
    run = jax.shard_map(
        fn, mesh=sharded.mesh, in_specs=(specs, *(PartitionSpec() for _ in scalars)), out_specs=specs, check_vma=False
    )
    return run(tree, *scalars)


@eqx.filter_jit
def _solve_blocks(sharded: ShardedModel, method, y0, arrays, static, times, options):
    ts, grid, names = times.array(), sharded.grid, sharded.names
    used = tuple(a for a in names if a is not None)

    def block(y0, arrays):
        params = eqx.combine(arrays, static)
        # Traced inputs checked on each block (every block fails a check together: `agreed`).
        y0 = check_y0(y0, throw=options.get("throw", True) is not False)
        if sharded.finite_volume:
            y0 = sharded.local.check_admissible(y0, params)
        sol = method.solve(sharded.local, y0, ts, params, **options)
        ok = lax.pmin(sol.success.astype(jnp.int32), used) > 0 if used else sol.success
        return eqx.tree_at(lambda s: s.success, sol, ok)

    in_specs = (tree_specs(y0, grid.shape, names), tree_specs(arrays, grid.shape, names))
    # Trace once with replicated outputs to learn which outputs are block fields.
    probe = jax.eval_shape(
        jax.shard_map(block, mesh=sharded.mesh, in_specs=in_specs, out_specs=PartitionSpec(), check_vma=False),
        y0,
        arrays,
    )
    out_specs = jax.tree_util.tree_map(lambda s: field_spec(s.shape, sharded.local.grid.shape, names), probe)
    return jax.shard_map(block, mesh=sharded.mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)(y0, arrays)


def _local_block(grid: Grid, mesh: Mesh, axes, width: int, what: str, remedy: str):
    """The mesh axis names and device counts per grid axis, and the grid of one block, after a
    `ValueError` if a block is narrower than the `width`-point halo that `what` needs."""
    names = resolve_axes(grid, mesh, axes, "shard")
    sizes = shard_sizes(mesh, names)
    block = tuple(n // s for n, s in zip(grid.shape, sizes))
    for axis, name in enumerate(names):
        if name is not None and block[axis] < width:
            raise ValueError(
                f"shard: {what} is wider than a shard: grid axis {grid.dims[axis]!r} has {grid.shape[axis]} "
                f"points over {sizes[axis]} devices ({block[axis]} each); use fewer devices along it, a finer "
                f"grid or {remedy}"
            )
    local_grid = Grid(block, tuple(h * b for h, b in zip(grid.spacing, block)), grid.origin, points=grid.points)
    return names, sizes, local_grid
