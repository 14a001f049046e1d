"""`StaggeredLeapfrog`: the staggered-in-time leapfrog of first-order (velocity–stress) wave systems,
and `AbstractStaggeredModel`, the physics it asks a model for."""

from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple

import equinox as eqx
from jaxtyping import Array, PyTree

from ..._step_counts import check_checkpoint, check_dt
from .._fixed_step import AbstractFixedStep
from ..fd._model import AbstractFDModel


class StaggeredState(NamedTuple):
    """The carry: the velocity half a step behind the stress, the stress, the absorbing layers' memory."""

    velocity: PyTree[Array]
    stress: PyTree[Array]
    memory: PyTree[Array]


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


class StaggeredLeapfrog(AbstractFixedStep):
    """The staggered leapfrog of velocity–stress wave systems (Virieux 1986; Madariaga 1976):

        v(t + dt/2) = v(t - dt/2) + dt [B(sigma(t)) + f(t)]
        sigma(t + dt) = sigma(t) + dt [C(v(t + dt/2)) + s(t + dt/2)]

    Second order in `dt`, explicit, no energy drift, two half-updates per step, for an
    `AbstractStaggeredModel` (`sciax.pde.ElasticWave`). It starts from `v(t0 - dt/2) =
    v0 - dt/2 B(sigma0)` (second order). The carried velocity is half a step behind the stress:
    outputs at `t` hold `sigma(t)` and `v(t - dt/2)`.

    Raises `ValueError` (or at run time, under jit) stating the largest stable dt when
    `dt > 2 / omega_max`. **Arguments:** `dt` (time units); `checkpoint` (steps per
    recomputed block in reverse mode, default 64).

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
        return StaggeredState(behind, stress, model.initial_memory(velocity, operator))

    def step(self, model, state: StaggeredState, t, coefficients) -> StaggeredState:
        operator, source = coefficients
        dt = self.dt
        rate, memory = model.velocity_rate(t, state.stress, state.memory, operator)
        velocity = {k: state.velocity[k] + dt * rate[k] for k in state.velocity}
        velocity, _ = model.add_sources(velocity, state.stress, t, source, dt, "velocity")
        rate, memory = model.stress_rate(t, velocity, memory, operator)
        stress = {k: state.stress[k] + dt * rate[k] for k in state.stress}
        _, stress = model.add_sources(velocity, stress, t + 0.5 * dt, source, dt, "stress")
        return StaggeredState(velocity, stress, memory)

    def observe(self, model, state: StaggeredState, coefficients, save):
        return model.staggered_outputs(state.velocity, state.stress, save)
