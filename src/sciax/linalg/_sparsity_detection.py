"""Find a Jacobian's sparsity pattern numerically, from Jacobian–vector products at random states.

The pattern is the union of the nonzeros of the Jacobian at a few random states
near the one given, each computed exactly by forward mode in chunks of columns
(memory `chunk * n`, time `n` `jvp`s once). An entry that is zero at every probe
(a branch never taken there, a product with a coefficient that happens to vanish)
is missed, so this is a numerical detection, not a symbolic one: for a
finite-difference model prefer the pattern it states (`model.jacobian_sparsity`),
and the stiff solvers check any pattern with a random probe before using it.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jaxtyping import Array, Float


def detect_sparsity(
    fn: Callable[[Float[Array, " n"]], Float[Array, " m"]],
    x: Float[Array, " n"],
    *,
    num_probes: int = 2,
    scale: float = 1e-2,
    chunk: int = 512,
    seed: int = 0,
) -> sp.csr_matrix:
    """The structural nonzeros of `∂fn/∂x` near `x`, as a boolean scipy CSR matrix of shape `(m, n)`.

    `fn` maps a 1-D array of `n` states to `m` outputs. The Jacobian is evaluated at
    `num_probes` states `x * (1 + scale * u)` (`u` uniform in [-1, 1]; `x` itself
    may contain exact zeros that would hide couplings, so probes also add `scale * u`)
    and the pattern is the union of their nonzeros. Needs concrete `x` (host work).
    """
    x = jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"detect_sparsity: x must be a 1-D array of states, got shape {x.shape}")
    if isinstance(num_probes, bool) or not isinstance(num_probes, int) or num_probes < 1:
        raise ValueError(f"detect_sparsity: num_probes must be an integer >= 1, got {num_probes!r}")
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    compressed = jax.jit(jax.vmap(lambda x, s: jax.jvp(fn, (x,), (s,))[1], in_axes=(None, 0)))
    rows, cols = [], []
    for _ in range(num_probes):
        u = jnp.asarray(rng.uniform(-1.0, 1.0, n), x.dtype)
        probe = x * (1 + scale * u) + scale * u
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            seeds = jnp.zeros((chunk, n), x.dtype).at[np.arange(stop - start), np.arange(start, stop)].set(1.0)
            block = np.asarray(compressed(probe, seeds))[: stop - start]  # (columns, m)
            col, row = np.nonzero(block)
            rows.append(row)
            cols.append(col + start)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    m = int(jax.eval_shape(fn, x).shape[0])
    out = sp.csr_matrix((np.ones(rows.size, bool), (rows, cols)), shape=(m, n), dtype=bool)
    out.sum_duplicates()
    return out


__all__ = ["detect_sparsity"]
