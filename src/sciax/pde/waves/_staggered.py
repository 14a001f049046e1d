"""`StaggeredLeapfrog`: the staggered-in-time leapfrog of first-order (velocity–stress) wave systems,
and `AbstractStaggeredModel`, the physics it asks a model for."""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree

from ..._step_counts import check_checkpoint, check_dt
from .._fixed_step import AbstractFixedStep
from ..fd._model import AbstractFDModel


class StaggeredState(NamedTuple):
    """The carry: the velocity half a step behind the stress, the stress, the absorbing layers' memory,
    and inside a time loop on the padded-state route a spare `(velocity, stress)` the next step is
    written into (`StaggeredLeapfrog.loop_state`)."""

    velocity: PyTree[Array]
    stress: PyTree[Array]
    memory: PyTree[Array]
    spare: PyTree[Array] | None = None


class AbstractStaggeredModel(AbstractFDModel):
    """A first-order wave system `v_t = B(sigma) + f(t)`, `sigma_t = C(v) + s(t)` whose velocity and
    stress live at alternate half steps, steppable by `StaggeredLeapfrog`.

    Its state is a dict of grid-shaped fields; `split` separates velocity from stress.
    The updates carry the absorbing layers' memory variables.
    """

    @abc.abstractmethod
    def staggered_coefficients(self, params: PyTree, dt: float) -> tuple[PyTree, Any]:
        """`(operator, source)`: what the updates read, computed once per solve for steps of `dt`."""

    @abc.abstractmethod
    def split(self, y: dict) -> tuple[PyTree[Array], PyTree[Array]]:
        """`(velocity, stress)` from a state."""

    @abc.abstractmethod
    def initial_memory(self, velocity: PyTree, operator: PyTree) -> PyTree:
        """The memory variables at the start."""

    @abc.abstractmethod
    def velocity_rate(self, t, stress, memory, operator) -> tuple[PyTree[Array], PyTree]:
        """`(B(sigma), memory)` without sources; `memory=None` without the layers' memory terms."""

    @abc.abstractmethod
    def stress_rate(self, t, velocity, memory, operator) -> tuple[PyTree[Array], PyTree]:
        """`(C(v), memory)` without sources; `memory=None` without the layers' memory terms."""

    @abc.abstractmethod
    def add_sources(self, velocity, stress, t, source, dt: float, which: str):
        """`(velocity, stress)` plus `dt` times the sources of the `which` ("velocity" or "stress")
        update, centred at `t`."""

    @abc.abstractmethod
    def staggered_outputs(self, velocity, stress, save) -> dict[str, Array]:
        """The outputs named in `save` (or the model's defaults) from the carried fields."""

    @abc.abstractmethod
    def staggered_stable_dt(self, params: PyTree) -> Array:
        """The largest stable step, `2 / omega_max`."""

    # Whether the model gives the padded-state step below (`StaggeredLeapfrog` on XLA:CPU).
    has_padded_step: ClassVar[bool] = False

    def padded_step_applies(self) -> bool:
        """Whether the padded-state step applies (e.g. with these boundary conditions)."""
        return False

    def to_padded(self, velocity, stress, memory) -> tuple[PyTree[Array], PyTree[Array], PyTree[Array]]:
        """`(velocity, stress, memory)` in the padded-state layout: ghost points around every field, so
        each update reads shifted slices of its inputs and writes its interior into a spare buffer."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")

    def from_padded(self, velocity, stress) -> tuple[PyTree[Array], PyTree[Array]]:
        """`(velocity, stress)` back from the padded layout."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")

    def padded_velocity_update(self, t, velocity, stress, memory, out, operator, source, dt: float):
        """`(v + dt [B(sigma) + f(t)], memory)` in the padded layout, written over `out` (same layout,
        values unused)."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")

    def padded_stress_update(self, t, velocity, stress, memory, out, operator, source, dt: float):
        """`(sigma + dt [C(v) + s(t)], memory)` in the padded layout, written over `out`; `velocity` is the
        new one."""
        raise NotImplementedError(f"{type(self).__name__} has no padded-state step")


class StaggeredLeapfrog(AbstractFixedStep):
    """The staggered leapfrog of velocity–stress wave systems (Virieux 1986; Madariaga 1976):

        v(t + dt/2) = v(t - dt/2) + dt [B(sigma(t)) + f(t)]
        sigma(t + dt) = sigma(t) + dt [C(v(t + dt/2)) + s(t + dt/2)]

    Second order in `dt`, explicit, no energy drift, two half-updates per step, for an
    `AbstractStaggeredModel` (`sciax.pde.ElasticWave`). It starts from `v(t0 - dt/2) =
    v0 - dt/2 B(sigma0)` (second order). The carried velocity is half a step behind the stress:
    outputs at `t` hold `sigma(t)` and `v(t - dt/2)`.

    Raises `ValueError` (or at run time, under jit) stating the largest stable dt when
    `dt > 2 / omega_max`.

    On XLA:CPU, for a model with a padded-state step (`ElasticWave` with `Dirichlet(0)` edges, and
    with CPML layers on jax 0.12 or newer), the fields are carried with their ghost points: each
    half-update is one pass over memory that reads shifted slices and writes its interior over a
    spare buffer (the fields of the step before), instead of padding a copy of each field per
    difference. Same values, up to XLA's choice of fused multiply-adds. On a block of a sharded grid
    (`sciax.parallel.shard`) the ghosts across its inner sides are refreshed from the neighbouring
    blocks after each half-update.

    **Arguments:** `dt` (time units); `checkpoint` (steps per recomputed block in reverse mode,
    default 64).

    Reference: J. Virieux, "P-SV wave propagation in heterogeneous media: velocity-stress
    finite-difference method", Geophysics 51 (1986) 889-901.
    """

    dt: float = eqx.field(static=True)
    checkpoint: int | None = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 1

    def __init__(self, dt: float, *, checkpoint: int | None = 64):
        name = "StaggeredLeapfrog"
        self.dt, self.checkpoint = check_dt(name, dt), check_checkpoint(name, checkpoint)

    def check_model(self, model) -> None:
        if not isinstance(model, AbstractStaggeredModel):
            raise TypeError(
                "simulate: StaggeredLeapfrog steps velocity-stress wave models (sciax.pde.ElasticWave), got "
                f"{type(model).__name__}; use sciax.pde.Leapfrog for sciax.pde.AcousticWave"
            )

    def stable_dt(self, model, params):
        return model.staggered_stable_dt(params)

    def prepare(self, model, params):
        return model.staggered_coefficients(params, self.dt)

    def init(self, model, y0, coefficients) -> StaggeredState:
        operator, _ = coefficients
        velocity, stress = model.split(y0)
        rate, _ = model.velocity_rate(0.0, stress, None, operator)
        behind = {k: velocity[k] - 0.5 * self.dt * rate[k] for k in velocity}
        memory = model.initial_memory(velocity, operator)
        if _padded(model):
            behind, stress, memory = model.to_padded(behind, stress, memory)
        return StaggeredState(behind, stress, memory)

    def step(self, model, state: StaggeredState, t, coefficients) -> StaggeredState:
        operator, source = coefficients
        if _padded(model):
            return self._padded_step(model, state, t, operator, source)
        dt = self.dt
        rate, memory = model.velocity_rate(t, state.stress, state.memory, operator)
        velocity = {k: state.velocity[k] + dt * rate[k] for k in state.velocity}
        velocity, _ = model.add_sources(velocity, state.stress, t, source, dt, "velocity")
        rate, memory = model.stress_rate(t, velocity, memory, operator)
        stress = {k: state.stress[k] + dt * rate[k] for k in state.stress}
        _, stress = model.add_sources(velocity, stress, t + 0.5 * dt, source, dt, "stress")
        return StaggeredState(velocity, stress, memory)

    def _padded_step(self, model, state: StaggeredState, t, operator, source) -> StaggeredState:
        dt = self.dt
        if state.spare is None:  # outside `loop_state` (masked steps): fresh buffers
            out_v, out_s = jax.tree_util.tree_map(jnp.zeros_like, (state.velocity, state.stress))
        else:
            out_v, out_s = state.spare
        v, s = state.velocity, state.stress
        velocity, memory = model.padded_velocity_update(t, v, s, state.memory, out_v, operator, source, dt)
        stress, memory = model.padded_stress_update(t + 0.5 * dt, velocity, s, memory, out_s, operator, source, dt)
        return StaggeredState(velocity, stress, memory, None if state.spare is None else (v, s))

    def loop_state(self, model, carry: StaggeredState) -> tuple[StaggeredState, int]:
        if carry.spare is None and _padded(model):
            # Each step writes over the fields of the step before (which no step reads any more), and
            # two steps bring the buffers back to their places: the loop carry is updated in place.
            return carry._replace(spare=jax.tree_util.tree_map(jnp.zeros_like, (carry.velocity, carry.stress))), 2
        return carry, self.scan_unroll

    def loop_result(self, model, carry: StaggeredState) -> StaggeredState:
        return carry._replace(spare=None)

    def observe(self, model, state: StaggeredState, coefficients, save):
        velocity, stress = state.velocity, state.stress
        if _padded(model):
            velocity, stress = model.from_padded(velocity, stress)
        return model.staggered_outputs(velocity, stress, save)


def _padded(model) -> bool:
    """Whether `StaggeredLeapfrog` carries the model's padded state. On XLA:CPU only: there padding a copy
    of each field per difference cost a write and a read of the field each (`ElasticWave`, `Dirichlet(0)`,
    float32, 2 cores, 500 steps at 1000^2: order 8 3.41 -> 1.87 s on jax 0.10.2, 6.18 -> 1.94 s on jax 0.12;
    order 2 1.62 -> 1.59 s and 2.72 -> 1.58 s; 1,000 steps at 300^2, order 8: 0.68 -> 0.37 s, 0.92 -> 0.35 s;
    with CPML(20) on jax 0.12, 1000^2 order 8: 8.71 -> 2.92 s). Not measured on a GPU, where XLA fuses such
    pads into their consumers."""
    return jax.default_backend() == "cpu" and model.has_padded_step and model.padded_step_applies()
