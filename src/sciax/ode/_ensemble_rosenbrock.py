"""The Rosenbrock–Wanner step of the ensemble kernels (stiff ensembles), one trajectory per lane.

Same scheme as `sciax.ode.Rodas5P` / `Rodas4` (`_rosenbrock.py`): the transformed
form of Hairer & Wanner (Solving ODEs II, §IV.7, eq. 7.25),

    (I - hγ J) k_i = hγ f(t0 + c_i h, y0 + Σ a_ij k_j) + hγ h d_i ∂f/∂t + γ Σ C_ij k_j,

one Jacobian and one factorisation per step, the methods' own dense output, and
the same controller and first step as the explicit kernels. Each member's `n × n`
Jacobian is unrolled into `n²` lane vectors (`jax.jacfwd` of the right-hand
side, evaluated as a lane program), and factorised by Gaussian elimination with
partial pivoting, row swaps done per member with selects: the small dense LU a
GPU thread can hold in registers (DiffEqGPU's stiff kernels do the same with
static arrays). A singular or non-finite stage rejects the step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._ensemble_rk import control, error_norm, initial_step, lane, obj
from ._lanes import LaneProgram
from ._rosenbrock_tableaus import RosenbrockTableau


def lu_factor(a):
    """In-place style LU with partial pivoting of an `n × n` list of lane vectors.

    Returns `(lu, pivots)`: `lu` holds the unit-lower multipliers below the
    diagonal and `U` on and above it; `pivots[k]` is the row swapped with row `k`
    (an int lane vector), as LAPACK's `getrf`.
    """
    n = len(a)
    a = [list(row) for row in a]
    pivots = []
    for k in range(n):
        best, piv = jnp.abs(a[k][k]), jnp.zeros(a[k][k].shape, jnp.int32) + k
        for r in range(k + 1, n):
            better = jnp.abs(a[r][k]) > best
            best, piv = jnp.where(better, jnp.abs(a[r][k]), best), jnp.where(better, r, piv)
        pivots.append(piv)
        for r in range(k + 1, n):
            swap = piv == r
            for j in range(n):
                a[k][j], a[r][j] = jnp.where(swap, a[r][j], a[k][j]), jnp.where(swap, a[k][j], a[r][j])
        inv = 1.0 / a[k][k]
        for r in range(k + 1, n):
            m = a[r][k] * inv
            a[r][k] = m
            for j in range(k + 1, n):
                a[r][j] = a[r][j] - m * a[k][j]
    return a, pivots


def lu_solve(lu, pivots, b):
    """Solve `A x = b` from `lu_factor(A)`; `b` a list of lane vectors."""
    n = len(b)
    x = list(b)
    for k, piv in enumerate(pivots):
        for r in range(k + 1, n):
            swap = piv == r
            x[k], x[r] = jnp.where(swap, x[r], x[k]), jnp.where(swap, x[k], x[r])
    for i in range(n):
        for j in range(i):
            x[i] = x[i] - lu[i][j] * x[j]
    for i in reversed(range(n)):
        for j in range(i + 1, n):
            x[i] = x[i] - lu[i][j] * x[j]
        x[i] = x[i] / lu[i][i]
    return x


def _combine(weights, vectors, like):
    out = [jnp.zeros_like(v) for v in like]
    for w, vec in zip(weights, vectors):
        if w != 0:
            out = [o + float(w) * v for o, v in zip(out, vec)]
    return out


class LaneRosenbrock:
    """A Rosenbrock–Wanner method over lane vectors.

    `rhs(t, y, params)` is the one-member right-hand side; `example` one member's
    `(t, y, params)`; `n_err`: error control on the first `n_err` components.
    """

    def __init__(self, rhs, tableau: RosenbrockTableau, example, *, n_err: int | None = None):
        t, y, p = example
        self.rhs = LaneProgram(rhs, t, y, p)
        self.jac = LaneProgram(jax.jacfwd(rhs, argnums=1), t, y, p)
        self.dfdt = LaneProgram(lambda t, y, p: jax.jvp(lambda s: rhs(s, y, p), (t,), (jnp.ones_like(t),))[1], t, y, p)
        self.tab = tableau
        self.n = int(np.size(y))
        self.n_err = self.n if n_err is None else n_err

    def _eval(self, program, t, y, params):
        return [lane(e, t) for e in program(t.shape, t, obj(y), params).reshape(-1)]

    def init(self, t0, y0, params, rtol, atol, dt0):
        f0 = self._eval(self.rhs, t0, y0, params)
        if dt0 is None:
            f = lambda t, y: self._eval(self.rhs, t, y, params)  # noqa: E731
            h = initial_step(f, t0, y0, f0, self.n_err, self.tab.order, rtol, atol)
        else:
            h = jnp.full(t0.shape, dt0, t0.dtype)
        dense = [[jnp.zeros_like(v) for v in y0] for _ in range(max(len(self.tab.dense), 1))]
        return dict(t=t0, h=h, y=list(y0), t_prev=t0, y_prev=[jnp.zeros_like(v) for v in y0], dense=dense)

    def step(self, state, params, t_out, t_end, rtol, atol):
        del t_out
        tab, n = self.tab, self.n
        t, y = state["t"], state["y"]
        h = jnp.minimum(state["h"], t_end - t)
        hg = h * tab.gamma
        jac = self._eval(self.jac, t, y, params)
        matrix = [[(1.0 if i == j else 0.0) - hg * jac[i * n + j] for j in range(n)] for i in range(n)]
        lu, pivots = lu_factor(matrix)
        dfdt = self._eval(self.dfdt, t, y, params)
        ks = []
        for i in range(len(tab.b)):
            stage = y if i == 0 else [a + b for a, b in zip(y, _combine(tab.a[i][:i], ks, y))]
            fi = self._eval(self.rhs, t + tab.c[i] * h, stage, params)
            memory = _combine(tab.c_mat[i][:i], ks, y)
            rhs = [hg * f + (hg * h * tab.d[i]) * dt + tab.gamma * m for f, dt, m in zip(fi, dfdt, memory)]
            ks.append(lu_solve(lu, pivots, rhs))
        y1 = [a + b for a, b in zip(y, _combine(tab.b, ks, y))]
        err = _combine(tab.b_error, ks, y)
        e = self.n_err
        en = error_norm(err[:e], y[:e], y1[:e], rtol, atol)
        finite = jnp.ones(t.shape, bool)
        for v in y1:
            finite = finite & jnp.isfinite(v)
        en = jnp.where(finite, en, jnp.inf)
        accept, h_next = control(h, en, tab.order)
        dense = [_combine(row, ks, y) for row in tab.dense] if tab.dense else state["dense"]
        return dict(t=t + h, h=h_next, y=y1, t_prev=t, y_prev=y, dense=dense), accept, h_next

    def output(self, state, t_out):
        """The methods' dense output `(1-θ) y0 + θ (y1 + (1-θ)(K_0 + θ K_1 + ...))` (linear without one)."""
        t0, t1 = state["t_prev"], state["t"]
        span = t1 - t0
        theta = jnp.where(span == 0, 1.0, (t_out - t0) / jnp.where(span == 0, 1.0, span))
        out = []
        for i in range(self.n):
            poly = jnp.zeros_like(t0)
            if self.tab.dense:
                poly = state["dense"][-1][i]
                for row in reversed(state["dense"][:-1]):
                    poly = row[i] + theta * poly
            y0, y1 = state["y_prev"][i], state["y"][i]
            value = (1 - theta) * y0 + theta * (y1 + (1 - theta) * poly)
            out.append(jnp.where(t_out == t1, y1, value))
        return out


__all__ = ["LaneRosenbrock", "lu_factor", "lu_solve"]
