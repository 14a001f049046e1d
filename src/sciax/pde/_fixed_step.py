"""The fixed-step driver: `AbstractFixedStepMethod` (the protocol every fixed-step method follows)
and `AbstractFixedStep` (its face for methods stepping a model's state: RK4, Leapfrog, the
implicit steppers).

The driver runs `lax.scan` over steps of size `dt` between output times, checks the stable step
before the run and finiteness after it, checkpoints blocks of steps for reverse mode and fills
`stats`. A method answers five questions, each a hook declared once below:

- `setup(model, y0, params)`: what the steps need, computed once outside the time loop;
- `start(model, y0, t0, prepared)`: the carried state at `ts[0]`;
- `advance(model, carry, t, prepared)`: one step of size `dt` from `t`;
- `output(model, carry, prepared, save)`: what is saved at an output time;
- `stable_dt(model, params)`: the largest stable step (or `None`).

The spectral steppers (`AbstractSpectralStepper`) answer them in Fourier space; their own
`init`/`step` are the scheme in Fourier coefficients, hence the driver's distinct hook names.
"""

from __future__ import annotations

import abc
import functools
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree, Real

from .._checks import agreed, error_if_tied
from .._method import AbstractMethod
from .._solution import Solution
from .._step_counts import step_counts


class AbstractFixedStepMethod(AbstractMethod):
    """A method taking steps of one size `dt`, run by the fixed-step driver (`solve`).

    **Fields:** `dt` (time units, a Python number, static); `checkpoint`: steps per
    block recomputed in the backward pass (`jax.checkpoint`), or `None` to store
    every step.

    **Class variables:** `rhs_evals_per_step` (for `stats`), `startup_evals` (evaluations
    made by `start`), `scan_unroll` (steps per iteration of the compiled time loop).
    """

    dt: eqx.AbstractVar[float]
    checkpoint: eqx.AbstractVar[int | None]
    rhs_evals_per_step: eqx.AbstractVar[int]
    startup_evals: ClassVar[int] = 0
    # Two lets a method whose carry holds the state at two times (leapfrog) overwrite the older
    # one in place on both steps: no copy of the fields.
    scan_unroll: ClassVar[int] = 1
    options: ClassVar[tuple[str, ...]] = ("save", "throw")

    # ---- the protocol ----------------------------------------------------------------------------
    def check_model(self, model) -> None:
        """`TypeError` unless this method can step `model` (default: any model)."""

    def stable_dt(self, model, params) -> Array | None:
        """The largest stable step for `model` with `params`, or `None` if unknown (no check)."""
        return None

    def unstable_message(self, model, limit: float | None) -> str:
        """The error for `dt` above `limit` (`None`: the limit is only known at run time)."""
        name = type(self).__name__
        if limit is None:
            return f"simulate: {name} dt exceeds the CFL limit (largest stable dt is smaller)"
        return (
            f"simulate: {name}(dt={self.dt}) violates the CFL condition for {type(model).__name__}; "
            f"the largest stable dt is {limit:.6g}"
        )

    def nonfinite_message(self) -> str:
        """The error for a state that became NaN or inf."""
        return (
            f"simulate: the state became NaN or inf under {type(self).__name__}; "
            "reduce dt or check the model and params"
        )

    def step_reach(self, model) -> int | None:
        """How many points past a point one step reads along any grid axis, or `None` if unknown
        (sets the halo of `sciax.parallel.shard(..., halo_every=k)`)."""
        return None

    @abc.abstractmethod
    def setup(self, model, y0, params) -> PyTree:
        """What `start`, `advance` and `output` receive as `prepared`: computed once per solve."""

    @abc.abstractmethod
    def start(self, model, y0, t0: Array, prepared) -> PyTree:
        """The carried state at `ts[0]`."""

    @abc.abstractmethod
    def advance(self, model, carry, t: Array, prepared) -> PyTree:
        """Advance `carry` from time `t` by `dt`."""

    @abc.abstractmethod
    def output(self, model, carry, prepared, save) -> PyTree:
        """The saved output at an output time."""

    def initial_output(self, model, y0, carry, prepared, save) -> PyTree | None:
        """The output at `ts[0]` if it is not `output` of the first carry (e.g. `y0` itself), else `None`."""
        return None

    def loop_state(self, model, carry) -> tuple[PyTree, int]:
        """`(carry, unroll)` for one compiled time loop: the carry as the loop runs it (e.g. with a
        spare buffer for `advance` to write into) and the steps per loop iteration; `loop_result`
        undoes the former. Default: the carry as it is and `scan_unroll`."""
        return carry, self.scan_unroll

    def loop_result(self, model, carry) -> PyTree:
        """The carry after a time loop, as `start` and `advance` give it (see `loop_state`)."""
        return carry

    # ---- the driver ------------------------------------------------------------------------------
    def check_stable_step(self, model, params, y0=None):
        """`ValueError` if `dt > stable_dt(model, params)` (a concrete limit). A traced limit is
        checked at run time on `y0` (`equinox.error_if`), which is returned; with `y0=None` a
        traced limit is left unchecked (`sciax.parallel` checks it on each block)."""
        limit = self.stable_dt(model, params)
        if limit is None:
            return y0
        if not isinstance(limit, jax.core.Tracer):
            if not self.dt <= float(limit):
                raise ValueError(self.unstable_message(model, float(limit)))
            return y0
        if y0 is None:
            return None
        message = self.unstable_message(model, None)
        return jax.tree_util.tree_map(lambda a: error_if_tied(a, self.dt > limit, message), y0)

    def solve(self, model, y0, ts: Real[Array, " T"], params, *, save: Any = None, throw: bool = True) -> Solution:
        """Run from `ts[0]` with steps `dt`, saving at every `ts` (each interval a whole number of steps).

        `save`: method-specific selection of outputs (see `Leapfrog`); `throw`: raise
        (`equinox.error_if`) on a non-finite state. Raises `ValueError` if `dt`
        exceeds the stable step (at run time under jit when `params` are traced).
        Differentiable in `y0` and `params` (reverse mode uses `checkpoint`).
        """
        self.check_model(model)
        model.check_state(y0, "y0")
        counts = step_counts(type(self).__name__, ts, self.dt)
        y0 = self.check_stable_step(model, params, y0)
        options = () if _traced(model, y0, params) else tuple(sorted(self.compiler_options(model).items()))
        run = _compiled_run(options)
        return run(self, model, y0, jnp.asarray(ts), params, counts, save, bool(throw))


