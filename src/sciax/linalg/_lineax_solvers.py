"""lineax solvers that sciax adds: multigrid iteration, fast direct inverses, and preconditioning
for solvers whose caller passes no options (e.g. the linear solves inside optimistix's Newton).

Being `lineax.AbstractLinearSolver`s, they inherit lineax's implicit differentiation
(with respect to the right-hand side and the operator's parameters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx

from ._multigrid import Multigrid
from ._preconditioner import AbstractPreconditioner


def _steps_stats(n):
    return {"num_steps": jnp.asarray(n)}


class MultigridSolver(lx.AbstractLinearSolver):
    """Iterate V-cycles `x <- x + M (b - A x)` until `max|b - A x| <= atol + rtol max|b|`.

    `multigrid`: a `sciax.linalg.Multigrid` built for the operator being solved.
    Symmetric operators only under reverse-mode differentiation (the transpose reuses it).
    """

    multigrid: Multigrid
    rtol: float
    atol: float
    max_steps: int

    def init(self, operator, options):
        return lx.linearise(operator)

    def compute(self, state, vector, options):
        operator = state
        tol = self.atol + self.rtol * jnp.max(jnp.abs(vector))

        def cond(carry):
            x, r, k = carry
            return (jnp.max(jnp.abs(r)) > tol) & (k < self.max_steps)

        def body(carry):
            x, r, k = carry
            x = self.multigrid.vcycle(vector, x)
            return x, vector - operator.mv(x), k + 1

        x0 = options.get("y0", jnp.zeros_like(vector))
        x, r, k = jax.lax.while_loop(cond, body, (x0, vector - operator.mv(x0), jnp.asarray(0)))
        ok = jnp.max(jnp.abs(r)) <= tol
        result = lx.RESULTS.where(ok, lx.RESULTS.successful, lx.RESULTS.max_steps_reached)
        return x, result, _steps_stats(k)

    def transpose(self, state, options):
        if not self.multigrid.symmetric:
            raise NotImplementedError("MultigridSolver: reverse-mode differentiation needs a symmetric operator")
        return state.transpose(), {}

    def conj(self, state, options):
        return state, {}

    def assume_full_rank(self):
        return True


class DirectSolver(lx.AbstractLinearSolver):
    """`x = M b` with `M` an exact inverse (e.g. `sciax.linalg.FastPoisson`); one step, no iteration."""

    inverse: AbstractPreconditioner

    def init(self, operator, options):
        return None

    def compute(self, state, vector, options):
        return self.inverse.apply(vector), lx.RESULTS.successful, _steps_stats(1)

    def transpose(self, state, options):
        if not self.inverse.symmetric:
            raise NotImplementedError("DirectSolver: reverse-mode differentiation needs a symmetric inverse")
        return state, {}

    def conj(self, state, options):
        return state, {}

    def assume_full_rank(self):
        return True


class Preconditioned(lx.AbstractLinearSolver):
    """A lineax Krylov solver (`CG`, `GMRES`, `BiCGStab`) with a preconditioner always injected and
    its tolerance taken relative to each right-hand side.

    - `preconditioner`: `None`, a lineax operator, a `sciax.linalg.AbstractPreconditioner`,
      or a function `preconditioner(operator) -> either` called on the operator being
      solved (e.g. `sciax.linalg.Jacobi`, to follow a Newton iteration's Jacobian). It
      approximates the inverse of the operator; `negate=True` hands `-M` to the solver
      (for `CG` on a negative definite operator, which lineax negates).
    - lineax checks `|r_i| <= atol + rtol |b_i|` per entry, which never holds where
      `b_i = 0` with `atol = 0`; each solve here uses `atol + rtol max|b|` instead.
    """

    solver: lx.AbstractLinearSolver
    preconditioner: Any = None
    negate: bool = False

    def _precond(self, operator):
        pc = self.preconditioner
        if pc is None:
            return None
        if callable(pc) and not isinstance(pc, (lx.AbstractLinearOperator, AbstractPreconditioner)):
            pc = pc(operator)
        if isinstance(pc, AbstractPreconditioner):
            tags = frozenset({lx.positive_semidefinite_tag}) if isinstance(self.solver, lx.CG) else frozenset()
            return pc.as_lineax(negate=self.negate, tags=tags)
        if not isinstance(pc, lx.AbstractLinearOperator):
            raise TypeError(f"Preconditioned: preconditioner must give a lineax operator, got {type(pc).__name__}")
        return -pc if self.negate else pc

    def _options(self, pc, options):
        return options if pc is None else {**options, "preconditioner": pc}

    def init(self, operator, options):
        return self.solver.init(operator, options), self._precond(operator)

    def compute(self, state, vector, options):
        inner, pc = state
        size = jax.tree_util.tree_reduce(jnp.maximum, jax.tree_util.tree_map(lambda v: jnp.max(jnp.abs(v)), vector))
        atol = jax.lax.stop_gradient(self.solver.atol + self.solver.rtol * size)
        atol = jnp.where(atol > 0, atol, jnp.finfo(jnp.result_type(atol)).tiny)
        solver = eqx.tree_at(lambda s: s.atol, self.solver, atol)
        return solver.compute(inner, vector, self._options(pc, options))

    def transpose(self, state, options):
        inner, pc = state
        inner_t, opts = self.solver.transpose(inner, self._options(pc, options))
        return (inner_t, opts.get("preconditioner")), {}

    def conj(self, state, options):
        inner, pc = state
        inner_c, opts = self.solver.conj(inner, self._options(pc, options))
        return (inner_c, opts.get("preconditioner")), {}

    def assume_full_rank(self):
        return self.solver.assume_full_rank()


PreconditionerLike = lx.AbstractLinearOperator | AbstractPreconditioner | Callable
