"""`Leapfrog`: explicit second-order time stepping for second-order-in-time (wave) models."""

from __future__ import annotations

import abc
from typing import ClassVar

import equinox as eqx
from jaxtyping import Array, PyTree

from ..._step_counts import check_checkpoint, check_dt
from .._fixed_step import AbstractFixedStep
from ..fd._model import AbstractFDModel


class AbstractWaveModel(AbstractFDModel):
    """An FD model of a second-order-in-time equation `p_tt = F(t, p)`, steppable by `Leapfrog`.

    The state users give and get is first order (e.g. `{"p": p, "v": p_t}`), so
    `rhs` also drives any `sciax.ode` method; `Leapfrog` carries its own state
    (e.g. the previous pressure and absorbing-layer memory) through these hooks.
    """

    def leapfrog_prepare(self, params: PyTree, dt: float) -> PyTree:
        """Coefficients computed once per solve from `params` (default: `params` unchanged)."""
        return params

    @abc.abstractmethod
    def leapfrog_init(self, y0: PyTree[Array], dt: float, params: PyTree) -> PyTree[Array]:
        """The carried state at the first output time (`params` as returned by `leapfrog_prepare`)."""

    @abc.abstractmethod
    def leapfrog_step(self, carry: PyTree[Array], t: Array, dt: float, params: PyTree) -> PyTree[Array]:
        """Advance the carried state from time `t` to `t + dt`."""

    @abc.abstractmethod
    def leapfrog_observe(self, carry: PyTree[Array], dt: float, params: PyTree, save) -> dict[str, Array]:
        """The outputs named in `save` (or the model's defaults if `None`)."""

    @abc.abstractmethod
    def leapfrog_stable_dt(self, params: PyTree) -> Array:
        """The largest stable leapfrog step, `2 / omega_max`."""


class Leapfrog(AbstractFixedStep):
    """The leapfrog (central-difference, Störmer–Verlet) scheme `p+ = 2p - p- + dt^2 F(t, p)` for an
    `AbstractWaveModel`, with fixed step `dt` over `lax.scan`.

    Second order, symplectic (no energy drift), one evaluation of `F` per step.
    Raises `ValueError` (or at run time, under jit) stating the largest stable
    dt when `dt > 2 / omega_max`. `save` names the outputs kept at every `ts`
    (see the model, e.g. `AcousticWave`: `"p"`, `"v"`, `"seismogram"`); keeping
    only seismograms makes long runs and their gradients cheap in memory.

    **Arguments:** `dt` (time units); `checkpoint` (steps per recomputed block
    in reverse mode, default 64: memory `~ (steps/64 + 64)` states).
    """

    dt: float = eqx.field(static=True)
    checkpoint: int | None = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 1
    scan_unroll: ClassVar[int] = 2  # (p, p_prev) -> (p_next, p): two steps per loop iteration keep both in place

    def __init__(self, dt: float, *, checkpoint: int | None = 64):
        self.dt, self.checkpoint = check_dt("Leapfrog", dt), check_checkpoint("Leapfrog", checkpoint)

    def solve(self, model, y0, ts, params, *, save=None, throw: bool = True):
        if not isinstance(model, AbstractWaveModel):
            raise TypeError(
                f"simulate: Leapfrog steps second-order-in-time wave models (sciax.pde.AcousticWave), got "
                f"{type(model).__name__}; use sciax.pde.RK4(dt) or a sciax.ode method for it"
            )
        return super().solve(model, y0, ts, params, save=save, throw=throw)

    def stable_dt(self, model, params):
        return model.leapfrog_stable_dt(params)

    def prepare(self, model, params):
        return model.leapfrog_prepare(params, self.dt)

    def init(self, model, y0, params):
        return model.leapfrog_init(y0, self.dt, params)

    def step(self, model, carry, t, params):
        return model.leapfrog_step(carry, t, self.dt, params)

    def observe(self, model, carry, params, save):
        return model.leapfrog_observe(carry, self.dt, params, save)
