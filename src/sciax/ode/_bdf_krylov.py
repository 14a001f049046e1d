"""Newton–Krylov linear algebra for `BDF`: matrix-free `(M - cJ) Δ = r` by preconditioned GMRES/BiCGStab.

The alternative to forming and factorising `I - cJ` (CVODE's SPGMR/SPBCG
modules, Hindmarsh et al., ACM TOMS 31 (2005) 363, §2.1; Brown & Hindmarsh,
"Reduced storage matrix methods in stiff ODE systems", Appl. Math. Comput. 31
(1989) 40): each Krylov iteration needs one Jacobian–vector product, a `jvp` of
the right-hand side, so nothing of size `n²` or a sparse factorisation is ever
formed, and a whole solve stays on the device and batches under `vmap`. What
makes it fast is the preconditioner, an approximate inverse of `M - cJ` the user
builds from the physics (e.g. an FFT or multigrid inverse of `I - c D ∇²` for
reaction–diffusion: the stiff diffusion inverted exactly, the local reactions
left to the Krylov iteration); it is rebuilt whenever `c` changes.

The products are taken at the point where the Jacobian was last "evaluated" (the
same reuse as the direct path: a new point only when Newton fails), so the
Newton iteration is the same simplified Newton; the Krylov tolerance is relative
to the right-hand side, an inexact Newton step (Dembo, Eisenstat & Steihaug 1982).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
from jax.flatten_util import ravel_pytree

from ..linalg import AbstractPreconditioner
from ._bdf_gmres import gmres
from ._mass import MassMatrix, time_derivative, times_mass

#: The iterative solvers `BDF` accepts for matrix-free Newton systems.
KRYLOV_SOLVERS = (lx.GMRES, lx.BiCGStab)


class KrylovLinear(eqx.Module):
    """The `BDF` linear-algebra interface (`jac`, `factor`, `solve`, ...) done matrix-free.

    `jac` returns the linearisation point `(t, y)`; `factor` adds `c` and the
    preconditioner built there; `solve` runs the Krylov solver on
    `v -> M v - c J v` and returns NaN where it did not converge, which `BDF` counts
    as a failed Newton iteration (a fresh linearisation, then a smaller step).
    """

    f: Callable
    args: Any
    solver: lx.AbstractLinearSolver = eqx.field(static=True)
    preconditioner: Callable | None = eqx.field(static=True)
    mass: MassMatrix | None = eqx.field(static=True, default=None)
    blocks: int = eqx.field(static=True, default=1)

    def jac(self, f, t, y, args):
        return (t, y)

    def factor(self, jac, c):
        t, y = jac
        unravel, params = self.args
        if self.preconditioner is None:
            return (t, y, c, None)
        p = self.preconditioner(t, unravel(y), c, params)
        if not isinstance(p, (AbstractPreconditioner, lx.AbstractLinearOperator)):
            raise TypeError(
                "BDF: preconditioner(t, y, c, params) must return a sciax.linalg.AbstractPreconditioner or a "
                f"lineax linear operator approximating (M - cJ)^-1, got {type(p).__name__}"
            )
        return (t, y, c, jax.lax.stop_gradient(p))

    def solve(self, factors, rhs):
        t, y, c, p = factors
        # Linearised once per solve: each Krylov iteration then costs the tangent part of a jvp only.
        _, jvp = jax.linearize(lambda x: self.f(t, x), y)

        def matvec(v):
            return self.times_mass(v) - c * jvp(v)

        return self._krylov(matvec, rhs, p)

    def _krylov(self, matvec, rhs, p):
        apply = None
        if p is not None:
            unravel = self.args[0]
            if isinstance(p, AbstractPreconditioner):
                apply = lambda r: ravel_pytree(p.apply(unravel(r)))[0]  # noqa: E731
            else:
                apply = lambda r: ravel_pytree(p.mv(unravel(r)))[0]  # noqa: E731
        # Mass-matrix (DAE) systems stay on lineax's GMRES: its stricter entrywise test is what they were
        # validated with; the early-stopping GMRES serves the ODE case.
        if isinstance(self.solver, lx.GMRES) and self.mass is None:
            return self._gmres(matvec, rhs, apply)
        structure = jax.eval_shape(lambda: rhs)
        operator = lx.FunctionLinearOperator(matvec, structure)
        options = {} if apply is None else {"preconditioner": lx.FunctionLinearOperator(apply, structure)}
        sol = lx.linear_solve(operator, rhs, self.solver, options=options, throw=False)
        return jnp.where(sol.result == lx.RESULTS.successful, sol.value, jnp.nan)

    def _gmres(self, matvec, rhs, apply):
        """`lineax.GMRES`'s settings run by `_bdf_gmres.gmres` (stops at the first small residual, block by
        block), differentiated implicitly; a block that does not converge comes back NaN."""
        shape = (self.blocks, rhs.size // self.blocks)
        options = dict(
            rtol=self.solver.rtol,
            atol=self.solver.atol,
            restart=self.solver.restart,
            # lineax's own default when unset: 10 n cycles (its max_steps counts cycles too)
            max_restarts=10 * shape[1] if self.solver.max_steps is None else self.solver.max_steps,
        )

        def blockwise(fn):
            return lambda v: fn(v.reshape(-1)).reshape(shape)

        def run(mv, precondition, b):
            x, ok = gmres(blockwise(mv), blockwise(precondition), b.reshape(shape), **options)
            return jnp.where(ok[:, None], x, jnp.nan).reshape(-1)

        identity = lambda v: v  # noqa: E731
        precondition = identity if apply is None else apply

        def solve(mv, b):
            return run(mv, precondition, b)

        def transpose_solve(vecmat, b):
            return run(vecmat, _transposed(precondition, b), b)

        return jax.lax.custom_linear_solve(matvec, rhs, solve, transpose_solve)

    def times_mass(self, v):
        return times_mass(self.mass, v)

    def initial_slope(self, f, t0, y0, f0, jac):
        """`y'(t0)`: `f0`, or for a DAE the consistent slope, by the same Krylov solver unpreconditioned."""
        if self.mass is None:
            return f0
        ft0 = time_derivative(f, t0, y0)
        algebraic = jnp.asarray(self.mass.csr.getnnz(axis=1) == 0)

        def matvec(v):
            jv = jax.jvp(lambda x: f(t0, x), (y0,), (v,))[1]
            return jnp.where(algebraic, jv, self.mass.times(v))

        return self._krylov(matvec, jnp.where(algebraic, -ft0, f0), None)


__all__ = ["KRYLOV_SOLVERS", "KrylovLinear"]


def _transposed(precondition, b):
    """The transpose of a linear preconditioner, for the transposed (reverse-mode) solve; the identity when
    JAX cannot transpose it (a host callback such as `IncompleteLU`, a scatter with repeated indices): any
    preconditioner gives the same solution, only the iteration count differs."""
    try:
        transposed = jax.linear_transpose(precondition, b)
        jax.eval_shape(transposed, b)  # custom_linear_solve traces this branch even when nothing transposes
    except (NotImplementedError, TypeError, ValueError):
        return lambda v: v
    return lambda v: transposed(v)[0]
