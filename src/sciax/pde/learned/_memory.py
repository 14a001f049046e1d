"""Memory for learned coarse models: lagged fields `dlag/dt = (u - lag) / tau` (a Markovian embedding
of an exponential memory kernel, in the spirit of the Mori-Zwanzig formalism: the exact dynamics of
coarse-grained variables depend on their past), and `lagged`, the lags along a sampled trajectory
for training (see `ForcedBurgers(memory=...)`)."""

from __future__ import annotations

import math

import numpy as np
from jaxtyping import Array, Float


def check_memory(memory) -> tuple[float, ...]:
    """`memory` as a tuple of time constants, each a finite number > 0 (`ValueError` otherwise)."""
    taus = (memory,) if isinstance(memory, (int, float, np.integer, np.floating)) else memory
    ok = isinstance(taus, (tuple, list)) and all(
        isinstance(t, (int, float, np.integer, np.floating)) and not isinstance(t, bool) and math.isfinite(t) and t > 0
        for t in taus
    )
    if not ok:
        raise ValueError(f"memory must be a time constant > 0 or a tuple of them (time units), got {memory!r}")
    return tuple(float(t) for t in taus)


def lagged(
    u: Float[Array, "... T n"], ts: Float[Array, " T"], memory: float | tuple[float, ...]
) -> Float[Array, "... T k n"]:
    """The lagged fields of `ForcedBurgers(memory=...)` along a trajectory `u` sampled at the uniform
    times `ts` (e.g. a coarse-grained reference): `dlag_j/dt = (u - lag_j) / tau_j` from `lag_j = u`
    at `ts[0]`, integrated exactly for `u` linear between samples,
    `lag(t + h) = a lag(t) + (1 - a) u(t) + (1 - tau (1 - a) / h) (u(t + h) - u(t))`, `a = exp(-h / tau)`.
    A trajectory longer than a few `tau` before the first time used forgets the start. NumPy
    (training data); `ValueError` for non-uniform `ts` or a `u` not sampled at them."""
    taus = check_memory(memory)
    u, ts = np.asarray(u), np.asarray(ts, dtype=np.float64)
    steps = np.diff(ts) if ts.ndim == 1 and len(ts) >= 2 else np.zeros(1)
    if steps[0] <= 0 or u.ndim < 2 or u.shape[-2] != len(ts) or not np.allclose(steps, steps[0]):
        raise ValueError(
            f"lagged: ts must be uniform output times (at least two) and u of shape (..., len(ts), n); got ts of "
            f"shape {ts.shape}, u of shape {u.shape}"
        )
    h = float(steps[0])
    lags = np.empty((*u.shape[:-1], len(taus), u.shape[-1]), u.dtype)
    for j, tau in enumerate(taus):
        a = math.exp(-h / tau)
        lag = u[..., 0, :]
        lags[..., 0, j, :] = lag
        for k in range(len(ts) - 1):
            lag = a * lag + (1 - a) * u[..., k, :] + (1 - tau * (1 - a) / h) * (u[..., k + 1, :] - u[..., k, :])
            lags[..., k + 1, j, :] = lag
    return lags