class AbstractFixedStep(AbstractFixedStepMethod):
    """A fixed-step method on a model's state; concrete methods say how to start, step, observe and
    how large `dt` may be.

    **Fields:** `dt` (time units, a Python number, static); `checkpoint`: steps per
    block recomputed in the backward pass (`jax.checkpoint`), so reverse-mode
    memory is about `(steps / checkpoint + checkpoint)` states instead of one per
    step; `None` stores every step.
    """

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

    def prepare(self, model, params) -> PyTree:
        """What `step` and `observe` receive as `params`: computed once, outside the time loop."""
        return params

    def setup(self, model, y0, params):
        return self.prepare(model, params)

    def start(self, model, y0, t0, prepared):
        return self.init(model, y0, prepared)

    def advance(self, model, carry, t, prepared):
        return self.step(model, carry, t, prepared)

    def output(self, model, carry, prepared, save):
        return self.observe(model, carry, prepared, save)


def _size(tree) -> int:
    return sum(a.size for a in jax.tree_util.tree_leaves(tree))


def _traced(*trees) -> bool:
    """Whether `simulate` runs inside a transformation: XLA takes compiler options from the outermost jit only,
    and JAX refuses them on a nested one (also where `jax.grad` traces the run, jax 0.10.2), so there the
    caller's jit decides (`sciax.compiler_options`). Under `jax.jit` even a new constant is a tracer; under
    `grad` or `vmap` the inputs are."""
    leaves = jax.tree_util.tree_leaves(trees) + [jnp.zeros(())]
    return any(isinstance(x, jax.core.Tracer) for x in leaves)


@functools.cache
def _compiled_run(options: tuple[tuple[str, Any], ...]):
    """The fixed-step run, compiled with these XLA options (`AbstractMethod.compiler_options`); one jitted
    function per distinct set, so each keeps its own compilation cache."""
    return eqx.filter_jit(_run, compiler_options=dict(options)) if options else eqx.filter_jit(_run)


