"""The past of a DDE solve: a ring buffer of the dense output of the last accepted steps.

A method of steps needs `y(s)` at every delayed argument `s = t - tau` of every
stage (Bellen & Zennaro 2003, §3.2-3.3): from the history function for
`s <= t0`, otherwise from the continuous extension (dense output) of the step
that contains `s`. Keeping every step would make memory grow with the length
of the solve and, inside a fixed-size `jax` loop carry, require `max_steps`
slots; a ring buffer of the last `capacity` steps bounds it by
`capacity x (rows + 2) x n` floats (the step's ends `y0`, `y1` and the rows `k`
of its interpolant: the stage increments for diffrax's Runge–Kutta interpolations,
the dense-output coefficients for a Rosenbrock method's). A delayed
argument older than the oldest kept step is reported, not silently
extrapolated: `capacity` must then be raised.

Lookups are branch-free (`jnp` masks and gathers), so they run under `jit`,
`vmap` and both modes of autodiff; the "double `where`" keeps the gradient
finite when the unused branch would divide by zero (an empty slot) or
evaluate the history outside its domain.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, Real


class StepBuffer(eqx.Module):
    """The last `capacity` accepted steps; slot `count % capacity` is written next.

    `t0`, `t1`: each step's ends `(capacity,)`; `y0`, `y1`: `(capacity, n)`;
    `k`: interpolant rows (stage increments or dense coefficients) `(capacity, rows, n)`; `count`: steps written so far.
    """

    t0: Real[Array, " H"]
    t1: Real[Array, " H"]
    y0: Float[Array, "H n"]
    y1: Float[Array, "H n"]
    k: Float[Array, "H s n"]
    count: Int[Array, ""]

    @classmethod
    def empty(cls, capacity: int, rows: int, y: Float[Array, " n"]) -> StepBuffer:
        zeros = jnp.zeros((capacity,), y.dtype)
        states = jnp.zeros((capacity, y.size), y.dtype)
        k = jnp.zeros((capacity, rows, y.size), y.dtype)
        return cls(zeros, zeros, states, states, k, jnp.zeros((), jnp.int32))

    @property
    def capacity(self) -> int:
        return self.t0.shape[0]

    def push(self, t0, t1, y0, y1, k, keep) -> StepBuffer:
        """Store the step if `keep` (it was accepted), overwriting the oldest once the buffer is full.

        Inside the solver's loop the arrays are `equinox` loop buffers: the write is predicated
        and in place, so a step costs O(1) in the capacity, also under `jax.vmap` (a select or
        a copy of the whole buffer per step made a 1,000-member ensemble 50x slower)."""
        p = self.count % self.capacity
        return StepBuffer(
            self.t0.at[p].set(t0, pred=keep),
            self.t1.at[p].set(t1, pred=keep),
            self.y0.at[p].set(y0, pred=keep),
            self.y1.at[p].set(y1, pred=keep),
            self.k.at[p].set(k, pred=keep),
            self.count + jnp.asarray(keep, jnp.int32),
        )

    def _oldest(self) -> Int[Array, ""]:
        return jnp.where(self.count > self.capacity, self.count % self.capacity, 0)

    def slot_of(self, s: Real[Array, ""], right: bool = False) -> tuple[Int[Array, ""], Bool[Array, ""]]:
        """The slot of the kept step containing `s` (the last one if `s` lies beyond it) and
        whether `s` is older than every kept step (its step was overwritten).

        At the junction of two steps, the earlier one, or the later one if `right`: the side
        whose derivative is the one-sided derivative wanted there (see `delayed_states`)."""
        h = self.capacity
        filled = jnp.minimum(self.count, h)
        oldest = self._oldest()
        # Kept steps in logical (time) order have increasing t1: the number of them ending
        # before s is the logical index of the step containing s. Found by bisection, reading
        # log2(capacity) entries rather than comparing against all of them.
        lo, hi = jnp.zeros((), jnp.int32), filled.astype(jnp.int32)
        for _ in range(max(h, 1).bit_length()):
            mid = (lo + hi) // 2
            end = self.t1[(oldest + mid) % h]
            after = (mid < hi) & ((end <= s) if right else (end < s))
            lo, hi = jnp.where(after, mid + 1, lo), jnp.where(after, hi, mid)
        logical = jnp.clip(lo, 0, jnp.maximum(filled - 1, 0))
        too_old = (self.count > h) & (s < self.t0[oldest])
        return (oldest + logical) % h, too_old

    def evaluate(self, interpolation_cls, slot: Int[Array, ""], s: Real[Array, ""], usable: Bool[Array, ""]):
        """The dense output of the step in `slot` at `s`; finite values and gradients when not `usable`."""
        t0 = jnp.where(usable, self.t0[slot], 0.0)
        t1 = jnp.where(usable, self.t1[slot], 1.0)
        s = jnp.where(usable, s, 0.5)
        interp = interpolation_cls(t0=t0, t1=t1, y0=self.y0[slot], y1=self.y1[slot], k=self.k[slot])
        return interp.evaluate(s)

    def last(self, interpolation_cls, s: Real[Array, ""]) -> Float[Array, " n"]:
        """The dense output of the most recent step at `s` (zeros before any step)."""
        usable = self.count > 0
        return self.evaluate(interpolation_cls, (self.count - 1) % self.capacity, s, usable)


def delayed_states(
    buffer: StepBuffer,
    interpolation_cls,
    history: Callable,
    params,
    t_start: Real[Array, ""],
    s: Real[Array, " m"],
    right: bool = False,
) -> tuple[Float[Array, "m n"], Bool[Array, ""]]:
    """`y(s_j)` for every delayed argument `s_j`: the history for `s_j <= t_start`, else the
    dense output of the kept step containing it. Also whether any `s_j` was older than the buffer.

    The values are continuous across steps, their time derivatives are not: at a breakpoint
    `y'` jumps. With `right`, a point where two pieces (or the history and the first step) meet
    is read from the later piece, so a derivative in `t` taken at the start of a step is the
    one-sided derivative over that step (what a Rosenbrock step's `df/dt` needs); the history
    still answers while no step is stored."""

    def one(s_j):
        in_history = ((s_j < t_start) | ((s_j == t_start) & (buffer.count == 0))) if right else (s_j <= t_start)
        slot, too_old = buffer.slot_of(s_j, right)
        usable = ~in_history & (buffer.count > 0)
        from_steps = buffer.evaluate(interpolation_cls, slot, s_j, usable)
        from_history = history(jnp.where(in_history, s_j, t_start), params)
        return jnp.where(in_history, from_history, from_steps), ~in_history & too_old

    values, too_old = jax.vmap(one)(s)
    return values, jnp.any(too_old)


__all__ = ["StepBuffer", "delayed_states"]
