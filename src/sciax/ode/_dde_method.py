"""`MethodOfSteps`: explicit Runge–Kutta integration of delay differential equations.

The method of steps (Bellen & Zennaro, *Numerical Methods for Delay Differential
Equations*, Oxford 2003, ch. 3-4; the name of SciML's `MethodOfSteps(Tsit5())`,
Widmann & Rackauckas 2022): integrate the DDE as an ODE whose delayed terms are
read from what is already known, the history function before `t0` and the
continuous extension (dense output) of earlier steps after it
(`_dde_history.py`). Two choices make that exact and keep the order of the
underlying pair:

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
  Zennaro §2.2). A Runge–Kutta step across one loses order, so steps are clipped
  to land exactly on the next point of `{t0 + sum of up to p + 1 delays}`
  (`p` the order of the pair; smoother points no longer matter), recomputed at
  every step from the current delays. For constant delays that is exactly the
  classical set; for time- or state-dependent delays it is an approximation (the
  exact points solve `t - tau(t, y(t)) = earlier point`, Bellen & Zennaro §4.4).

The pair is Tsit5 (default) or Dopri5 with diffrax's tableau, error estimate and
dense-output interpolation, and diffrax's integral step-size controller, as in
`_ensemble_rk.py`. The loop is one `equinox` while loop, checkpointed for
reverse mode, so solves run under `jit`, `vmap` (lockstep) and `grad`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PyTree, Real

from .. import _checks
from .._method import AbstractMethod
from .._solution import Solution
from ._adjoint_loop import loop_kind
from ._dde import DDE
from ._dde_history import StepBuffer, delayed_states
from ._ensemble_rk import FACTOR_MAX, FACTOR_MIN, SAFETY
from ._explicit import Dopri5, Tsit5

#: Status codes of a solve (`Solution.result`); messages in `MethodOfSteps.result_messages`.
RUNNING, DONE, MAX_STEPS, STEP_COLLAPSED, HISTORY_TOO_SHORT, BAD_DELAY = (np.int32(c) for c in range(6))
_MAX_BREAKPOINTS = 4096


class MethodOfSteps(AbstractMethod):
    """The method of steps for `sciax.ode.DDE` (Bellen & Zennaro 2003; SciML's `MethodOfSteps`).

    An explicit adaptive Runge–Kutta pair whose delayed states come from the history
    function (before `t0`) or from the dense output of earlier steps, with

    - steps no longer than the smallest current delay, so every delayed argument is
      already known and no iteration over a step is needed; a delay much smaller than
      the time scale of the solution therefore forces correspondingly small steps;
    - discontinuity tracking: steps land exactly on the points `t0 + (sums of up to
      p + 1 delays)` (`p = 5`), recomputed at every step from the current delays:
      the classical set of breakpoints for constant delays, an approximation of it for
      time- or state-dependent ones.

    **Arguments:** `rk`: the pair, `sciax.ode.Tsit5()` (default) or `sciax.ode.Dopri5()`
    (diffrax's tableaus, error estimates and dense output).

    Options of `sciax.simulate`: `rtol`, `atol` (default `1e-6`), `dt0` (first step,
    automatic by default; the fixed step with `adaptive=False`), `adaptive` (default
    `True`), `max_steps` (step attempts, default 16384), `history_steps` (capacity of
    the ring buffer of past steps' dense output, default 256; memory
    `history_steps x (stages + 2) x n` floats, `stages + 2 = 9` for both pairs; a
    delayed argument older than the oldest kept step stops the solve, as a failure
    asking to raise `history_steps`; it only needs to hold the steps of one delay window,
    and under `jax.vmap` each step's write costs in proportion to it, so keep it modest for
    ensembles), `adjoint` (`None`: reverse mode through a
    checkpointed loop; `diffrax.ForwardMode()` for `jax.jvp`), `throw`.

    `stats`: `num_steps`, `num_accepted_steps`, `num_rejected_steps`, `num_rhs_evals`,
    `max_steps`, `t_reached`. `result` is an integer: `1` success, `2` max_steps used up,
    `3` step size collapsed, `4` history_steps too small, `5` a delay not positive
    (`MethodOfSteps.result_messages` words them).
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
        int(BAD_DELAY): "a delay became <= 0 (or not finite); delays must stay positive",
    }

    def __check_init__(self):
        if type(self.rk) not in (Tsit5, Dopri5):
            raise TypeError(f"MethodOfSteps: rk must be sciax.ode.Tsit5() or sciax.ode.Dopri5(), got {self.rk!r}")

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
        solver = diffrax.Tsit5() if isinstance(self.rk, Tsit5) else diffrax.Dopri5()
        stepper = _Stepper(
            model=model,
            params=params,
            ts=ts,
            tableau=solver.tableau,
            interpolation_cls=solver.interpolation_cls,
            breakpoint_sums=jnp.asarray(_breakpoint_sums(n_delays, solver.order(None) + 1), ts.dtype),
            rtol=rtol,
            atol=atol,
            dt0=dt0,
            adaptive=adaptive,
            max_steps=max_steps,
            order=solver.order(None),
        )
        state = stepper.init(y0, history_steps)
        state = eqxi.while_loop(
            lambda s: s["status"] == RUNNING,
            stepper.iterate,
            state,
            max_steps=max_steps + ts.size + 1,
            buffers=lambda s: (s["buffer"].t0, s["buffer"].t1, s["buffer"].y0, s["buffer"].y1, s["buffer"].k),
            kind=loop_kind("MethodOfSteps", adjoint),
        )
        status = state["status"]
        done = status == DONE
        ys = jnp.where(jnp.arange(ts.size)[:, None] < state["idx"], state["ys"], jnp.inf)
        if throw:
            codes = sorted(self.result_messages)
            messages = [f"sciax.simulate: MethodOfSteps stopped early: {self.result_messages[c]}" for c in codes]
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


class _Stepper(eqx.Module):
    model: DDE
    params: Any
    ts: Array
    tableau: Any = eqx.field(static=True)
    interpolation_cls: Any = eqx.field(static=True)
    breakpoint_sums: Array
    rtol: Any
    atol: Any
    dt0: Any
    adaptive: bool = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)
    order: int = eqx.field(static=True)

    def history(self, s, params):
        return jnp.asarray(self.model.history(s, params), self.ts.dtype)

    def rhs(self, t, y, buffer):
        """`f(t, y, y(t - tau))` with the delayed states from the past; also whether a delayed
        argument fell out of the buffer and whether a delay is not positive."""
        tau = jnp.asarray(self.model.delays(t, y, self.params), t.dtype)
        y_delayed, too_old = delayed_states(
            buffer, self.interpolation_cls, self.history, self.params, self.ts[0], t - tau
        )
        f = jnp.asarray(self.model.vector_field(t, y, y_delayed, self.params), y.dtype)
        return f, too_old, ~jnp.all(tau > 0)

    def init(self, y0, history_steps):
        t0, t_end = self.ts[0], self.ts[-1]
        stages = len(self.tableau.c) + 1
        buffer = StepBuffer.empty(history_steps, stages, y0)
        f0, _, bad0 = self.rhs(t0, y0, buffer)
        if self.dt0 is None:
            h0 = jax.lax.stop_gradient(self._initial_step(t0, y0, f0))
        else:
            h0 = jnp.asarray(self.dt0, t0.dtype)
        h0 = jnp.where(t_end > t0, h0, 1.0)  # a zero-length span only writes y0
        zero = jnp.zeros((), jnp.int32)
        return dict(
            t=t0,
            y=y0,
            f0=f0,
            h=h0,
            buffer=buffer,
            ys=jnp.zeros((self.ts.size, y0.size), y0.dtype),
            idx=zero,
            status=jnp.where(bad0, BAD_DELAY, RUNNING),
            steps=zero,
            rejected=zero,
            nfev=jnp.ones((), jnp.int32),
        )

    def _initial_step(self, t0, y0, f0):
        """Hairer, Nørsett & Wanner's first step (Solving ODEs I, II.4), as diffrax's; the trial
        evaluation takes its delayed states from the history (clipped to `t0`)."""
        scale = self.atol + self.rtol * jnp.abs(y0)
        d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
        small = (d0 < 1e-5) | (d1 < 1e-5)
        h0 = jnp.where(small, 1e-6, 0.01 * d0 / jnp.where(small, 1.0, d1))
        t1, y1 = t0 + h0, y0 + h0 * f0
        tau = self.model.delays(t1, y1, self.params)
        y_delayed = jax.vmap(lambda s: self.history(jnp.minimum(s, t0), self.params))(t1 - tau)
        f1 = self.model.vector_field(t1, y1, y_delayed, self.params)
        d2 = _rms((f1 - f0) / scale) / h0
        tiny = jnp.maximum(d1, d2) <= 1e-15
        h1 = jnp.where(
            tiny, jnp.maximum(1e-6, h0 * 1e-3), (0.01 / jnp.where(tiny, 1.0, jnp.maximum(d1, d2))) ** (1 / self.order)
        )
        return jnp.minimum(100 * h0, h1)

    def iterate(self, s):
        """One loop iteration: write the next output if the last step reached it, else attempt a step.

        The step buffer stays out of the branch: the branch returns the step to store (and
        whether to), and the write happens after it, in place. Passing the buffer through a
        `cond` (a `select` under `vmap`) would copy all of it every iteration."""
        pending = self.ts[s["idx"]] <= s["t"]
        buffer = s["buffer"]
        rest = {k: v for k, v in s.items() if k != "buffer"}
        new, step = jax.lax.cond(
            pending, lambda r: self._write_output(r, buffer), lambda r: self._attempt(r, buffer), rest
        )
        return dict(new, buffer=buffer.push(*step))

    def _write_output(self, s, buffer):
        t_out = self.ts[s["idx"]]
        y = jnp.where(t_out == s["t"], s["y"], buffer.last(self.interpolation_cls, t_out))
        idx = s["idx"] + 1
        new = dict(s, ys=s["ys"].at[s["idx"]].set(y), idx=idx, status=jnp.where(idx == self.ts.size, DONE, RUNNING))
        stages = len(self.tableau.c) + 1
        nothing = (s["t"], s["t"], s["y"], s["y"], jnp.zeros((stages,) + s["y"].shape, s["y"].dtype), jnp.array(False))
        return new, nothing

    def _next_breakpoint(self, t, tau):
        """The first of `t_end` and `{t0 + sums of delays}` after `t` (round-off ahead of `t` excluded)."""
        points = self.ts[0] + self.breakpoint_sums @ tau
        ahead = points > t + 100 * jnp.finfo(t.dtype).eps * jnp.maximum(1.0, jnp.abs(t))
        return jnp.minimum(jnp.min(jnp.where(ahead, points, jnp.inf)), self.ts[-1])

    def _attempt(self, s, buffer):
        t, y = s["t"], s["y"]
        tau = jnp.asarray(self.model.delays(t, y, self.params), t.dtype)
        h_wanted = s["h"] if self.adaptive else jnp.asarray(self.dt0, t.dtype)
        h = jnp.minimum(h_wanted, jnp.min(tau))
        breakpoint = self._next_breakpoint(t, tau)
        # Land exactly on the next breakpoint (or t_end) when the step reaches it or nearly does.
        lands = t + h * (1 + 1e-6) >= breakpoint
        t_new = jnp.where(lands, breakpoint, t + h)
        h = t_new - t
        ks = [h * s["f0"]]
        too_old, bad = jnp.array(False), ~jnp.all(tau > 0)
        for a_row, c in zip(self.tableau.a_lower, self.tableau.c):
            y_stage = y + sum(float(a) * k for a, k in zip(a_row, ks) if a != 0)
            t_stage = t_new if c == 1 else t + float(c) * h
            f, old, neg = self.rhs(t_stage, y_stage, buffer)
            ks.append(h * f)
            too_old, bad = too_old | old, bad | neg
        y1 = y_stage  # FSAL/SSAL: the last stage is (t_new, y1)
        err = sum(float(b) * k for b, k in zip(self.tableau.b_error, ks) if b != 0)
        scale = self.atol + self.rtol * jnp.maximum(jnp.abs(y), jnp.abs(y1))
        en = _rms(err / scale)
        en = jnp.where(jnp.isfinite(en), en, jnp.inf)
        accept = (en < 1.0) if self.adaptive else jnp.isfinite(en)
        # diffrax's integral controller; the step size schedule is not differentiated.
        inv = jax.lax.stop_gradient(jnp.where(jnp.isfinite(en), 1.0 / en, 0.0))
        factor = jnp.clip(
            SAFETY * inv ** (1.0 / self.order),
            jnp.where(accept, 1.0, FACTOR_MIN),
            jnp.where(accept, FACTOR_MAX, SAFETY),
        )
        h_next = jnp.where(accept & (h < h_wanted), jnp.maximum(h * factor, h_wanted), h * factor)
        out_of_steps = s["steps"] >= self.max_steps
        steps = s["steps"] + 1
        new = dict(
            s,
            h=jax.lax.stop_gradient(h_next) if self.adaptive else s["h"],
            steps=steps,
            nfev=s["nfev"] + len(self.tableau.c),
            rejected=s["rejected"] + (~accept).astype(jnp.int32),
        )
        keep = accept & ~too_old & ~bad & ~out_of_steps
        accepted = dict(new, t=t_new, y=y1, f0=f)
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(keep, a, b), accepted, new)
        t_now = jax.lax.stop_gradient(t)
        collapsed = h < 10 * jnp.abs(jnp.nextafter(t_now, jnp.inf) - t_now)
        status = jnp.select(
            [bad, too_old, out_of_steps, collapsed & ~accept],
            [BAD_DELAY, HISTORY_TOO_SHORT, MAX_STEPS, STEP_COLLAPSED],
            RUNNING,
        )
        new = dict(new, status=jnp.where(status != RUNNING, status, new["status"]).astype(jnp.int32))
        return new, (t, t_new, y, y1, jnp.stack(ks), keep)


def _rms(x: Float[Array, " n"]) -> Float[Array, ""]:
    return jnp.sqrt(jnp.mean(x * x))


__all__ = ["MethodOfSteps", "RUNNING", "DONE", "MAX_STEPS", "STEP_COLLAPSED", "HISTORY_TOO_SHORT", "BAD_DELAY"]
