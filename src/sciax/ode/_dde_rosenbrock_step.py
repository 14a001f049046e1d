"""One Rosenbrock–Wanner step of the method of steps (Rodas5P, Rodas4, Ros3P, Ros34PW2).

Steps no longer than the smallest delay make every delayed argument of every stage
known (`_dde_stepper.py`), so within a step the DDE is the ODE
`y' = g(t, y) = f(t, y, y_past(t - tau(t, y)))` with `y_past` the history or the dense
output of earlier steps, and the Rosenbrock method is applied to `g` as it is to an
ODE (Hairer & Wanner, Solving ODEs II, §IV.7, transformed form 7.25; the stage
formulas of `_rosenbrock.py`):

    (I - h gamma J) k_i = h gamma g(t + c_i h, y + sum_j a_ij k_j) + gamma sum_j C_ij k_j
                          + h gamma h d_i dg/dt,

with `J = dg/dy` and `dg/dt` both taken at the start of the step from one
linearisation of `g`. `J` is dense (forward mode: fine for the small systems
DDEs have) and includes, for a state-dependent delay, the dependence of the delayed
argument on `y`. `dg/dt` includes the time dependence through the delayed states: a
derivative through the dense output, one-sided over the step (at a breakpoint the
delayed slope jumps, and the step only sees the piece after it), which is why the
delayed states are read right-sided here (`delayed_states(..., right=True)`).

The dense output stored for later delayed reads is the method's own (`RosenbrockInterpolation`:
the Rodas dense-output polynomials, or a cubic Hermite interpolant for Ros3P and Ros34PW2 at
one more evaluation of `g`), so delayed values have the interpolant's order.
"""

from __future__ import annotations

from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx

from ..linalg import small_dense_solver
from ._dde_stepper import AbstractDDEStep
from ._rosenbrock import RosenbrockInterpolation, _combine, _hermite
from ._rosenbrock_tableaus import RosenbrockTableau


class RosenbrockStep(AbstractDDEStep):
    """A Rosenbrock method with a dense Jacobian; `k` stored per step: the dense-output rows `K_j`.

    `linear_solver`: a `lineax` solver of the stage systems, or `None` (unrolled LU for up to
    12 states, LAPACK LU above). A singular stage matrix or non-finite stages give an infinite
    error estimate: the step is retried smaller."""

    tableau: RosenbrockTableau = eqx.field(static=True)
    linear_solver: Any = None

    interpolation_cls: ClassVar[Any] = RosenbrockInterpolation
    right_sided: ClassVar[bool] = True

    @property
    def order(self) -> int:
        return self.tableau.order

    @property
    def rows(self) -> int:
        return len(self.tableau.dense) or 2

    @property
    def rhs_evals(self) -> int:
        return self.tableau.num_stages + (0 if self.tableau.dense else 1)

    def __call__(self, rhs, t, t_new, y, f_start):
        tab = self.tableau.arrays()
        h = t_new - t
        hg = h * self.tableau.gamma
        g0, lin = jax.linearize(lambda s, x: rhs(s, x)[0], t, y)
        _, too_old, bad = rhs(t, y)  # the same evaluation (shared by XLA), for its flags
        dgdt = lin(jnp.ones_like(t), jnp.zeros_like(y))
        eye = jnp.eye(y.size, dtype=y.dtype)
        jac = jax.vmap(lambda v: lin(jnp.zeros_like(t), v), out_axes=1)(eye)
        operator = lx.MatrixLinearOperator(eye - hg * jac)
        solver = small_dense_solver(y.size) if self.linear_solver is None else self.linear_solver
        state = solver.init(operator, {})
        ok = jnp.array(True)
        ks = []
        for i in range(self.tableau.num_stages):
            if i == 0:
                gi = g0
            else:
                c = float(tab["c"][i])
                t_stage = t_new if c == 1 else t + c * h
                gi, old, neg = rhs(t_stage, y + _combine(tab["a"][i, :i], ks))
                too_old, bad = too_old | old, bad | neg
            memory = _combine(tab["c_mat"][i, :i], ks)
            r = hg * gi + (hg * h * float(tab["d"][i])) * dgdt + self.tableau.gamma * memory
            sol = lx.linear_solve(operator, r, solver, state=state, throw=False)
            ok = ok & (sol.result == lx.RESULTS.successful)
            ks.append(sol.value)
        y1 = y + _combine(tab["b"], ks)
        err = _combine(tab["b_error"], ks)
        if self.tableau.dense:
            dense = jnp.stack([_combine(row, ks) for row in tab["dense"]])
        else:
            g1, old, neg = rhs(t_new, y1)
            too_old, bad = too_old | old, bad | neg
            dense = _hermite(y, y1, h * g0, h * g1)
        ok = ok & jnp.all(jnp.isfinite(dense))
        err = jnp.where(ok, err, jnp.inf)
        # g(t, y) is re-evaluated in each step's linearisation: `f_start` (the explicit pairs'
        # first-same-as-last stage) is not used, and is carried on unchanged.
        return y1, err, jnp.where(ok, dense, 0.0), f_start, too_old, bad


__all__ = ["RosenbrockStep"]
