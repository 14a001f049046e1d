"""Fixed steps: `check_dt` and `check_checkpoint` (the configuration of every fixed-step
method) and `step_counts` (how many steps of size `dt` fit each interval of the output times).

Shared by every fixed-step method (the driver `sciax.pde.AbstractFixedStepMethod` runs RK4,
Leapfrog, the implicit steppers and ETDRK/IFRK4/CNAB2), which fix the number of steps at trace
time. Every function takes the method's name first.
"""

from __future__ import annotations

import jax
import numpy as np


def check_dt(name: str, dt) -> float:
    """`dt` as a float: `TypeError` unless a Python/NumPy number (the step is static
    configuration, fixed at trace time), `ValueError` unless finite and > 0."""
    if isinstance(dt, (jax.core.Tracer, bool)) or not isinstance(dt, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: dt must be a Python number (the step is static configuration), got {dt!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"{name}: dt must be > 0 and finite, got dt={dt!r}")
    return float(dt)


def check_checkpoint(name: str, checkpoint) -> int | None:
    """`None` (store every step for reverse mode) or the number of steps per recomputed block, >= 1."""
    if checkpoint is None:
        return None
    if isinstance(checkpoint, bool) or not isinstance(checkpoint, (int, np.integer)) or checkpoint < 1:
        raise ValueError(
            f"{name}: checkpoint must be None or an integer >= 1 (steps per recomputed block), got {checkpoint!r}"
        )
    return int(checkpoint)


def step_counts(name: str, ts, dt: float) -> tuple[int, ...]:
    """Steps per interval of the concrete output times `ts`; `ValueError` unless each is a whole number.

    `name` (the method) goes into the messages. An interval counts as whole when it is within
    `max(1e-6 dt, 1e-9 |interval|, 16 eps max|t|)` of a whole number of steps: output times
    rounded to their dtype (float32 by default) are off by a few ulps of `|t|`.
    """
    if isinstance(ts, jax.core.Tracer):
        raise ValueError(
            f"simulate: {name} needs concrete output times ts (the number of steps per interval is fixed "
            "at trace time); close over ts instead of passing it as a traced argument of jax.jit/vmap"
        )
    ts = np.asarray(ts)
    eps = np.finfo(ts.dtype).eps if np.issubdtype(ts.dtype, np.floating) else 0.0
    ts64 = ts.astype(np.float64)
    diffs = np.diff(ts64)
    counts = np.rint(diffs / dt)
    # Whole to a relative 1e-6 of a step, or to round-off of the interval or of the times themselves.
    tol = np.maximum(
        np.maximum(1e-6 * dt, 1e-9 * np.abs(diffs)), 16 * eps * np.maximum(np.abs(ts64[:-1]), np.abs(ts64[1:]))
    )
    bad = (counts < 1) | (np.abs(counts * dt - diffs) > tol)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise ValueError(
            f"simulate: {name}(dt={dt}) takes fixed steps, so every interval of ts must be a whole "
            f"number of steps; ts[{i + 1}] - ts[{i}] = {float(diffs[i])!r} is {float(diffs[i] / dt)!r} steps. "
            "Choose dt dividing every interval (or ts on a multiple of dt)"
        )
    return tuple(int(c) for c in counts)
