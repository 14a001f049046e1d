"""`Leapfrog`: explicit second-order time stepping for second-order-in-time (wave) models, and
`AbstractWaveModel`, the physics it asks a wave model for."""

from __future__ import annotations

import abc
import functools
import os
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree

from ..._step_counts import check_checkpoint, check_dt
from ...grid import BoundaryHalo, Grid, fits, inner, split_evaluate
from .._fixed_step import AbstractFixedStep
from ..fd._model import AbstractFDModel


class WaveCoefficients(NamedTuple):
    """What a wave model computes once per solve for steps of `dt`: `operator`, the grid-shaped
    arrays `acceleration` reads (material parameters, layer coefficients), and `source`, whatever
    `add_source` needs."""

    operator: PyTree[Array]
    source: Any


class AbstractWaveModel(AbstractFDModel):
    """An FD model of a second-order-in-time equation `p_tt = F(t, p) = K(p) + S(t)`, steppable by
    `Leapfrog`: a spatial operator `K` (`acceleration`, which may carry memory variables, e.g. of
    absorbing layers) and sources `S` (`add_source`).

    The state users give and get is first order (e.g. `{"p": p, "v": p_t}`), so
    `rhs` also drives any `sciax.ode` method; `Leapfrog` carries its own state
    (the field at two times and the model's memory).
    """

    @abc.abstractmethod
    def wave_coefficients(self, params: PyTree, dt: float) -> WaveCoefficients:
        """The coefficients of steps of `dt`, computed once per solve from `params`."""

    @abc.abstractmethod
    def acceleration(
        self, t: Array, p: Array, memory: PyTree, operator: PyTree, grid: Grid | None = None
    ) -> tuple[Array, PyTree]:
        """`(K(p), new memory)` on `grid` (default the model's; `Leapfrog`'s one-pass route passes
        folded blocks); `memory=None`: without memory terms (the plain operator)."""

    # Whether `acceleration_interior` is given (`Leapfrog`'s one-pass route on XLA:CPU).
    has_interior: ClassVar[bool] = False

    def acceleration_interior(self, p: Array, memory: PyTree, operator: PyTree) -> tuple[Array, PyTree]:
        """`acceleration` on the points `R .. n - R - 1` of every axis (`R = leapfrog_reach`), from
        shifted slices only (no halo), the memory likewise; models that give it set `has_interior`."""
        raise NotImplementedError(f"{type(self).__name__} has no slice-only form of its acceleration")

    # Whether the model gives the padded-state step below (`Leapfrog` on XLA:CPU).
    has_padded_step: ClassVar[bool] = False

    def padded_step_applies(self) -> bool:
        """Whether the padded-state step applies (e.g. at this order, with these boundary conditions)."""
        return False

    def to_padded(self, p: Array, t: Array) -> Array:
        """`p` in the padded-state layout: ghost points around the grid, filled for time `t`."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")

    def from_padded(self, p: Array) -> Array:
        """`p` back from the padded layout."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")

    def padded_update(self, t, p, p_prev, out, operator, source, dt: float, start: bool = False) -> Array:
        """`2p - p_prev + dt^2 (K(p) + S(t))` in the padded layout, its ghosts filled for `t + dt`,
        written over `out` (same layout, e.g. `p_prev`: read only at the points written) or into a new buffer
        if `out` is `None`. `start=True`: the Taylor start `p - dt v + dt^2 K(p) / 2` instead (`p_prev` holds
        `v`, grid-shaped; `leapfrog_weights`), its ghosts filled for `t - dt`, without sources."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")

    def add_source(self, field: Array, t: Array, source: Any, scale: float) -> Array:
        """`field + scale S(t)` (default: no sources)."""
        return field

    def initial_memory(self, p0: Array, operator: PyTree) -> PyTree:
        """The memory variables at the start (default `None`: none)."""
        return None

    @abc.abstractmethod
    def position_velocity(self, y: PyTree[Array]) -> tuple[Array, Array]:
        """`(p, p_t)` from a first-order state."""

    @abc.abstractmethod
    def wave_outputs(self, p: Array, v: Array, save) -> dict[str, Array]:
        """The outputs named in `save` (or the model's defaults if `None`) from `p` and `p_t`."""

    @abc.abstractmethod
    def leapfrog_stable_dt(self, params: PyTree) -> Array:
        """The largest stable leapfrog step, `2 / omega_max`."""

    @property
    def leapfrog_reach(self) -> int:
        """How far one leapfrog step (one `acceleration`) reads along any axis (points): by default
        `rhs_reach`. Sets the halo width of `sciax.parallel.shard(..., halo_every=k)` (`k * leapfrog_reach`)."""
        return self.rhs_reach


class LeapfrogState(NamedTuple):
    """The leapfrog carry: the field now and one step before, the model's memory variables, and inside
    a time loop on the one-pass route (`Leapfrog.loop_state`) a spare buffer the next field is written into."""

    p: Array
    p_prev: Array
    memory: PyTree
    spare: Array | None = None


class _Fields(NamedTuple):
    """The inputs of one update, passed whole to `split_evaluate` (which folds their grid-shaped arrays)."""

    t: Array
    p: Array
    p_prev: Array
    operator: PyTree
    memory: PyTree


class Leapfrog(AbstractFixedStep):
    """The leapfrog (central-difference, Störmer–Verlet) scheme `p+ = 2p - p- + dt^2 F(t, p)` for an
    `AbstractWaveModel`, with fixed step `dt` over `lax.scan`.

    Second order, symplectic (no energy drift), one evaluation of `F` per step,
    started by the Taylor step `p- = p0 - dt v0 + dt^2 K(p0) / 2`.
    Raises `ValueError` (or at run time, under jit) stating the largest stable
    dt when `dt > 2 / omega_max`. `save` names the outputs kept at every `ts`
    (see the model, e.g. `AcousticWave`: `"p"`, `"v"`, `"seismogram"`); keeping
    only seismograms makes long runs and their gradients cheap in memory.

    On XLA:CPU, for a model with `acceleration_interior` and a halo that folds (and no memory
    variables), each step is one pass over memory (`sciax.grid.split_evaluate`: interior from
    shifted slices, edge strips from folded blocks), the same values as the halo-padded step. On
    XLA:GPU that route is taken from order 6 on grids of 2^20 points or more, where the fused padded
    step recomputes its face fluxes (`_split_pays`). Memory variables (CPML) made the
    split step, and full-waveform-inversion gradients, slower than the padded one when measured.
    Inside each compiled time loop that route writes each new field in place, so no field is copied
    between steps: over the field two steps back on a whole grid with jax >= 0.12 (two buffers), else
    over a third buffer the loop carries (`loop_state`); except from order 6 on grids of 2^21 points
    or more on several CPU cores, where a new buffer per step lets XLA:CPU split the step over the
    cores (`_in_place_pays`; the blocks of a sharded grid share the cores, one device each). The start
    (the Taylor step) takes the same one-pass route. A model may instead give a padded-state step
    (`AcousticWave` from order 4 where the one-pass step's edge slabs are many of the points, e.g. in
    3-D, or at order 4 on grids in cache): the time loop then carries the field with its ghost points,
    each step (and the start) reads shifted slices only, writes the new field over the one two steps
    back where in place pays, and refills the ghosts from the points next to the edges (none to refill
    along an axis of `ZeroPadding` sides); the outputs are cut out at the save times. On x86 CPUs
    without AVX-512, large grids (2^21 points or more; 3-D, or 2-D from order 6) compute each step's new
    interior into a buffer of its own and copy it into place (`_apart_interior_pays`).
    At order 8 on large CPU grids the run is compiled for 512-bit vectors (`compiler_options`; pass
    `sciax.compiler_options(model, method)` to your own `jax.jit` around `simulate`).

    **Arguments:** `dt` (time units); `checkpoint` (steps per recomputed block
    in reverse mode, default 64: memory `~ (steps/64 + 64)` states).
    """

    dt: float = eqx.field(static=True)
    checkpoint: int | None = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 1
    scan_unroll: ClassVar[int] = 2  # (p, p_prev) -> (p_next, p): two steps per loop iteration keep both in place

    def __init__(self, dt: float, *, checkpoint: int | None = 64):
        self.dt, self.checkpoint = check_dt("Leapfrog", dt), check_checkpoint("Leapfrog", checkpoint)

    def check_model(self, model) -> None:
        if not isinstance(model, AbstractWaveModel):
            raise TypeError(
                f"simulate: Leapfrog steps second-order-in-time wave models (sciax.pde.AcousticWave), got "
                f"{type(model).__name__}; use sciax.pde.RK4(dt) or a sciax.ode method for it"
            )

    def stable_dt(self, model, params):
        return model.leapfrog_stable_dt(params)

    def compiler_options(self, model) -> dict[str, Any]:
        if isinstance(model, AbstractWaveModel) and _wide_vectors_pay(
            jax.default_backend(), model.leapfrog_reach, model.grid.size
        ):
            return {"xla_cpu_prefer_vector_width": 512}
        return {}

    def step_reach(self, model):
        return model.leapfrog_reach if isinstance(model, AbstractWaveModel) else None

    def prepare(self, model, params) -> WaveCoefficients:
        return model.wave_coefficients(params, self.dt)

    def init(self, model, y0, coefficients: WaveCoefficients) -> LeapfrogState:
        p0, v0 = model.position_velocity(y0)
        memory = model.initial_memory(p0, coefficients.operator)
        # Taylor start, second order in dt: p- = p0 - dt v0 + dt^2 K(p0) / 2 (`p_prev` holds v0 here).
        fields, reach = _Fields(jnp.zeros(()), p0, v0, coefficients.operator, None), model.leapfrog_reach
        taylor = lambda f, grid=None: self._update(model, f, grid, start=True)[0]  # noqa: E731
        if self._one_pass(model, memory, reach):  # one pass over memory, as the steps (no padded copies)
            interior = lambda f: self._update_interior(model, f, reach, start=True)[0]  # noqa: E731
            return LeapfrogState(p0, split_evaluate(taylor, interior, fields, model.grid, reach), memory)
        return LeapfrogState(p0, taylor(fields), memory)

    def start(self, model, y0, t0, coefficients: WaveCoefficients) -> LeapfrogState:
        p0, v0 = model.position_velocity(y0)
        memory = model.initial_memory(p0, coefficients.operator)
        if not _padded(model, memory):
            return self.init(model, y0, coefficients)
        # The Taylor start as a padded update too, rather than the one-pass start (the halo-padded operator on
        # slabs 2 (order - 1) thick) and a padded copy of its result. A one-step run at 200^3 order 8 (float32,
        # one core): 0.435 -> 0.383 s on jax 0.12.0.1, 0.435 -> 0.390 s on 0.10.2; both cores 0.250 -> 0.213 s.
        p = model.to_padded(p0, t0)
        p_prev = model.padded_update(t0, p, v0, None, coefficients.operator, None, self.dt, start=True)
        return LeapfrogState(p, p_prev, memory)

    def step(self, model, state: LeapfrogState, t, coefficients: WaveCoefficients) -> LeapfrogState:
        if state.p.shape != model.grid.shape:  # the padded state (`start`)
            operator, source = coefficients
            # Over the field two steps back, which the step reads only at the points it writes (two buffers in the
            # loop carry, updated in place), else into a new buffer that XLA:CPU may split over its threads. With
            # a third buffer instead, XLA:CPU copied both carried fields in and out of each time loop (jax 0.12):
            # 200^3 order 8, 100 steps, one core, 4.97-5.03 -> 4.66-4.67 s; 30 steps in 3 intervals 2.20 -> 1.95 s.
            out = state.p_prev if _in_place(model) else None
            p_next = model.padded_update(t, state.p, state.p_prev, out, operator, source, self.dt)
            return LeapfrogState(p_next, state.p, state.memory, None if state.spare is None else state.p_prev)
        fields = _Fields(t, state.p, state.p_prev, coefficients.operator, state.memory)
        reach = model.leapfrog_reach
        update = lambda f, grid=None: self._update(model, f, grid)  # noqa: E731
        if self._one_pass(model, state.memory, reach):
            # One pass over memory per step: interior from shifted slices, edge strips from folded blocks,
            # written over the spare buffer where in place pays.
            interior = lambda f: self._update_interior(model, f, reach)  # noqa: E731
            out = (state.spare, state.memory) if state.spare is not None and _in_place(model) else None
            overwrite = _over_prev if out is None and _overwrites_prev(model) else None
            if (out is not None or overwrite is not None) and _apart_interior(model):
                interior = lambda f: jax.lax.optimization_barrier(self._update_interior(model, f, reach))  # noqa: E731
            p_next, memory = split_evaluate(update, interior, fields, model.grid, reach, out, overwrite)
        else:
            p_next, memory = update(fields)
        p_next = model.add_source(p_next, t, coefficients.source, self.dt**2)
        return LeapfrogState(p_next, state.p, memory, None if state.spare is None else state.p_prev)

    def loop_state(self, model, carry: LeapfrogState) -> tuple[LeapfrogState, int]:
        reach = model.leapfrog_reach
        padded = carry.p.shape != model.grid.shape
        if (padded and _in_place(model)) or _overwrites_prev(model):  # two buffers (`step`)
            return carry, self.scan_unroll
        if carry.spare is None and (_BARRIERS_HOLD if padded else self._one_pass(model, carry.memory, reach)):
            # A third buffer, and three steps bring the buffers back to their places, so the loop carry is
            # updated in place. In place, each step writes the new field over it (the field two steps back,
            # which no step reads any more); with two buffers the new field shares a buffer with one the step
            # still reads at its edges, and XLA:CPU copies a whole field per step. Out of place, the new
            # field's buffer (one XLA:CPU may split the step over) takes the spare's place; with two buffers
            # XLA:CPU copied each new field into the loop carry (both cores, 100 steps, jax 0.12.0.1 / 0.10.2:
            # 2000^2 order 8 0.83-0.87 -> 0.72 s / 0.85 -> 0.73 s, order 6 0.82 -> 0.69 s / 0.80 -> 0.71 s; 200^3
            # order 8, the padded-state step, 2.94-3.28 -> 2.75-2.86 s on jax 0.12 but 3.24-3.29 -> 3.32-3.46 s
            # on 0.10.2, whose XLA copies the padded field per step regardless: there two buffers).
            return carry._replace(spare=jnp.zeros_like(carry.p)), 3
        return carry, self.scan_unroll

    def loop_result(self, model, carry: LeapfrogState) -> LeapfrogState:
        return carry._replace(spare=None)

    def observe(self, model, state: LeapfrogState, coefficients, save):
        p, p_prev = state.p, state.p_prev
        if p.shape != model.grid.shape:
            p, p_prev = model.from_padded(p), model.from_padded(p_prev)
        return model.wave_outputs(p, (p - p_prev) / self.dt, save)

    def _update(self, model, f: _Fields, grid=None, start: bool = False):
        """`(p_next, memory)` without sources: `2p - p_prev + dt^2 K(p)`, or with `start` the Taylor start
        (`leapfrog_weights`; `f.p_prev` holds `v0`, `f.memory` is `None`)."""
        a, b, c = leapfrog_weights(self.dt, start)
        k, memory = model.acceleration(f.t, f.p, f.memory, f.operator, grid)
        return a * f.p - b * f.p_prev + c * k, memory

    def _update_interior(self, model, f: _Fields, reach: int, start: bool = False):
        """`_update` on the points `R .. n - R - 1` of every axis (`R = reach`), without halos."""
        a, b, c = leapfrog_weights(self.dt, start)
        k, memory = model.acceleration_interior(f.p, f.memory, f.operator)
        return a * inner(f.p, reach) - b * inner(f.p_prev, reach) + c * k, memory

    def _one_pass(self, model, memory, reach: int) -> bool:
        return (
            _split_pays(jax.default_backend(), reach, model.grid.size)
            and model.halo.foldable
            and fits(model.grid, reach)
            and not jax.tree_util.tree_leaves(memory)
            and model.has_interior
        )


def leapfrog_weights(dt: float, start: bool = False) -> tuple[float, float, float]:
    """`(a, b, c)` of a leapfrog update `a p - b q + c K(p)`: a step `2p - p_prev + dt^2 K(p)` (`q = p_prev`),
    or with `start` the Taylor start `p0 - dt v0 + dt^2 K(p0) / 2` (`q = v0`)."""
    return (1.0, dt, 0.5 * dt**2) if start else (2.0, 1.0, dt**2)


def _over_prev(fields: _Fields):
    return fields.p_prev, None  # the one-pass step runs without memory variables


def _overwrites_prev(model) -> bool:
    """Whether the one-pass step writes the new field over the one two steps back, which it reads only at the
    point it writes (two buffers in the loop carry instead of three; a spare buffer streamed per step fewer).
    Only where the in-place step pays (`_in_place_pays`), on a whole grid (a sharded halo's exchanges would
    have to finish before the interior), and where XLA:CPU honours the optimization barrier that puts the
    edge strips' reads before the write: jax >= 0.12 (jax 0.10.2 copied the whole field per step regardless).
    Measured on jax 0.12.0.1, one core, float32, against the spare buffer: 2000^2 x 100 order 2 0.57 -> 0.49 s,
    order 4 0.80 -> 0.72 s, order 8 1.41 -> 1.36 s; 300^2 x 1,000 order 2 0.050 -> 0.044 s; both cores on one
    device alike (2000^2 order 2 0.55 -> 0.47 s); sharded over two devices, order 4 ran 2.4x slower."""
    return jax.default_backend() == "cpu" and _BARRIERS_HOLD and type(model.halo) is BoundaryHalo and _in_place(model)


# Measured on the two stacks CI runs: jax 0.12.0.1 keeps the write in place, 0.10.2 copies (see `_overwrites_prev`).
_BARRIERS_HOLD = jax.__version_info__ >= (0, 12)


def _padded(model, memory) -> bool:
    """Whether `Leapfrog`'s time loop (`start`) carries the model's padded state: on XLA:CPU, without memory
    variables (CPML), where the model gives that step. There the one-pass step's edge strips, the halo-padded
    operator on folded slabs `2 (order - 1)` points thick, cost more than the interior at order 8 (200^3:
    1.2 s of 2.15 s for 20 steps on one core)."""
    return (
        jax.default_backend() == "cpu"
        and model.has_padded_step
        and model.padded_step_applies()
        and not jax.tree_util.tree_leaves(memory)
    )


def _in_place(model) -> bool:
    """`_in_place_pays` for `model`'s grid (or block) and the cores each of its blocks may use (`_block_threads`)."""
    return _in_place_pays(jax.default_backend(), model.leapfrog_reach, model.grid.size, _block_threads(model))


def _split_pays(backend: str, reach: int, points: int) -> bool:
    """Whether the one-pass (split) step beats the halo-padded one: always on XLA:CPU. On XLA:GPU the padded
    step fuses into one kernel that recomputes the face flux at each offset of the outer stencil. Measured
    on an H100 (float32, 100 steps): split, 2000² order 8 ran 3.3x faster (42 -> 12.7 ms), order 6 1.8x
    (20.2 -> 11.2 ms), 200³ order 8 3.2x (140 -> 44 ms); but 2000² orders 2 and 4 ran 1.4x and 1.1x slower
    and 300² order 8 2x slower (launch-bound). The size threshold lies between the measured sizes."""
    if backend == "cpu":
        return True
    return reach >= 5 and points >= 2**20


def _in_place_pays(backend: str, reach: int, points: int, threads: int) -> bool:
    """Whether the one-pass step should write over a carried spare buffer (in place) rather than place its
    interior by `lax.pad` into a new buffer. XLA:CPU never splits a fusion that may be an in-place
    dynamic-update-slice over threads (`ParallelTaskAssignment`), so on several cores the in-place step
    runs on one. Measured on 2 cores (float32, 100 steps, best of 3, each variant in its own process, on
    jax 0.10.2 and 0.12.0.1): out of place, 2000² order 8 ran 1.3x faster on both (2.18 -> 1.67 s,
    2.06 -> 1.55 s), order 6 1.2-1.4x (1.51 -> 1.28 s, 1.67 -> 1.22 s) and 200³ order 8 1.2-1.3x
    (8.7 -> 7.5 s, 10.5 -> 8.1 s); 2000² order 4 ran 1.3x slower on both and order 2 gained on 0.10.2
    only; 1000² and 700² order 8 were even, 300² slower at every order. On one core (`taskset`) the
    in-place step was as fast or faster (2000² order 8: 2.01 against 2.30 s on 0.10.2). Inside the time
    loop, jax 0.12.0.1's XLA:CPU split the out-of-place steps of orders 6 and 8 over both cores (1.8 cores
    used) but not those of orders 2 and 4 (1.0-1.1, 2x slower than in place), nor any loop of one or two
    fusions (`benchmarks/xla_cpu_threads.py`), which jax 0.10.2 and kernels outside a loop split. `threads`
    are those of one block of a sharded grid (`_block_threads`): sharded over 2 CPU devices on 2 cores, in
    place ran faster (jax 0.12.0.1, 100 steps): 3000^2 order 8 2.09 -> 1.76-1.81 s, 200^3 order 8 (the
    padded-state step, 60 steps) 2.09-2.22 -> 1.86-1.89 s. Without AVX-512 (`_masked_loads_emulated`), where
    the in-place step computes its interior apart (`_apart_interior_pays`), XLA:CPU splits that interior pass
    over the cores and in place is faster everywhere; measured on an AMD EPYC (AVX2, 2 cores, jax 0.12.0.1,
    20 steps), new buffer against in place: 2000^2 order 8 0.64 against 0.31 s, order 6 0.56 against 0.31 s,
    200^3 order 8 2.20 against 1.26 s."""
    if backend != "cpu" or threads < 2:
        return True
    return reach < 5 or points < 2**21 or _masked_loads_emulated()


def _apart_interior(model) -> bool:
    """`_apart_interior_pays` for `model`'s grid (or block)."""
    return _apart_interior_pays(jax.default_backend(), model.grid.ndim, model.leapfrog_reach, model.grid.size)


def _apart_interior_pays(backend: str, ndim: int, reach: int, points: int) -> bool:
    """Whether an in-place step computes its new interior into a buffer of its own (an optimization barrier)
    and then copies it into place, rather than one fused in-place write: on XLA:CPU without AVX-512
    (`_masked_loads_emulated`), on grids of 2^21 points or more, in 3-D and from order 6 in 2-D. jax 0.12's
    XLA:CPU writes such a fusion as a loop over whole rows of the destination whose every read is a masked
    load, which AVX2 emulates (`vmaskmovps`); its separate interior pass has plain loads. Measured on an AMD
    EPYC (Zen, AVX2, one core, float32, best of 3), fused against apart: 2000^2 x 20 order 8 1.22 against
    0.50 s, order 6 1.03 against 0.45 s; 200^3 x 20 order 8 4.23 against 2.12 s, 200^3 x 10 order 4 1.53
    against 0.98 s, order 2 1.09 against 0.47 s; but 2000^2 x 100 order 2 0.77 against 1.04 s, 2000^2 x 40
    order 4 0.63 against 0.74 s, 1400^2 x 40 order 8 0.42 against 0.47 s, 600^2 x 200 order 8 0.31 against
    0.40 s, 100^3 x 40 order 8 0.49 against 0.51 s. With AVX-512 the fused write is kept: measured there
    (sessions 17-47), it ran at Devito's speed per step."""
    big = points >= 2**21 and (ndim >= 3 or reach >= 5)
    return backend == "cpu" and big and _masked_loads_emulated()


@functools.cache
def _masked_loads_emulated(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this machine is x86-64 with AVX2 but not AVX-512 (read from Linux's `cpuinfo`; `False` where
    that cannot be read, e.g. on other systems)."""
    try:
        with open(cpuinfo) as info:
            flags = next((line.split() for line in info if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx2" in flags and "avx512f" not in flags


def _wide_vectors_pay(backend: str, reach: int, points: int) -> bool:
    """Whether to ask XLA:CPU for 512-bit vectors (`xla_cpu_prefer_vector_width`, default 256; a preference that
    LLVM can follow only on CPUs with AVX-512): at order 8 (`reach` 7) on grids of 2^21 points or more.
    Measured (float32, 100 steps, best of 5, jax 0.12.0.1 unless stated), 256 against 512 bits: 2000^2 order 8
    one core 1.13-1.22 against 1.00-1.13 s (jax 0.10.2: 1.31 against 1.22 s), both cores 0.80 against 0.72 s;
    200^3 order 8 one core 5.25 against 5.15 s, both cores 3.23 against 3.05 s. Even: order 8 at 1000^2 x 300
    (0.56-0.57 s) and 600^2 x 500 (0.35-0.36 s), order 6 and 4 at 2000^2 (1.08 s, 0.65-0.68 s), order 2
    (0.35-0.36 s); 300^2 x 1,000 order 8 one core 6 % slower (0.151 against 0.160 s)."""
    return backend == "cpu" and reach >= 7 and points >= 2**21


def _block_threads(model) -> int:
    """The cores each block of `model`'s grid may use: this process's (`_cpu_threads`) shared by the blocks of a
    sharded grid, one CPU device each, which all run at once."""
    return max(1, _cpu_threads() // model.halo.blocks)


def _cpu_threads() -> int:
    """The cores this process may run on: the size of XLA:CPU's intra-op thread pool."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
