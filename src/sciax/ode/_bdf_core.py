"""The numerical core of `BDF`: NDF/BDF formulas of orders 1-5 in backward-difference form.

Follows Shampine & Reichelt, "The MATLAB ODE Suite", SIAM J. Sci. Comput. 18
(1997) 1 (the NDFs of `ode15s`, also scipy's `BDF`): the solution history is a
table `D` of modified divided differences, `D[0] = y_n`, `D[k] = ∇^k y_n` at constant
step `h`. A step predicts `y = Σ_{k≤q} D[k]`, corrects it by a simplified Newton
iteration on `(I - cJ) Δ = c f - ψ - d` with `c = h/α_q`, and the error is
`C_{q} d`. A change of step by a factor `r` rewrites `D` with the matrices `R(r) U`
(loc. cit. §2.3). Everything here has fixed shapes (the order is a traced integer
and rows above it are masked), so the whole integration compiles into one loop.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

MAX_ORDER = 5
NEWTON_MAXITER = 4
MIN_FACTOR, MAX_FACTOR = 0.2, 10.0

# NDF coefficients kappa_q (Shampine & Reichelt 1997, Table 1); kappa = 0 gives the BDFs.
KAPPA = np.array([0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0])
GAMMA = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, MAX_ORDER + 1))])


def rms(x, blocks=1):
    """The root mean square of `x`; with `blocks > 1` the largest over `blocks` equal parts of it."""
    return jnp.max(jnp.sqrt(jnp.mean(jnp.square(x.reshape(blocks, -1)), axis=1)))


def _r_matrix(factor):
    """`R(r)` of Shampine & Reichelt §2.3 for the largest order; rows/columns above the current order are masked."""
    i = np.arange(1, MAX_ORDER + 1)[:, None]
    j = np.arange(1, MAX_ORDER + 1)[None, :]
    body = (i - 1 - factor * j) / i
    m = jnp.zeros((MAX_ORDER + 1, MAX_ORDER + 1), jnp.result_type(factor, float))
    m = m.at[0].set(1.0).at[1:, 1:].set(body)
    return jnp.cumprod(m, axis=0)


def combine(weights, rows):
    """`weights @ rows` for a few rows `(k, n)` and weights `(k,)` or `(m, k)`, as sums of scaled rows.

    XLA:CPU reduces a `(k, n)` array along `k` with a strided loop and multiplies it by a
    small matrix through a GEMM built for large `k`; at `n = 2e5` (a shared-step ensemble)
    those cost 20 ms and 3 ms where one fused pass over the rows costs 0.2-1.4 ms.
    """
    if weights.ndim == 1:
        return sum(weights[k] * rows[k] for k in range(rows.shape[0]))
    return jnp.stack([combine(w, rows) for w in weights])


def change_step(d_table, order, factor):
    """Rewrite the difference table for a step `factor` times the current one."""
    ru = _r_matrix(factor) @ _r_matrix(jnp.ones_like(factor))
    k = np.arange(MAX_ORDER + 1)
    mask = (k[:, None] <= order) & (k[None, :] <= order)
    ru = jnp.where(mask, ru, jnp.eye(MAX_ORDER + 1, dtype=ru.dtype))
    return d_table.at[: MAX_ORDER + 1].set(combine(ru.T, d_table[: MAX_ORDER + 1]))


def predict(d_table, order):
    # A matrix-vector product, not a sum of rows: XLA keeps it a separate kernel instead of fusing
    # the sum over the table into every consumer (a stencil right-hand side reads each entry several times).
    weights = (np.arange(d_table.shape[0]) <= order).astype(d_table.dtype)
    return jnp.dot(weights, d_table, precision=jax.lax.Precision.HIGHEST)


def psi(d_table, order, alpha):
    """`Σ_{k=1..q} γ_k D[k] / α_q`, the history term of the corrector."""
    weights = jnp.where(np.arange(1, MAX_ORDER + 1) <= order, GAMMA[1:], 0.0)
    return combine(weights, d_table[1 : MAX_ORDER + 1]) / alpha[order]


def accept(d_table, order, d):
    """The table after an accepted step with correction `d` (the new `∇^{q+1}` and `∇^{q+2}`).

    With `q` the order: row `q+1` becomes `d`, row `q+2` `d - D[q+1]`, rows `k <= q` the
    sums `D[k] + ... + D[q] + d`, and the rest stay. One branch per order, so each adds
    only its own rows (a cumulative sum along the rows is a strided loop on XLA:CPU, and a
    masked sum over all rows costs 8x the arithmetic).
    """

    def at_order(q):
        def update(d_table, d):
            rows = [d, d - d_table[q + 1]]
            for k in reversed(range(q + 1)):
                rows.insert(0, d_table[k] + rows[0])
            return d_table.at[: q + 3].set(jnp.stack(rows))  # in place: the rows above q + 2 stay

        return update

    branches = [at_order(q) for q in range(1, MAX_ORDER + 1)]
    return jax.lax.switch(jnp.clip(order - 1, 0, MAX_ORDER - 1), branches, d_table, d)


def interpolate(d_table, order, t, h, t_eval):
    """The interpolating polynomial of the last step at `t_eval` (in `[t - h, t]`)."""
    k = np.arange(MAX_ORDER)
    x = (t_eval - (t - h * k)) / (h * (1 + k))
    x = jnp.where(k < order, x, 0.0)
    p = jnp.cumprod(x)
    return d_table[0] + combine(p, d_table[1 : MAX_ORDER + 1])


def initial_step(f, t0, y0, f0, rtol, atol, span, norm=rms):
    """Hairer, Nørsett & Wanner, Solving ODEs I, §II.4 (order 1), capped at the interval length."""
    scale = atol + rtol * jnp.abs(y0)
    d0, d1 = norm(y0 / scale), norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / jnp.where(d1 == 0, 1.0, d1))
    h0 = jnp.minimum(h0, span)
    f1 = f(t0 + h0, y0 + h0 * f0)
    d2 = norm((f1 - f0) / scale) / h0
    big = jnp.maximum(d1, d2)
    h1 = jnp.where(big <= 1e-15, jnp.maximum(1e-6, h0 * 1e-3), jnp.sqrt(0.01 / jnp.where(big == 0, 1.0, big)))
    return jnp.minimum(jnp.minimum(100 * h0, h1), span)


def initial_step_dae(y0, slope, rtol, atol, span):
    """The first step of `ode15s` for mass-matrix problems (Shampine, Reichelt & Kierzenka 1999):
    a second derivative needs another consistent solve, so the step comes from the slope alone,
    `h = 1 / (1.25 sqrt(rtol) max |y'/scale|)`, capped at the interval length."""
    scale = atol + rtol * jnp.abs(y0)
    rate = 1.25 * jnp.sqrt(rtol) * jnp.max(jnp.abs(slope) / scale)
    return jnp.where(rate * span > 1, 1.0 / jnp.where(rate == 0, 1.0, rate), span)