def _run(method: AbstractFixedStepMethod, model, y0, ts, params, counts, save, throw):
    dt = method.dt
    prepared = method.setup(model, y0, params)
    t_dtype = jnp.result_type(ts.dtype, float)
    uniform = len(set(counts)) == 1
    n_max = max(counts)

    carry = method.start(model, y0, ts[0].astype(t_dtype), prepared)
    given_first = method.initial_output(model, y0, carry, prepared, save)
    # Saving whole fields, the scan writes the initial output too (as interval 0, taking no steps):
    # concatenating it afterwards would copy all of ys once more. Small outputs (seismograms) are
    # concatenated instead: the cond doubles what reverse mode stores per interval.
    in_place = given_first is None and (
        _size(jax.eval_shape(lambda c: method.output(model, c, prepared, save), carry)) * 4 >= _size(carry)
    )

    def one(carry, t):
        return method.advance(model, carry, t, prepared), None

    def loop(c, times):
        c, unroll = method.loop_state(model, c)
        return method.loop_result(model, jax.lax.scan(one, c, times, unroll=unroll)[0])

    def steps(carry, t0, n_steps, n_live=None):
        """`n_steps` steps from `t0` (the first `n_live` only, if given), checkpointed in blocks."""
        times = t0 + jnp.arange(n_steps, dtype=t_dtype) * dt
        if n_live is not None:

            def masked(c, jt):
                j, t = jt
                new = method.advance(model, c, t, prepared)
                return jax.tree_util.tree_map(lambda a, b: jnp.where(j < n_live, a, b), new, c), None

            return jax.lax.scan(masked, carry, (jnp.arange(n_steps), times))[0]
        block = method.checkpoint
        if block is None or n_steps <= block:
            return loop(carry, times)
        n_blocks, rest = divmod(n_steps, block)

        @jax.checkpoint
        def run_block(c, tb):
            return loop(c, tb), None

        carry = jax.lax.scan(run_block, carry, times[: n_blocks * block].reshape(n_blocks, block))[0]
        return loop(carry, times[n_blocks * block :]) if rest else carry

    def finite(out):
        # Checked while the output is in cache; x * 0 is 0 unless x is inf or NaN, and a sum is a
        # cheaper reduction than all(isfinite(x)).
        return jnp.isfinite(sum(jnp.sum(a * 0) for a in jax.tree_util.tree_leaves(out)))

    def observe(carry):
        out = method.output(model, carry, prepared, save)
        return out, finite(out)

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
        first = observe(carry) if given_first is None else (given_first, finite(given_first))
    checkpoint = method.checkpoint
    group = checkpoint // n_max if (uniform and checkpoint and n_max < checkpoint) else 1
    n_int = len(t0s)
    if group > 1 and n_int > group:
        # Short intervals: checkpoint groups of `group` intervals rather than single ones.
        n_groups = n_int // group

        @jax.checkpoint
        def run_group(c, inputs):
            return jax.lax.scan(interval, c, inputs)

        k = n_groups * group
        grouped = tuple(x[:k].reshape(n_groups, group) for x in (t0s, ns, lives))
        carry, (ys, ok) = jax.lax.scan(run_group, carry, grouped)
        ys, ok = jax.tree_util.tree_map(lambda a: a.reshape((k,) + a.shape[2:]), (ys, ok))
        if k < n_int:
            carry, rest = jax.lax.scan(interval, carry, (t0s[k:], ns[k:], lives[k:]))
            ys, ok = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), (ys, ok), rest)
    else:
        carry, (ys, ok) = jax.lax.scan(interval, carry, (t0s, ns, lives))
    if not in_place:
        ys, ok = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a[None], b]), first, (ys, ok))
    success = jnp.all(ok)
    if throw:
        ys = eqx.error_if(ys, agreed(~success), method.nonfinite_message())
    num = jnp.asarray(sum(counts))
    stats = {
        "num_steps": num,
        "num_accepted_steps": num,
        "num_rejected_steps": jnp.zeros_like(num),
        "num_rhs_evals": num * method.rhs_evals_per_step + method.startup_evals,
    }
    return Solution(ts=ts, ys=ys, stats=stats, success=success)
