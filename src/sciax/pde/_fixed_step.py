"""`AbstractFixedStep`: fixed-step time stepping over `lax.scan`, with a CFL check and
gradient checkpointing over blocks of steps."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree, Real

from .._method import AbstractMethod
from .._solution import Solution
from .._step_counts import step_counts


class AbstractFixedStep(AbstractMethod):
    """A fixed-step method; concrete methods say how to start, step, observe and how large `dt` may be.

    **Fields:** `dt` (time units, a Python number, static); `checkpoint`: steps per
    block recomputed in the backward pass (`jax.checkpoint`), so reverse-mode
    memory is about `(steps / checkpoint + checkpoint)` states instead of one per
    step; `None` stores every step.
    """

    dt: eqx.AbstractVar[float]
    checkpoint: eqx.AbstractVar[int | None]

    @abc.abstractmethod
    def stable_dt(self, model, params) -> Array | None:
        """The largest stable step for `model` with `params`, or `None` if unknown."""

    @abc.abstractmethod
    def init(self, model, y0, params) -> PyTree:
        """The carried state at `ts[0]`."""

    @abc.abstractmethod
    def step(self, model, carry, t, params) -> PyTree:
        """Advance `carry` from time `t` by `dt`."""

    @abc.abstractmethod
    def observe(self, model, carry, params, save) -> PyTree:
        """The saved output at an output time."""

    rhs_evals_per_step: eqx.AbstractClassVar[int]
    # Steps per iteration of the compiled time loop. Two lets a method whose carry holds the state
    # at two times (leapfrog) overwrite the older one in place on both steps: no copy of the fields.
    scan_unroll: ClassVar[int] = 1

    def prepare(self, model, params) -> PyTree:
        """What `step` and `observe` receive as `params`: computed once, outside the time loop."""
        return params

    def solve(self, model, y0, ts: Real[Array, " T"], params, *, save: Any = None, throw: bool = True) -> Solution:
        """Run from `ts[0]` with steps `dt`, saving at every `ts` (each interval a whole number of steps).

        `save`: method-specific selection of outputs (see `Leapfrog`); `throw`: raise
        (`equinox.error_if`) on a non-finite state. Raises `ValueError` if `dt`
        exceeds the CFL limit (at run time under jit when `params` are traced).
        Differentiable in `y0` and `params` (reverse mode uses `checkpoint`).
        """
        name = type(self).__name__
        check = getattr(model, "check_state", None)
        if check is not None:
            check(y0, "y0")
        counts = step_counts(ts, self.dt, name)
        y0 = self._check_cfl(model, params, y0)
        return _run(self, model, y0, jnp.asarray(ts), params, counts, save, bool(throw))

    def _check_cfl(self, model, params, y0):
        """Raise (concrete limit) or thread a run-time check onto `y0`, which always holds arrays
        (params may be plain Python numbers)."""
        limit = self.stable_dt(model, params)
        if limit is None:
            return y0
        name = type(self).__name__
        if not isinstance(limit, jax.core.Tracer):
            if not self.dt <= float(limit):
                raise ValueError(
                    f"simulate: {name}(dt={self.dt}) violates the CFL condition for {type(model).__name__}; "
                    f"the largest stable dt is {float(limit):.6g}"
                )
            return y0
        return eqx.error_if(
            y0, self.dt > limit, f"simulate: {name} dt exceeds the CFL limit (largest stable dt is smaller)"
        )


@eqx.filter_jit
def _run(method: AbstractFixedStep, model, y0, ts, params, counts, save, throw):
    dt = method.dt
    params = method.prepare(model, params)
    t_dtype = jnp.result_type(ts.dtype, float)
    uniform = len(set(counts)) == 1
    n_max = max(counts)
    unroll = method.scan_unroll

    carry = method.init(model, y0, params)
    # Saving whole fields, the scan writes the initial output too (as interval 0, taking no steps):
    # concatenating it afterwards would copy all of ys once more. Small outputs (seismograms) are
    # concatenated instead: the cond doubles what reverse mode stores per interval.
    size = lambda tree: sum(a.size for a in jax.tree_util.tree_leaves(tree))  # noqa: E731
    in_place = size(jax.eval_shape(lambda c: method.observe(model, c, params, save), carry)) * 4 >= size(carry)

    def one(carry, t):
        return method.step(model, carry, t, params), None

    def steps(carry, t0, n_steps, n_live=None):
        """`n_steps` steps from `t0` (the first `n_live` only, if given), checkpointed in blocks."""
        times = t0 + jnp.arange(n_steps, dtype=t_dtype) * dt
        if n_live is not None:

            def masked(c, jt):
                j, t = jt
                new = method.step(model, c, t, params)
                return jax.tree_util.tree_map(lambda a, b: jnp.where(j < n_live, a, b), new, c), None

            return jax.lax.scan(masked, carry, (jnp.arange(n_steps), times))[0]
        block = method.checkpoint
        if block is None or n_steps <= block:
            return jax.lax.scan(one, carry, times, unroll=unroll)[0]
        n_blocks, rest = divmod(n_steps, block)

        @jax.checkpoint
        def run_block(c, tb):
            return jax.lax.scan(one, c, tb, unroll=unroll)[0], None

        carry = jax.lax.scan(run_block, carry, times[: n_blocks * block].reshape(n_blocks, block))[0]
        return jax.lax.scan(one, carry, times[n_blocks * block :], unroll=unroll)[0] if rest else carry

    def observe(carry):
        out = method.observe(model, carry, params, save)
        # Finiteness checked while the output is in cache; x * 0 is 0 unless x is inf or NaN,
        # and a sum is a cheaper reduction than all(isfinite(x)).
        return out, jnp.isfinite(sum(jnp.sum(a * 0) for a in jax.tree_util.tree_leaves(out)))

    def interval(carry, inputs):
        t0, n, live = inputs
        if in_place:
            carry = jax.lax.cond(live, lambda c: steps(c, t0, n_max, None if uniform else n), lambda c: c, carry)
        else:
            carry = steps(carry, t0, n_max, None if uniform else n)
        return carry, observe(carry)

    ts_t = ts.astype(t_dtype)
    t0s, ns, lives = ts_t[:-1], jnp.asarray(counts), jnp.ones(len(counts), bool)
    if in_place:
        t0s, ns, lives = (
            jnp.concatenate([ts_t[:1], t0s]),
            jnp.asarray((0,) + tuple(counts)),
            jnp.arange(len(counts) + 1) > 0,
        )
    else:
        first = observe(carry)
    group = method.checkpoint // n_max if (uniform and method.checkpoint and n_max < method.checkpoint) else 1
    n_int = len(t0s)
    if group > 1 and n_int > group:
        # Short intervals: checkpoint groups of `group` intervals rather than single ones.
        n_groups = n_int // group

        @jax.checkpoint
        def run_group(c, inputs):
            return jax.lax.scan(interval, c, inputs)

        k = n_groups * group
        grouped = tuple(x[:k].reshape(n_groups, group) for x in (t0s, ns, lives))
        carry, (ys, finite) = jax.lax.scan(run_group, carry, grouped)
        ys, finite = jax.tree_util.tree_map(lambda a: a.reshape((k,) + a.shape[2:]), (ys, finite))
        if k < n_int:
            carry, rest = jax.lax.scan(interval, carry, (t0s[k:], ns[k:], lives[k:]))
            ys, finite = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), (ys, finite), rest)
    else:
        carry, (ys, finite) = jax.lax.scan(interval, carry, (t0s, ns, lives))
    if not in_place:
        ys, finite = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a[None], b]), first, (ys, finite))
    success = jnp.all(finite)
    if throw:
        ys = eqx.error_if(
            ys,
            ~success,
            f"simulate: the state became NaN or inf under {type(method).__name__}; "
            "reduce dt or check the model and params",
        )
    num = jnp.asarray(sum(counts))
    stats = {
        "num_steps": num,
        "num_accepted_steps": num,
        "num_rejected_steps": jnp.zeros_like(num),
        "num_rhs_evals": num * method.rhs_evals_per_step,
    }
    return Solution(ts=ts, ys=ys, stats=stats, success=success)
