"""The per-trajectory ensemble kernel: every member integrates on its own, in one kernel.

Layout: members are the last axis of every input and output (`y0`: `(n, M)`,
each parameter leaf `(size, M)`, `ys`: `(T, n, M)`), so a block of `B`
consecutive members is one contiguous lane vector per state component. One
program integrates one block: an outer loop over the output times and, inside
it, a `while` loop that steps every member still short of the next output time
(its own step size and accept/reject; finished members idle). The whole
integration is one kernel launch and the state never leaves registers between
stages, which is what a vmapped `diffeqsolve` cannot do (one kernel chain per
step for all members in lockstep).

Backends: on a GPU the block is a Pallas program compiled by Triton (`B`
threads, one member each); elsewhere the same lane program is compiled by XLA
with the whole ensemble as one block (`backend="xla"`). `backend="interpret"`
runs the Pallas program through Pallas' interpreter (CPU tests of the GPU code).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._ensemble_rk import MAX_STEPS, OK, STEP_COLLAPSED, select

#: Rows of the integer statistics output.
STAT_ROWS = ("num_steps", "num_rejected_steps", "status")


def _any(mask):
    # An integer max rather than a boolean reduction: Triton lowers it everywhere.
    return jnp.max(mask.astype(jnp.int32)) > 0


def _advance(stepper, state, ctr, params, t_out, t_end, cfg):
    """Step every member still short of `t_out` until all have passed it (or failed)."""

    def active(st, c):
        return (st["t"] < t_out) & (c["status"] == OK)

    def cond(carry):
        return _any(active(*carry))

    def body(carry):
        st, c = carry
        act = active(st, c)
        new, accept, h_next = stepper.step(st, params, t_out, t_end, cfg["rtol"], cfg["atol"])
        st2 = select(act & accept, new, st)
        st2["h"] = lax.select(act, h_next, st["h"])
        steps = c["steps"] + act.astype(jnp.int32)
        rejected = c["rejected"] + (act & ~accept).astype(jnp.int32)
        # Collapsed: the next step could not move t (as diffrax, no minimum step short of that).
        stuck = ~(st2["t"] + h_next > st2["t"])
        status = lax.select(act & stuck, jnp.full_like(c["status"], STEP_COLLAPSED), c["status"])
        status = lax.select(
            act & (steps >= cfg["max_steps"]) & (st2["t"] < t_end), jnp.full_like(status, MAX_STEPS), status
        )
        return st2, dict(steps=steps, rejected=rejected, status=status)

    return lax.while_loop(cond, body, (state, ctr))


def _output(stepper, state, ctr, t_out):
    """The state at `t_out` per member; `inf` for members that stopped short of it."""
    t_out = jnp.full_like(state["t"], t_out)
    reached = (state["t"] >= t_out) & (ctr["status"] == OK)
    y = stepper.output(state, t_out)
    return [jnp.where(reached, v, jnp.inf) for v in y]


def _start(stepper, y0, params, t0, cfg):
    state = stepper.init(t0, y0, params, cfg["rtol"], cfg["atol"], cfg["dt0"])
    zeros = jnp.zeros(t0.shape, jnp.int32)
    return state, dict(steps=zeros, rejected=zeros, status=zeros)


def _finish(state, ctr):
    return ctr["steps"], ctr["rejected"], ctr["status"], state["t"]


def integrate_xla(make_stepper: Callable, y0, params, ts, cfg):
    """The lane program over all `M` members at once, compiled by XLA.

    `y0`: `(n, M)`; `params`: pytree of `(*shape, M)` leaves; `ts`: `(T,)`.
    Returns `ys` `(T, n, M)`, the int statistics `(3, M)` and `t_reached` `(M,)`.
    """
    stepper = make_stepper()
    ts = ts.astype(y0.dtype)  # one dtype for every lane (time included), as in the Pallas program
    lanes = [y0[i] for i in range(y0.shape[0])]
    p = _split_params(params)
    t0 = jnp.full(y0.shape[1:], ts[0], y0.dtype)
    state, ctr = _start(stepper, lanes, p, t0, cfg)

    def save(carry, t_out):
        st, c = _advance(stepper, *carry, p, t_out, ts[-1], cfg)
        return (st, c), jnp.stack(_output(stepper, st, c, t_out))

    (state, ctr), rest = lax.scan(save, (state, ctr), ts[1:])
    ys = jnp.concatenate([y0[None], rest])
    steps, rejected, status, t_reached = _finish(state, ctr)
    return ys, jnp.stack([steps, rejected, status]), t_reached


def integrate_pallas(make_stepper: Callable, y0, params, ts, cfg, *, block: int, interpret: bool, num_warps: int):
    """The same lane program as a Pallas kernel, one program per block of `block` members."""
    from jax.experimental import pallas as pl

    n, members = y0.shape
    leaves, treedef = jax.tree_util.tree_flatten(params)
    shapes = [leaf.shape[:-1] for leaf in leaves]
    flat = [leaf.reshape(-1, members) for leaf in leaves]
    n_t = ts.shape[0]

    def kernel(ts_ref, y0_ref, *refs):
        param_refs, (ys_ref, stats_ref, t_ref) = refs[: len(flat)], refs[len(flat) :]
        lanes = pl.ds(pl.multiple_of(pl.program_id(0) * block, block), block)
        y = [y0_ref[i, lanes] for i in range(n)]
        p_leaves = []
        for ref, shape in zip(param_refs, shapes):
            elems = np.empty(int(math.prod(shape)), dtype=object)
            for j in range(elems.size):
                elems[j] = ref[j, lanes]
            p_leaves.append(elems.reshape(shape))
        p = jax.tree_util.tree_unflatten(treedef, p_leaves)
        stepper = make_stepper()
        t0 = jnp.full((block,), ts_ref[0], y[0].dtype)
        carry = _start(stepper, y, p, t0, cfg)
        for i in range(n):
            ys_ref[0, i, lanes] = y[i]

        def save(k, carry):
            t_out = ts_ref[k]
            st, c = _advance(stepper, *carry, p, t_out, ts_ref[n_t - 1], cfg)
            for i, v in enumerate(_output(stepper, st, c, t_out)):
                ys_ref[k, i, lanes] = v
            return st, c

        state, ctr = lax.fori_loop(1, n_t, save, carry)
        for row, v in enumerate(_finish(state, ctr)[:3]):
            stats_ref[row, lanes] = v
        t_ref[lanes] = state["t"]

    out_shape = (
        jax.ShapeDtypeStruct((n_t, n, members), y0.dtype),
        jax.ShapeDtypeStruct((len(STAT_ROWS), members), jnp.int32),
        jax.ShapeDtypeStruct((members,), y0.dtype),
    )
    options: dict[str, Any] = dict(out_shape=out_shape, grid=(members // block,), interpret=interpret)
    if not interpret:
        from jax.experimental.pallas import triton as pl_triton

        options["compiler_params"] = pl_triton.CompilerParams(num_warps=num_warps, num_stages=1)
    return pl.pallas_call(kernel, **options)(ts.astype(y0.dtype), y0, *flat)


def _split_params(params):
    """Parameter leaves `(*shape, M)` as object arrays of shape `shape` of lane vectors."""

    def split(leaf):
        out = np.empty(leaf.shape[:-1], dtype=object)
        for idx in np.ndindex(out.shape):
            out[idx] = leaf[idx]
        return out

    return jax.tree_util.tree_map(split, params)


__all__ = ["integrate_xla", "integrate_pallas", "STAT_ROWS"]
