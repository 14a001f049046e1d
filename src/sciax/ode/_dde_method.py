"""`MethodOfSteps`: explicit Runge–Kutta or Rosenbrock integration of delay differential equations.

The method of steps (Bellen & Zennaro, *Numerical Methods for Delay Differential
Equations*, Oxford 2003, ch. 3-4; the name of SciML's `MethodOfSteps(Tsit5())`,
Widmann & Rackauckas 2022): integrate the DDE as an ODE whose delayed terms are
read from what is already known, the history function before `t0` and the
continuous extension (dense output) of earlier steps after it
(`_dde_history.py`). Two choices make that exact and keep the order of the
underlying method:

- **steps no longer than the smallest delay**, `h <= min_j tau_j(t, y)`: every
  delayed argument of every stage then lies in an accepted step (or the history),
  so no stage waits on the step being taken and no fixed-point iteration over
  the step is needed (Bellen & Zennaro §4.1, "non-overlapping" steps). The cost
  is that a delay much smaller than the scale of the solution forces tiny
  steps (the problem then behaves almost like an ODE, and an implicit
  overlapping scheme would step farther).
- **discontinuity tracking**: a DDE's solution is generally not smooth at `t0`
  (the history's slope differs from `f`'s), and the kink propagates to
  `t0 + tau`, `t0 + 2 tau`, ..., one derivative smoother each time (Bellen &
  Zennaro §2.2). A step across one loses order, so steps are clipped
  to land exactly on the next point of `{t0 + sum of up to p + 1 delays}`
  (`p` the order of the method; smoother points no longer matter), recomputed at
  every step from the current delays. For constant delays that is exactly the
  classical set; for time- or state-dependent delays it is an approximation (the
  exact points solve `t - tau(t, y(t)) = earlier point`, Bellen & Zennaro §4.4).

Two step families share the loop (`_dde_stepper.py`): the explicit pairs Tsit5
(default) and Dopri5 with diffrax's tableaus, error estimates and dense output
(`_dde_rk_step.py`), and the Rosenbrock methods Rodas5P, Rodas4, Ros3P and Ros34PW2
with their own dense output (`_dde_rosenbrock_step.py`), for stiff DDEs. Both use
diffrax's integral step-size controller with the method's order, as
`_ensemble_rk.py`. The loop is one `equinox` while loop, checkpointed for reverse
mode, so solves run under `jit`, `vmap` (lockstep) and `grad`.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jaxtyping import Array, Float, PyTree, Real

from .. import _checks
from .._method import AbstractMethod
from .._solution import Solution
from ._adjoint_loop import loop_kind
from ._dde import DDE
from ._dde_rk_step import RKStep
from ._dde_rosenbrock_step import RosenbrockStep
from ._dde_stepper import BAD_DELAY, DONE, HISTORY_TOO_SHORT, MAX_STEPS, RUNNING, STEP_COLLAPSED, Stepper
from ._explicit import Dopri5, Tsit5
from ._rosenbrock_methods import Rodas4, Rodas5P, Ros3P, Ros34PW2

_EXPLICIT = (Tsit5, Dopri5)
_ROSENBROCK = (Rodas5P, Rodas4, Ros3P, Ros34PW2)
_MAX_BREAKPOINTS = 4096


class MethodOfSteps(AbstractMethod):
    """The method of steps for `sciax.ode.DDE` (Bellen & Zennaro 2003; SciML's `MethodOfSteps`).

    An adaptive one-step method (explicit Runge–Kutta or Rosenbrock) whose delayed states
    come from the history function (before `t0`) or from the dense output of earlier steps,
    with

    - steps no longer than the smallest current delay, so every delayed argument is
      already known and no iteration over a step is needed; a delay much smaller than
      the time scale of the solution therefore forces correspondingly small steps;
    - discontinuity tracking: steps land exactly on the points `t0 + (sums of up to
      p + 1 delays)` (`p` the method's order), recomputed at every step from the current
      delays: the classical set of breakpoints for constant delays, an approximation of it
      for time- or state-dependent ones.

    **Arguments:** `rk`: the method,

    - non-stiff: `sciax.ode.Tsit5()` (default) or `sciax.ode.Dopri5()` (order 5; diffrax's
      tableaus, error estimates and dense output);
    - stiff: `sciax.ode.Rodas5P()` (order 5), `sciax.ode.Rodas4()` (order 4),
      `sciax.ode.Ros3P()` or `sciax.ode.Ros34PW2()` (order 3). Each step linearises
      `g(t, y) = f(t, y, y(t - tau(t, y)))` at its start: a dense Jacobian `dg/dy` by forward
      mode (including the dependence of a state-dependent delay on `y`; the delayed states
      themselves are fixed history) and `dg/dt` through the dense output of the past steps;
      the stored dense output is the method's own. For a DDE whose non-delayed part is stiff
      (fast decay, `-lambda y(t)` with `lambda tau >> 1`); the steps are still capped by
      the smallest delay. `jacobian` may be `"auto"` or `"jacfwd"` (both dense), and
      `linear_solver` a `lineax` solver or `None` (unrolled LU up to 12 states, LU above).

    Options of `sciax.simulate`: `rtol`, `atol` (default `1e-6`), `dt0` (first step,
    automatic by default; the fixed step with `adaptive=False`), `adaptive` (default
    `True`), `max_steps` (step attempts, default 16384), `history_steps` (capacity of
    the ring buffer of past steps' dense output, default 256; memory
    `history_steps x (rows + 2) x n` floats, `rows + 2 = 9` for both explicit pairs, 5 for
    Rodas5P and 4 for the other Rosenbrock methods; a
    delayed argument older than the oldest kept step stops the solve, as a failure
    asking to raise `history_steps`; it only needs to hold the steps of one delay window,
    and under `jax.vmap` each step's write costs in proportion to it, so keep it modest for
    ensembles), `adjoint` (`None`: reverse mode through a
    checkpointed loop; `diffrax.ForwardMode()` for `jax.jvp`), `throw`.

    `stats`: `num_steps`, `num_accepted_steps`, `num_rejected_steps`, `num_rhs_evals`
    (stage evaluations of `f`), `max_steps`, `t_reached`, and for the Rosenbrock methods
    `num_jacobian_evals` (one linearisation per step attempt). `result` is an integer:
    `1` success, `2` max_steps used up, `3` step size collapsed (for a Rosenbrock method
    also: its stage matrix stayed singular), `4` history_steps too small, `5` a delay not
    positive or reaching before the DDE's `history_start` (`MethodOfSteps.result_messages`
    words them).
    """

    rk: AbstractMethod = eqx.field(static=True, default=Tsit5())

    options: ClassVar[tuple[str, ...]] = (
        "rtol",
        "atol",
        "dt0",
        "adaptive",
        "max_steps",
        "history_steps",
        "adjoint",
        "throw",
    )
    result_messages: ClassVar[dict[int, str]] = {
        int(MAX_STEPS): "the step budget (max_steps) was used up",
        int(STEP_COLLAPSED): "the step size collapsed below round-off (a non-finite right-hand side?)",
        int(HISTORY_TOO_SHORT): (
            "a delayed argument is older than the oldest step kept for dense output: raise history_steps"
        ),
        int(BAD_DELAY): (
            "a delay became <= 0 (or not finite), or a delayed time t - tau fell before the DDE's "
            "history_start; delays must stay positive and within the history"
        ),
    }

    def __check_init__(self):
        if type(self.rk) not in _EXPLICIT + _ROSENBROCK:
            accepted = ", ".join(f"sciax.ode.{cls.__name__}()" for cls in _EXPLICIT + _ROSENBROCK)
            raise TypeError(f"MethodOfSteps: rk must be one of {accepted}; got {self.rk!r}")
        if isinstance(self.rk, _ROSENBROCK):
            jacobian = self.rk.jacobian
            if not (isinstance(jacobian, str) and jacobian in ("auto", "jacfwd")):
                raise TypeError(
                    f"MethodOfSteps: rk={type(self.rk).__name__}(jacobian=...) must be 'auto' or 'jacfwd' "
                    f"(a DDE's Jacobian is formed densely by forward mode), got {jacobian!r}"
                )
            solver = self.rk.linear_solver
            if solver is not None and not isinstance(solver, lx.AbstractLinearSolver):
                raise TypeError(
                    f"MethodOfSteps: rk={type(self.rk).__name__}(linear_solver=...) must be a lineax solver "
                    f"or None, got {solver!r}"
                )

    def solve(
        self,
        model,
        y0: Float[Array, " n"],
        ts: Real[Array, " T"],
        params: PyTree,
        *,
        rtol: float = 1e-6,
        atol: float = 1e-6,
        dt0: float | None = None,
        adaptive: bool = True,
        max_steps: int = 16384,
        history_steps: int = 256,
        adjoint: diffrax.AbstractAdjoint | None = None,
        throw: bool = True,
    ) -> Solution:
        if not isinstance(model, DDE):
            raise TypeError(f"MethodOfSteps solves a sciax.ode.DDE, got {type(model).__name__}")
        for name, value in (("max_steps", max_steps), ("history_steps", history_steps)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"simulate: {name} must be a positive integer, got {value!r}")
        if not isinstance(adaptive, bool):
            raise TypeError(f"simulate: adaptive must be True or False, got {adaptive!r}")
        if not adaptive and dt0 is None:
            raise ValueError("simulate: MethodOfSteps with adaptive=False needs the fixed step dt0=")
        rtol = _checks.check_positive("rtol", rtol)
        atol = _checks.check_positive("atol", atol)
        dt0 = _checks.check_positive("dt0", dt0)
        ts = jnp.asarray(ts, jnp.result_type(y0))
        n_delays = model.check_functions(ts[0], y0, params)
        options = (rtol, atol, dt0, adaptive, max_steps, history_steps, loop_kind("MethodOfSteps", adjoint), throw)
        return _solve(self, model, self._step(), n_delays, y0, ts, params, *options)

    def _step(self) -> RKStep | RosenbrockStep:
        if isinstance(self.rk, _ROSENBROCK):
            if self.rk.reuse_jacobian is not None:
                raise ValueError(
                    "delay equations: the method of steps evaluates a fresh Jacobian every step; "
                    f"{type(self.rk).__name__}(reuse_jacobian=...) is not supported here, pass it without"
                )
            return RosenbrockStep(tableau=self.rk.tableau, linear_solver=self.rk.linear_solver)
        solver = diffrax.Tsit5() if isinstance(self.rk, Tsit5) else diffrax.Dopri5()
        return RKStep(tableau=solver.tableau, interpolation_cls=solver.interpolation_cls, order=solver.order(None))


@eqx.filter_jit
def _solve(
    method, model, step, n_delays, y0, ts, params, rtol, atol, dt0, adaptive, max_steps, history_steps, kind, throw
):
    # One compiled program per model, method and options: outside jit the loop would
    # otherwise be traced and compiled again on every call (its body is a new Stepper).
    stepper = Stepper(
        model=model,
        params=params,
        ts=ts,
        step=step,
        breakpoint_sums=jnp.asarray(_breakpoint_sums(n_delays, step.order + 1), ts.dtype),
        rtol=rtol,
        atol=atol,
        dt0=dt0,
        adaptive=adaptive,
        max_steps=max_steps,
    )
    state = stepper.init(y0, history_steps)
    state = eqxi.while_loop(
        lambda s: s["status"] == RUNNING,
        stepper.iterate,
        state,
        max_steps=max_steps + ts.size + 1,
        buffers=lambda s: (s["buffer"].t0, s["buffer"].t1, s["buffer"].y0, s["buffer"].y1, s["buffer"].k),
        kind=kind,
    )
    status = state["status"]
    done = status == DONE
    ys = jnp.where(jnp.arange(ts.size)[:, None] < state["idx"], state["ys"], jnp.inf)
    if throw:
        codes = sorted(method.result_messages)
        messages = [f"sciax.simulate: MethodOfSteps stopped early: {method.result_messages[c]}" for c in codes]
        index = jnp.clip(status - codes[0], 0, len(codes) - 1)
        ys = eqx.branched_error_if(ys, ~done, index, messages)
    stats = dict(
        num_steps=state["steps"],
        num_accepted_steps=state["buffer"].count,
        num_rejected_steps=state["rejected"],
        num_rhs_evals=state["nfev"],
        max_steps=jnp.asarray(max_steps),
        t_reached=jnp.where(done, ts[-1], state["t"]),
    )
    if isinstance(step, RosenbrockStep):
        stats["num_jacobian_evals"] = state["steps"]
    return Solution(ts=ts, ys=ys, stats=stats, success=done, result=status, labels=model.labels())


def _breakpoint_sums(n_delays: int, levels: int) -> np.ndarray:
    """Rows of counts `c` with `1 <= sum(c) <= levels`: breakpoints are `t0 + c @ tau`.

    With many delays the set grows as `C(n_delays + levels, levels)`; the deepest levels
    (the smoothest breakpoints) are dropped to keep it below a few thousand."""
    while levels > 1 and _count_multisets(n_delays, levels) > _MAX_BREAKPOINTS:
        levels -= 1
    rows = []
    for level in range(1, levels + 1):
        for combo in itertools.combinations_with_replacement(range(n_delays), level):
            rows.append(np.bincount(combo, minlength=n_delays))
    return np.asarray(rows, dtype=float)


def _count_multisets(n: int, levels: int) -> int:
    return math.comb(n + levels, levels) - 1


__all__ = ["MethodOfSteps", "RUNNING", "DONE", "MAX_STEPS", "STEP_COLLAPSED", "HISTORY_TOO_SHORT", "BAD_DELAY"]
