"""The adjoint-state gradient of one shot: a `jax.custom_vjp` over the whole time loop whose backward
pass runs the discrete adjoint of the leapfrog step backwards in time, the wavefield recomputed
block by block from checkpoints.

The step `S+ = A S + e_src scale(c) w_t` (state `S = (p, p_prev, CPML memory)`) is linear in `S` for
a fixed model, so its transpose `A^T` needs no residuals; the model enters only through
`kappa = rho c^2` (as `p+ += dt^2 kappa D(S)`, `D` the divergence with its CPML terms) and through
the source scale. With `lambda_t` the adjoint state after step `t` (`lambda = A^T lambda+ +
R^T dJ/dtrace`), `dJ/dkappa = sum_t dt^2 lambda_{t+1,p} D(S_t)` and `dJ/dw_t = lambda_{t+1,p}[src]
scale(c)`: the discrete adjoint, so the gradient equals reverse-mode autodiff of the same loop to
round-off (Plessix, Geophys. J. Int. 167 (2006) 495, for the method; here the discrete, not the
continuous, adjoint). Cost: one forward pass with checkpoints, then per step one recomputed step
and one adjoint step, with only one block's divergence fields stored at a time.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..waves import Leapfrog


def _blocks(x, n_blocks: int, size: int):
    """`x` (leading axis `n`) zero-padded to `n_blocks * size` and reshaped to `(n_blocks, size, ...)`."""
    pad = n_blocks * size - x.shape[0]
    x = jnp.concatenate([x, jnp.zeros((pad,) + x.shape[1:], x.dtype)]) if pad else x
    return x.reshape((n_blocks, size) + x.shape[1:])


def adjoint_shot(survey, dt: float, checkpoint: int, energy: bool):
    """`shot(c, samples, source) -> (traces (T + 1, R), energy or 0)` with an adjoint-state VJP in `c`
    and `samples` (`source`: integer grid indices, not differentiated; energy: not differentiated)."""
    model, method = survey.model, Leapfrog(dt, checkpoint=None)

    def setup(c, source):
        coefficients = method.prepare(model, {"c": c})  # no "source": the wavelet is injected below
        zeros = jnp.zeros(model.grid.shape, c.dtype)
        state = method.init(model, {"p": zeros, "v": zeros}, coefficients)
        return coefficients, state, tuple(source)

    def scale_of(c, index):
        return dt**2 * 4 * math.pi * c[index] ** 2

    def unit_step(state, t, operator):
        """`(state+, D)` without the source: `D = div(grad(p) / rho)` with the layers' terms."""
        div, memory = model.acceleration(t, state.p, state.memory, operator._replace(kappa=1.0))
        p_next = 2 * state.p - state.p_prev + dt**2 * (operator.kappa * div)
        return type(state)(p_next, state.p, memory), div

    def forward(c, samples, source, keep: bool):
        """Traces, energy, and (`keep`) the state at the start of every block of `checkpoint` steps."""
        coefficients, state, index = setup(c, source)
        scale = scale_of(c, index)
        zeros = jnp.zeros(model.grid.shape, c.dtype)

        def step(carry, inputs):
            state, acc = carry
            t, w, live = inputs
            state = method.step(model, state, t, coefficients)
            state = state._replace(p=state.p.at[index].add(scale * w))
            acc = acc + live * state.p**2 if energy else acc  # the padding steps add nothing
            return (state, acc), model.record(state.p)

        def block(carry, inputs):
            out, traces = jax.lax.scan(step, carry, inputs)
            return out, (traces, carry[0] if keep else None)

        n = samples.shape[0]
        n_blocks = -(-n // checkpoint)
        times = jnp.arange(n_blocks * checkpoint, dtype=c.dtype) * dt
        live = _blocks(jnp.ones(n, c.dtype), n_blocks, checkpoint)
        inputs = (times.reshape(n_blocks, checkpoint), _blocks(samples, n_blocks, checkpoint), live)
        acc0 = zeros if energy else jnp.zeros((), c.dtype)
        (_, acc), (traces, saved) = jax.lax.scan(block, (state, acc0), inputs)
        first = model.record(zeros)[None]
        traces = jnp.concatenate([first, traces.reshape(-1, first.shape[-1])[:n]])
        return traces, acc, saved

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
        coefficients, state0, index = setup(c, source)
        operator, scale = coefficients.operator, scale_of(c, index)
        # The step is linear in the state: its pullback at any state (here the zero start) is `A^T`.
        # (Not `linear_transpose`: `materialize`'s predicate reads its operand.)
        _, transpose = jax.vjp(lambda s: unit_step(s, 0.0, operator)[0], state0)
        _, record_t = jax.vjp(model.record, state0.p)
        n = samples.shape[0]
        n_blocks = -(-n // checkpoint)
        times = jnp.arange(n_blocks * checkpoint, dtype=c.dtype).reshape(n_blocks, checkpoint) * dt
        w_blocks = _blocks(samples, n_blocks, checkpoint)
        g_blocks = _blocks(d_traces[1:], n_blocks, checkpoint)

        def recompute(state, inputs):
            t, w = inputs
            state, div = unit_step(state, t, operator)
            return state._replace(p=state.p.at[index].add(scale * w)), div

        def adjoint(carry, inputs):
            lam, g_kappa, g_scale = carry
            div, w, g = inputs
            lam = lam._replace(p=lam.p + record_t(g)[0])  # the cotangent of the state after this step
            g_kappa = g_kappa + lam.p * div
            at_source = lam.p[index]
            (lam,) = transpose(lam)
            return (lam, g_kappa, g_scale + at_source * w), at_source * scale

        def block(carry, inputs):
            start, t, w, g = inputs
            _, divs = jax.lax.scan(recompute, start, (t, w))
            carry, d_w = jax.lax.scan(adjoint, carry, (divs, w, g), reverse=True)
            return carry, d_w

        zero = jnp.zeros((), c.dtype)
        lam0 = jax.tree_util.tree_map(jnp.zeros_like, state0)
        carry0 = (lam0, jnp.zeros(model.grid.shape, c.dtype), zero)
        (_, g_kappa, g_scale), d_w = jax.lax.scan(block, carry0, (saved, times, w_blocks, g_blocks), reverse=True)
        # The chain rule through kappa = rho c^2 and the source scale 4 pi dt^2 c[src]^2.
        _, pull_kappa = jax.vjp(lambda c: method.prepare(model, {"c": c}).operator.kappa, c)
        _, pull_scale = jax.vjp(lambda c: scale_of(c, index), c)
        d_c = pull_kappa(dt**2 * g_kappa)[0] + pull_scale(g_scale)[0]
        return d_c, d_w.reshape(-1)[:n].astype(samples.dtype), None

    shot.defvjp(shot_fwd, shot_bwd)
    return shot
