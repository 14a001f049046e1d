"""Seismogram misfits: least squares and the normalised (correlation) misfit."""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Float


def l2_misfit(synthetic: Float[Array, "... T R"], observed: Float[Array, "... T R"]) -> Float[Array, ""]:
    """`sum (synthetic - observed)^2 / 2` over shots, times and receivers. Differentiable."""
    return 0.5 * jnp.sum((synthetic - observed) ** 2)


def normalized_misfit(
    synthetic: Float[Array, "... T R"], observed: Float[Array, "... T R"], eps: float = 1e-12
) -> Float[Array, ""]:
    """`sum over traces of (1 - <s, d> / (|s| |d|))`: one minus the zero-lag correlation of each
    synthetic trace `s` with its observed trace `d` (time is axis -2).

    Blind to each trace's amplitude (source strength, geometrical spreading, density), it
    fits phases and waveform shapes only, and is less prone to the amplitude-driven cycle
    skipping of `l2_misfit` (the "global correlation" norm of Choi & Alkhalifah 2012,
    Geophysical Prospecting 60, 748). `eps` (relative to the largest trace energy) guards
    silent traces. Differentiable. In `[0, 2]` per trace; 0 for traces equal up to a positive factor.
    """
    ss = jnp.sum(synthetic**2, axis=-2)
    dd = jnp.sum(observed**2, axis=-2)
    sd = jnp.sum(synthetic * observed, axis=-2)
    floor = eps * jnp.maximum(jnp.max(ss), jnp.max(dd))
    return jnp.sum(1.0 - sd / jnp.sqrt((ss + floor) * (dd + floor)))


MISFITS = {"l2": l2_misfit, "normalized": normalized_misfit}
