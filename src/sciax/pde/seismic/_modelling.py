"""Shot modelling for inversion: the seismograms of every shot of a `Survey` for a velocity model
and a `Wavelet`, batched over shots with `vmap`, checkpointed in time for reverse mode."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ..waves import Leapfrog
from ._survey import Survey
from ._wavelet import Wavelet


def check_step(survey: Survey, wavelet: Wavelet, dt: float, c_max: float | None = None) -> None:
    """`ValueError` if `wavelet` is sampled at another step than `dt`, or `dt` exceeds the stable
    leapfrog step of the velocity `c_max` (m/s; skipped if `None`)."""
    if not math.isclose(wavelet.dt, dt, rel_tol=1e-9):
        raise ValueError(
            f"model_shots: the wavelet is sampled at dt={wavelet.dt:g} s, but the modelling step is "
            f"dt={dt:g} s; resample the wavelet"
        )
    if c_max is not None:
        limit = float(survey.model.leapfrog_stable_dt({"c": jnp.asarray(c_max)}))
        if dt > limit:
            raise ValueError(
                f"model_shots: dt={dt:g} s exceeds the stable leapfrog step {limit:.6g} s for velocity {c_max:g} m/s"
            )


def _shot(survey: Survey, c, source, samples, dt: float, checkpoint: int, energy: bool):
    """One shot: `(seismogram (T + 1, R), source-wavefield energy sum_t p^2 or None)`."""
    model, method = survey.model, Leapfrog(dt, checkpoint=None)
    coefficients = method.prepare(model, {"c": c})  # no "source": the wavelet is injected below
    zeros = jnp.zeros(model.grid.shape, c.dtype)
    state = method.init(model, {"p": zeros, "v": zeros}, coefficients)
    index = tuple(source)
    scale = dt**2 * 4 * math.pi * c[index] ** 2

    def step(carry, inputs):
        state, acc = carry
        t, w = inputs
        state = method.step(model, state, t, coefficients)
        state = state._replace(p=state.p.at[index].add(scale * w))
        acc = acc + jax.lax.stop_gradient(state.p) ** 2 if energy else acc
        return (state, acc), model.record(state.p)

    n = samples.shape[0]
    n_blocks = n // checkpoint
    times = jnp.arange(n, dtype=c.dtype) * dt

    @jax.checkpoint
    def block(carry, inputs):
        return jax.lax.scan(step, carry, inputs)

    acc0 = zeros if energy else jnp.zeros((), c.dtype)
    full = n_blocks * checkpoint
    blocks = (times[:full].reshape(n_blocks, checkpoint), samples[:full].reshape(n_blocks, checkpoint))
    carry, traces = jax.lax.scan(block, (state, acc0), blocks)
    (_, acc), rest = jax.lax.scan(step, carry, (times[full:], samples[full:]))
    first = model.record(zeros)[None]
    traces = jnp.concatenate([first, traces.reshape(full, first.shape[-1]), rest])
    return traces, (acc if energy else None)


def model_shots(
    survey: Survey,
    c: Float[ArrayLike, "..."],
    wavelet: Wavelet,
    dt: float,
    *,
    checkpoint: int = 32,
    energy: bool = False,
) -> Float[Array, "shots T1 R"] | tuple[Float[Array, "shots T1 R"], Float[Array, "..."]]:
    """The seismograms of every shot of `survey` in the velocity model `c` (m/s, `grid.shape`).

    Each shot injects `4 pi c^2 wavelet.samples[k]` at its source on the step from `t = k dt`
    (as `AcousticWave` does for its Ricker source; the same seismograms as `sciax.simulate`
    with `Leapfrog(dt)` when the wavelet is that Ricker wavelet) and records the pressure at
    the receivers at `t = 0, dt, ..., n dt` (`n = wavelet.n_steps`): shape
    `(n_shots, n + 1, n_receivers)`. Shots run batched (`jax.vmap`); the time loop is
    checkpointed in blocks of `checkpoint` steps, so reverse-mode memory is about
    `n / checkpoint + checkpoint` wavefields per shot. Differentiable in `c` and the wavelet.

    `energy=True` also returns the source-wavefield energy `sum_shots sum_t p^2` (grid-shaped,
    not differentiated), the illumination that `illumination_preconditioner` uses.
    Raises `ValueError` if the wavelet's `dt` differs from `dt`, or (concrete `c`) if `dt` is not stable.
    """
    c = jnp.asarray(c)
    if c.shape != survey.model.grid.shape:
        raise ValueError(f"model_shots: c has shape {c.shape}, but the grid has shape {survey.model.grid.shape}")
    if not (isinstance(checkpoint, int) and checkpoint >= 1):
        raise ValueError(f"model_shots: checkpoint must be an int >= 1 (steps per block), got {checkpoint!r}")
    check_step(survey, wavelet, dt, None if isinstance(c, jax.core.Tracer) else float(jnp.max(c)))
    return _model(survey, c, wavelet.samples.astype(c.dtype), dt, checkpoint, energy)


# Compiled once per survey, shapes, step and options: repeated calls (data, gathers before and
# after an inversion) reuse it.
@eqx.filter_jit
def _model(survey, c, samples, dt, checkpoint, energy):
    run = jax.vmap(lambda s: _shot(survey, c, s, samples, dt, checkpoint, energy))
    traces, acc = run(survey.sources)
    return (traces, jnp.sum(acc, axis=0)) if energy else traces
