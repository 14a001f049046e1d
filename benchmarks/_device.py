"""The default device's streaming rate, which the GPU figures of the benchmarks are measured against."""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np


def device_copy_bandwidth(dtype=jnp.float32, repeats: int = 5) -> float:
    """Bytes per second of a compiled loop of 100 in-place updates of a 256 MiB array of `dtype` on the default
    device (one read and one write per element, best of `repeats`): the practical streaming rate of a GPU."""
    copies = 100
    x = jnp.ones(2**28 // np.dtype(dtype).itemsize, dtype)
    factor = np.asarray(1.0001, dtype)
    loop = jax.jit(lambda x: jax.lax.fori_loop(0, copies, lambda i, y: y * factor, x))
    return 2 * x.nbytes * copies / best_time(loop, x, repeats=repeats)


def best_time(run, *args, repeats: int, enough: float = 10.0) -> float:
    """Best wall time of `run(*args)` over `repeats` runs after a compiling one; one run if it takes `enough` s."""
    jax.block_until_ready(run(*args))
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(run(*args))
        best = min(best, time.perf_counter() - start)
        if best > enough:
            break
    return best
