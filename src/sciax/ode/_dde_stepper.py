"""The loop of the method of steps, shared by its step families (`MethodOfSteps`, `_dde_method.py`).

One iteration either writes the next requested output (from the dense output of the
last step) or attempts a step: its size is the controller's, capped by the smallest
current delay (so every delayed argument of every stage is already known) and
clipped to land on the next breakpoint; the step itself is an `AbstractDDEStep`
(`_dde_rk_step.py`, `_dde_rosenbrock_step.py`); an accepted step's dense output goes
into the ring buffer (`_dde_history.py`). The step-size controller is diffrax's
integral controller with the method's order, as in `_ensemble_rk.py`.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from ._dde import DDE
from ._dde_history import StepBuffer, delayed_states
from ._ensemble_rk import FACTOR_MAX, FACTOR_MIN, SAFETY

#: Status codes of a solve (`Solution.result`); messages in `MethodOfSteps.result_messages`.
RUNNING, DONE, MAX_STEPS, STEP_COLLAPSED, HISTORY_TOO_SHORT, BAD_DELAY = (np.int32(c) for c in range(6))


class AbstractDDEStep(eqx.Module):
    """One step of a family of methods, `t -> t_new`, with its dense output.

    Concrete steps provide `order` (of the solution), `rows` (leading size of the `k` stored
    per step), `rhs_evals` (evaluations of `f` per attempt), `interpolation_cls` (built from
    `t0, t1, y0, y1, k`) and `right_sided` (whether delayed states are read right-sided at
    junctions of pieces, see `delayed_states`)."""

    right_sided: ClassVar[bool]

    @abc.abstractmethod
    def __call__(self, rhs, t, t_new, y, f_start):
        """`rhs(t, y) -> (f, too_old, bad)` evaluates the DDE with its delayed states; `f_start`
        is the carried `f(t, y)`. Returns `(y1, err, k, f_end, too_old, bad)`: the new state, the
        error estimate, the rows stored for dense output, the `f` to carry to the next step,
        and whether a delayed argument fell out of the buffer or a delay was not positive."""


class Stepper(eqx.Module):
    """The loop body of `MethodOfSteps`: outputs, step-size control, breakpoints and the step
    buffer, around one `AbstractDDEStep`. The loop state is a dict (see `init`)."""

    model: DDE
    params: Any
    ts: Array
    step: AbstractDDEStep
    breakpoint_sums: Array
    rtol: Any
    atol: Any
    dt0: Any
    adaptive: bool = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)

    def history(self, s, params):
        return jnp.asarray(self.model.history(s, params), self.ts.dtype)

    def rhs(self, t, y, buffer, right=False):
        """`f(t, y, y(t - tau))` with the delayed states from the past (read right-sided at
        junctions if `right`, see `delayed_states`); also whether a delayed argument fell out of
        the buffer and whether a delay is not positive."""
        tau = jnp.asarray(self.model.delays(t, y, self.params), t.dtype)
        y_delayed, too_old = delayed_states(
            buffer, self.step.interpolation_cls, self.history, self.params, self.ts[0], t - tau, right
        )
        f = jnp.asarray(self.model.vector_field(t, y, y_delayed, self.params), y.dtype)
        return f, too_old, ~jnp.all(tau > 0) | ~self.model.delayed_times_ok(t, tau)

    def init(self, y0, history_steps):
        t0, t_end = self.ts[0], self.ts[-1]
        buffer = StepBuffer.empty(history_steps, self.step.rows, y0)
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
            tiny,
            jnp.maximum(1e-6, h0 * 1e-3),
            (0.01 / jnp.where(tiny, 1.0, jnp.maximum(d1, d2))) ** (1 / self.step.order),
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
        # A step can end exactly on an output time at a breakpoint t0 + k tau, which moves with
        # tau while the output time does not: y + (t_out - t) y' has y's value and the output's
        # derivative (without the term, d/dtau would gain a spurious k y'). y' is the slope of the
        # last step's dense output at its end (the Rosenbrock steps carry no end-point f).
        interpolation = self.step.interpolation_cls
        slope = jax.jvp(lambda u: buffer.last(interpolation, u), (s["t"],), (jnp.ones_like(s["t"]),))[1]
        slope = jnp.where(jnp.isfinite(slope), slope, 0.0)
        at_end = s["y"] + (t_out - s["t"]) * slope
        y = jnp.where(t_out == s["t"], at_end, buffer.last(self.step.interpolation_cls, t_out))
        idx = s["idx"] + 1
        new = dict(s, ys=s["ys"].at[s["idx"]].set(y), idx=idx, status=jnp.where(idx == self.ts.size, DONE, RUNNING))
        rows = jnp.zeros((self.step.rows,) + s["y"].shape, s["y"].dtype)
        nothing = (s["t"], s["t"], s["y"], s["y"], rows, jnp.array(False))
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
        y1, err, k, f, too_old, bad = self.step(
            lambda t_stage, y_stage: self.rhs(t_stage, y_stage, buffer, self.step.right_sided), t, t_new, y, s["f0"]
        )
        bad = bad | ~jnp.all(tau > 0)
        scale = self.atol + self.rtol * jnp.maximum(jnp.abs(y), jnp.abs(y1))
        en = _rms(err / scale)
        en = jnp.where(jnp.isfinite(en), en, jnp.inf)
        accept = (en < 1.0) if self.adaptive else jnp.isfinite(en)
        # diffrax's integral controller; the step size schedule is not differentiated.
        inv = jax.lax.stop_gradient(jnp.where(jnp.isfinite(en), 1.0 / en, 0.0))
        factor = jnp.clip(
            SAFETY * inv ** (1.0 / self.step.order),
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
            nfev=s["nfev"] + self.step.rhs_evals,
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
        return new, (t, t_new, y, y1, k, keep)


def _rms(x: Float[Array, " n"]) -> Float[Array, ""]:
    return jnp.sqrt(jnp.mean(x * x))


__all__ = [
    "AbstractDDEStep",
    "Stepper",
    "RUNNING",
    "DONE",
    "MAX_STEPS",
    "STEP_COLLAPSED",
    "HISTORY_TOO_SHORT",
    "BAD_DELAY",
]
