"""The adjoint-state gradient of one shot: a `jax.custom_vjp` over the whole time loop whose backward
pass runs the discrete adjoint of the leapfrog step backwards in time, the wavefield recomputed
block by block from checkpoints.

The step `S+ = A S + e_src scale(c) w_t` (state `S = (p, p_prev, CPML memory)`) is linear in `S` for
a fixed model, so its transpose `A^T` needs no residuals (`transposed_step`: written out, two fused
passes per axis like the forward step, rather than JAX's transpose of the padded stencils); the
model enters only through `kappa = rho c^2` (as `p+ += dt^2 kappa D(S)`, `D` the divergence with its
CPML terms) and through the source scale. With `lambda_t` the adjoint state after step `t` (`lambda = A^T lambda+ +
R^T dJ/dtrace`), `dJ/dkappa = sum_t dt^2 lambda_{t+1,p} D(S_t)` and `dJ/dw_t = lambda_{t+1,p}[src]
scale(c)`: the discrete adjoint, so the gradient equals reverse-mode autodiff of the same loop to
round-off (Plessix, Geophys. J. Int. 167 (2006) 495, for the method; here the discrete, not the
continuous, adjoint). Cost: one forward pass with checkpoints, then per step one recomputed step
and one adjoint step, with only one block's divergence fields stored at a time (measured 3.6-4.0x
the forward at 500 x 500 x 2,000 steps, float32, 2-core CPU at load 4-5; the ideal is about 3).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..waves import Leapfrog
from ._adjoint_step import transposed_step


def _blocks(x, n_blocks: int, size: int):
    """`x` (leading axis `n`) zero-padded to `n_blocks * size` and reshaped to `(n_blocks, size, ...)`."""
    pad = n_blocks * size - x.shape[0]
    x = jnp.concatenate([x, jnp.zeros((pad,) + x.shape[1:], x.dtype)]) if pad else x
    return x.reshape((n_blocks, size) + x.shape[1:])


def _setup(model, method, c, source):
    """The coefficients (no `"source"`: the wavelet is injected by the loops here), the zero start
    state and the source index."""
    coefficients = method.prepare(model, {"c": c})
    zeros = jnp.zeros(model.grid.shape, c.dtype)
    return coefficients, method.init(model, {"p": zeros, "v": zeros}, coefficients), tuple(source)


def _source_scale(dt: float, c, index):
    return dt**2 * 4 * math.pi * c[index] ** 2


def shot_forward(model, dt: float, checkpoint: int, energy: bool, c, samples, source, *, keep=False, remat=False):
    """One shot's forward run: `(traces (T + 1, R), energy sum_t p^2 (grid-shaped; 0 without energy),
    the state at the start of every block of checkpoint steps (keep) or None)`.

    `Leapfrog`'s step, the wavelet injected at the source after it; blocks of `checkpoint` steps (the
    last one padded with silent steps that add no energy and whose traces are dropped), each under
    `jax.checkpoint` if `remat` (JAX's reverse mode then stores only the blocks' start states).
    """
    method = Leapfrog(dt, checkpoint=None)
    coefficients, state, index = _setup(model, method, c, source)
    scale = _source_scale(dt, c, index)
    zeros = jnp.zeros(model.grid.shape, c.dtype)

    def step(carry, inputs):
        state, acc = carry
        t, w, live = inputs
        state = method.step(model, state, t, coefficients)
        state = state._replace(p=state.p.at[index].add(scale * w))
        acc = acc + live * jax.lax.stop_gradient(state.p) ** 2 if energy else acc
        return (state, acc), model.record(state.p)

    def block(carry, inputs):
        state, unroll = method.loop_state(model, carry[0])
        (state, acc), traces = jax.lax.scan(step, (state, carry[1]), inputs, unroll=unroll)
        return (method.loop_result(model, state), acc), (traces, carry[0] if keep else None)

    n = samples.shape[0]
    n_blocks = -(-n // checkpoint)
    times = jnp.arange(n_blocks * checkpoint, dtype=c.dtype) * dt
    live = _blocks(jnp.ones(n, c.dtype), n_blocks, checkpoint)
    inputs = (times.reshape(n_blocks, checkpoint), _blocks(samples, n_blocks, checkpoint), live)
    acc0 = zeros if energy else jnp.zeros((), c.dtype)
    (_, acc), (traces, saved) = jax.lax.scan(jax.checkpoint(block) if remat else block, (state, acc0), inputs)
    first = model.record(zeros)[None]
    traces = jnp.concatenate([first, traces.reshape(-1, first.shape[-1])[:n]])
    return traces, acc, saved


def adjoint_shot(survey, dt: float, checkpoint: int, energy: bool):
    """`shot(c, samples, source) -> (traces (T + 1, R), energy or 0)` with an adjoint-state VJP in `c`
    and `samples` (`source`: integer grid indices, not differentiated; energy: not differentiated)."""
    model, method = survey.model, Leapfrog(dt, checkpoint=None)

    def forward(c, samples, source, keep: bool):
        return shot_forward(model, dt, checkpoint, energy, c, samples, source, keep=keep)

    @jax.custom_vjp
    def shot(c, samples, source):
        traces, acc, _ = forward(c, samples, source, keep=False)
        return traces, acc

    def shot_fwd(c, samples, source):
        traces, acc, saved = forward(c, samples, source, keep=True)
        return (traces, acc), (c, samples, source, saved)

    def shot_bwd(residuals, cotangents):
        c, samples, source, saved = residuals
        d_traces = cotangents[0]  # the energy is not differentiated
        coefficients, state0, index = _setup(model, method, c, source)
        operator, scale = coefficients.operator, _source_scale(dt, c, index)

        n = samples.shape[0]
        n_blocks = -(-n // checkpoint)
        times = jnp.arange(n_blocks * checkpoint, dtype=c.dtype).reshape(n_blocks, checkpoint) * dt
        w_blocks = _blocks(samples, n_blocks, checkpoint)
        g_blocks = _blocks(d_traces[1:], n_blocks, checkpoint)

        def recompute(carry, inputs):
            # Each step's divergence goes into a buffer carried across blocks and is read back from it:
            # as a scan output XLA computes it twice (for the output and for the step).
            state, divs = carry
            i, t, w = inputs
            div, memory = model.acceleration(t, state.p, state.memory, operator._replace(kappa=1.0))
            divs = jax.lax.dynamic_update_index_in_dim(divs, div, i, 0)
            div = jax.lax.dynamic_index_in_dim(divs, i, 0, keepdims=False)
            p_next = 2 * state.p - state.p_prev + dt**2 * (operator.kappa * div)
            return (type(state)(p_next.at[index].add(scale * w), state.p, memory), divs), None

        def adjoint(carry, inputs):
            # `a`: the cotangent of the pressure after this step; `a_prev`: minus that of the pressure
            # before it, so that `a` steps backwards by the leapfrog recursion (`transposed_step`).
            a, a_prev, memory, g_kappa, g_scale = carry
            div, w, g = inputs
            # In place at the receivers (on a whole grid): no pass over the grid.
            a = model.add_at_receivers(a, g)
            g_kappa = g_kappa + a * div
            at_source = a[index]
            a_next, memory = transposed_step(model, operator, dt, a, a_prev, memory)
            return (a_next, a, memory, g_kappa, g_scale + at_source * w), at_source * scale

        def block(carry, inputs):
            carry, divs = carry
            start, t, w, g = inputs
            steps = jnp.arange(checkpoint)
            (_, divs), _ = jax.lax.scan(recompute, (start, divs), (steps, t, w), unroll=Leapfrog.scan_unroll)
            adjoint_i = lambda carry, inputs: adjoint(carry, (divs[inputs[0]],) + inputs[1:])  # noqa: E731
            carry, d_w = jax.lax.scan(adjoint_i, carry, (steps, w, g), reverse=True, unroll=Leapfrog.scan_unroll)
            return (carry, divs), d_w

        zero, zeros = jnp.zeros((), c.dtype), jnp.zeros(model.grid.shape, c.dtype)
        memory0 = jax.tree_util.tree_map(jnp.zeros_like, state0.memory)
        carry0 = ((zeros, zeros, memory0, zeros, zero), jnp.zeros((checkpoint,) + model.grid.shape, c.dtype))
        (carry, _), d_w = jax.lax.scan(block, carry0, (saved, times, w_blocks, g_blocks), reverse=True)
        g_kappa, g_scale = carry[3], carry[4]
        # The chain rule through kappa = rho c^2 and the source scale 4 pi dt^2 c[src]^2.
        _, pull_kappa = jax.vjp(lambda c: method.prepare(model, {"c": c}).operator.kappa, c)
        _, pull_scale = jax.vjp(lambda c: _source_scale(dt, c, index), c)
        d_c = pull_kappa(dt**2 * g_kappa)[0] + pull_scale(g_scale)[0]
        return d_c, d_w.reshape(-1)[:n].astype(samples.dtype), None

    shot.defvjp(shot_fwd, shot_bwd)
    return shot
