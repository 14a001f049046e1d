"""Why a diffrax solve failed, and errors that say so with the numbers and a fix.

`diagnose` runs inside the compiled solve and returns a `FailureReport` (what went
wrong, the time reached, the first non-finite component). Outside any trace the
report is concrete and `raise_if_failed` raises one Python exception whose first
line carries the budget, the times and the remedy. Under `jax.jit`/`vmap`/`grad`
equinox's `error_if` raises instead; its messages are fixed at trace time, so they
carry what is static (the budget, a concrete end time) and point to
`sol.stats["t_reached"]` for the rest.

An adaptive controller rejects a step whose error estimate is NaN and retries a
smaller one, so a right-hand side that turns NaN looks like "reached max_steps".
`diagnose` tells the two apart by evaluating the right-hand side where the solve
stopped and just after it: one extra (vmapped) evaluation, only when the solve failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, PyTree

OK, MAX_STEPS, STEP_COLLAPSE, NONFINITE, LINEAR, NONFINITE_RHS = range(6)

# Probe times after the time reached, as fractions of the span (plus the next float).
_PROBE_FRACTIONS = (1e-12, 1e-9, 1e-6)
# A state this many times larger than at the start (and than 1) counts as a blow-up.
_BLOW_UP = 1e8


class FailureReport(eqx.Module):
    """`code` (0 = success), `t_reached` (where the solve stopped, or where the state
    first became non-finite), `t_bad` (where the right-hand side was found non-finite),
    `index` (flat index of the first non-finite component, -1 if none), and the largest
    `|y|` where the solve stopped and at the start (`y_max`, `y0_max`; 0 on success)."""

    code: Array
    t_reached: Array
    t_bad: Array
    index: Array
    y_max: Array
    y0_max: Array


def failure_code(result: diffrax.RESULTS, y_final) -> Array:
    """0 when the solve succeeded (or stopped at an event), otherwise one of the codes above."""
    R = diffrax.RESULTS
    ok = (result == R.successful) | (result == R.event_occurred)
    collapse = (
        (result == R.dt_min_reached) | (result == R.nonlinear_divergence) | (result == R.nonlinear_max_steps_reached)
    )
    linear = (result == R.singular) | (result == R.breakdown) | (result == R.nonfinite_input)
    return jnp.select(
        [ok & _finite(y_final), result == R.max_steps_reached, collapse, ok | (result == R.nonfinite), linear],
        [OK, MAX_STEPS, STEP_COLLAPSE, NONFINITE, LINEAR],
        default=STEP_COLLAPSE,
    )


def _finite(tree) -> Array:
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]))


def _first_nonfinite(tree) -> Array:
    flat, _ = ravel_pytree(tree)
    bad = ~jnp.isfinite(flat)
    return jnp.where(jnp.any(bad), jnp.argmax(bad), -1)


def diagnose(code, rhs: Callable, params, ts, ys, t_final, y_final) -> FailureReport:
    """Refine `code` and locate the failure (see the module docstring). Diagnostic only:
    nothing here is differentiated."""
    t_final, y_final, ys, params = jax.lax.stop_gradient((t_final, y_final, ys, params))
    code = code.astype(jnp.int32)
    ts = jnp.asarray(ts)
    t_end = ts[-1]
    stuck = (code == MAX_STEPS) | (code == STEP_COLLAPSE) | (code == LINEAR)

    def probe():
        # Where the solve stopped, then a little later at the same state, then a little
        # further along f (roughly where the rejected steps evaluated it).
        span = jnp.abs(t_end - ts[0])
        deltas = jnp.stack([jnp.zeros_like(span), *(f * span for f in _PROBE_FRACTIONS)]).astype(t_final.dtype)
        times = jnp.minimum(t_final + deltas, t_end).at[1].set(jnp.nextafter(t_final, t_end))
        f0 = rhs(t_final, y_final, params)

        def along(delta):
            return jax.tree_util.tree_map(lambda y, f: y + delta * f, y_final, f0)

        times = jnp.concatenate([times, times[1:]])
        states = jax.vmap(along)(jnp.concatenate([jnp.zeros_like(deltas), deltas[1:]]))
        outs = jax.vmap(lambda t, y: rhs(t, y, params))(times, states)
        bad = jax.vmap(lambda out: ~_finite(out))(outs)
        k = jnp.argmax(bad)
        index = _first_nonfinite(jax.tree_util.tree_map(lambda leaf: leaf[k], outs))
        return jnp.any(bad), times[k], index

    def state_row():
        rows = jax.vmap(lambda *leaves: ~_finite(leaves))(*jax.tree_util.tree_leaves(ys))
        row = jnp.argmax(rows)
        index = _first_nonfinite(jax.tree_util.tree_map(lambda leaf: leaf[row], ys))
        return ts[row], index

    def investigate():
        rhs_bad, t_bad, rhs_index = probe()
        t_row, state_index = state_row()
        new_code = jnp.where(stuck & rhs_bad, NONFINITE_RHS, code)
        t_reached = jnp.where(code == NONFINITE, t_row, t_final)
        index = jnp.where(new_code == NONFINITE_RHS, rhs_index, jnp.where(code == NONFINITE, state_index, -1))
        growth = _max_abs(y_final), _max_abs(jax.tree_util.tree_map(lambda leaf: leaf[0], ys))
        return new_code.astype(jnp.int32), t_reached, t_bad, index.astype(jnp.int32), *growth

    def fine():
        zero = jnp.zeros((), t_final.dtype)
        return code, t_final, t_final, jnp.array(-1, jnp.int32), zero, zero

    # unvmap_any keeps the cond a real branch under vmap: nothing extra runs when no member failed.
    code, t_reached, t_bad, index, y_max, y0_max = jax.lax.cond(eqxi.unvmap_any(code != OK), investigate, fine)
    return FailureReport(code=code, t_reached=t_reached, t_bad=t_bad, index=index, y_max=y_max, y0_max=y0_max)


def unlocated(code, ts) -> FailureReport:
    """The report of a solve that did not save its final state: the last output time reached
    stands for the time reached, and nothing else is located (a re-run does that)."""
    t_reached = jnp.max(jnp.where(jnp.isfinite(ts), ts, -jnp.inf), axis=-1)
    zero = jnp.zeros_like(t_reached)
    index = jnp.full(jnp.shape(code), -1, jnp.int32)
    return FailureReport(
        code=code.astype(jnp.int32), t_reached=t_reached, t_bad=t_reached, index=index, y_max=zero, y0_max=zero
    )


def _max_abs(tree) -> Array:
    return jnp.max(jnp.stack([jnp.max(jnp.abs(leaf)) for leaf in jax.tree_util.tree_leaves(tree)])).real


def component_name(y0: PyTree, index: int, names: Sequence[str] | None) -> str:
    """`y[1] ('I')`-style name of flat component `index` of a state shaped like `y0`."""
    offset = 0
    for path, leaf in jax.tree_util.tree_flatten_with_path(y0)[0]:
        size = int(np.size(leaf))
        if index < offset + size:
            shape = np.shape(leaf)
            where = "y" + jax.tree_util.keystr(path)
            if shape:
                where += "[" + ", ".join(str(int(i)) for i in np.unravel_index(index - offset, shape)) + "]"
            if names is not None and len(shape) == 1 and len(names) == shape[0] and not path:
                where += f" ({names[index - offset]!r})"
            return where
        offset += size
    return f"component {index}"


def describe(report: FailureReport, *, max_steps: int, t_end: float, steps: dict, component: str) -> str:
    """The message for one concrete failed solve; its first line says what happened, the
    numbers and the fix."""
    code, t, t_bad = int(report.code), float(report.t_reached), float(report.t_bad)
    rejected = f"{int(steps['num_rejected_steps'])} of {int(steps['num_steps'])} steps were rejected"
    y_max, y0_max = float(report.y_max), float(report.y0_max)
    if code == MAX_STEPS and y_max > _BLOW_UP * max(y0_max, 1.0):
        return (
            f"sciax.simulate: reached max_steps={max_steps} at t = {t:.9g}, before t_end = {t_end:.9g}, while the "
            f"state grew to |y| = {y_max:.3g} (from {y0_max:.3g} at the start): the solution appears to blow up "
            "in finite time near this t, where raising max_steps will not help. Check the model, params and "
            f"y0 ({rejected})."
        )
    if code == MAX_STEPS:
        return (
            f"sciax.simulate: reached max_steps={max_steps} at t = {t:.9g}, before t_end = {t_end:.9g}: raise "
            "max_steps=, or, if the problem is stiff, use a stiff method such as sciax.ode.Rodas5P() or "
            f"sciax.ode.Kvaerno5() ({rejected}; with many rejected or tiny steps the problem is stiff for "
            "this method). If the state blew up, check the model and params."
        )
    if code == NONFINITE_RHS:
        return (
            f"sciax.simulate: the right-hand side returned NaN or inf (first at {component}) at t = {t_bad:.9g}, "
            f"at or just beyond the finite state reached, so every step was rejected and the step size shrank "
            f"until the solve "
            f"stopped at t = {t:.9g} (t_end = {t_end:.9g}, max_steps={max_steps}). Raising max_steps will not "
            "help: check the model and params near this time (division by zero, sqrt or log of a negative "
            "number, overflow)."
        )
    if code == NONFINITE:
        return (
            f"sciax.simulate: the state became NaN or inf (first at {component}) by t = {t:.9g} (t_end = "
            f"{t_end:.9g}). The solution blew up or the vector field returned non-finite values: check the "
            "model and params, use a smaller dt0 for a fixed-step method, or an adaptive or stiff method "
            "such as sciax.ode.Tsit5() or sciax.ode.Rodas5P()."
        )
    if code == LINEAR:
        return (
            f"sciax.simulate: a linear or nonlinear solve inside an implicit step failed (singular or non-finite "
            f"Jacobian) at t = {t:.9g} (t_end = {t_end:.9g}). Check the model's Jacobian near this time."
        )
    return (
        f"sciax.simulate: the step size collapsed at t = {t:.9g} (t_end = {t_end:.9g}): an implicit stage's "
        "nonlinear solve kept failing or the step fell below its minimum. The problem may be stiff for this "
        "method or ill-posed at this state: try sciax.ode.Rodas5P() or sciax.ode.Kvaerno5(), tighter "
        "rtol/atol, or check the model."
    )


def traced_messages(max_steps: int, t_end: float | None) -> tuple[str, ...]:
    """Messages per code for `equinox.branched_error_if`: fixed at trace time."""
    end = "the last output time" if t_end is None else f"t_end = {t_end:.9g}"
    where = " (sol.stats['t_reached'] gives the time reached with throw=False)"
    return (
        "",
        f"sciax.simulate: reached max_steps={max_steps} before {end}{where}: raise max_steps=, or, if the "
        "problem is stiff (many rejected or tiny steps), use a stiff method such as sciax.ode.Rodas5P() or "
        "sciax.ode.Kvaerno5(). A state that blows up or a right-hand side that returns NaN/inf also uses up "
        "max_steps, and then raising it will not help: call sciax.simulate outside jax.jit/vmap/grad to have "
        "the failure located (time, component, cause).",
        f"sciax.simulate: the step size collapsed before {end}{where} (an implicit stage's nonlinear solve "
        "failed or the step fell below its minimum). The problem may be stiff for this method or ill-posed at "
        "this state: try sciax.ode.Rodas5P() or sciax.ode.Kvaerno5(), tighter rtol/atol, or check the model.",
        f"sciax.simulate: the state became NaN or inf before {end}. The solution blew up or the vector field "
        "returned non-finite values: check the model and params, use a smaller dt0 for a fixed-step method, "
        "or an adaptive/stiff method such as sciax.ode.Rodas5P().",
        f"sciax.simulate: a linear or nonlinear solve inside an implicit step failed (singular or non-finite "
        f"Jacobian) before {end}{where}. Check the model's Jacobian near the failure.",
        f"sciax.simulate: the right-hand side returned NaN or inf from a finite state before {end}{where}, so "
        f"the step size shrank until the solve stopped; raising max_steps={max_steps} will not help: check the "
        "model and params (division by zero, sqrt or log of a negative number, overflow).",
    )


# A nested jit: the error check's host callback then lowers as its own small
# computation, which measurably cuts the compile time of the enclosing solve.
@eqx.filter_jit
def raise_on_failure(x, code: Array, messages: tuple[str, ...]):
    """`equinox.branched_error_if` with a message per failure kind (any member, under vmap)."""
    return eqx.branched_error_if(x, code != OK, code, messages)
