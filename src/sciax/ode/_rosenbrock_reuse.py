"""Jacobian and factorisation reuse for Rosenbrock-W methods (`Ros34PW2(reuse_jacobian=True)`).

A W-method keeps its order with any matrix in place of `J = ∂f/∂y` (Steihaug &
Wolfbrandt, Math. Comp. 33 (1979) 521; Hairer & Wanner II, §IV.7): only stability
and the error constant depend on how close it is. So, as in the W-method codes of
Rang & Angermann (BIT 45, 2005) and SciML's `Rosenbrock23`/`ROS34PW*`
(`W`-operator caching), the Jacobian of an earlier step is kept and re-evaluated:

- at the first step and after `max_age` steps with one Jacobian;
- when the step size has changed by more than `max_step_ratio` since it was evaluated;
- when a step attempted with a kept Jacobian fails the error test (or is not
  finite): it is redone at once, same step size, with a fresh Jacobian. diffrax keeps
  a solver's state only when a step is accepted, so a rejection cannot be left to
  the next attempt to notice; the error test is the controller's own (RMS norm of
  `err / (atol + rtol max(|y0|, |y1|))` at most 1).

The factorisation of `M - hγJ` is kept too and reused while `hγ` is unchanged
(constant steps; adaptive steps change `h` at nearly every step). With a sparse
Jacobian the SuperLU factorisations are memoised by value, which gives the same.

Each step attempt evaluates the Jacobian at most once and every rejected attempt
exactly once, so `num_jacobian_evals` = evaluations kept in the state + rejected steps.
Under `vmap` the fresh evaluations run (for the whole batch, selected per member)
only when some member needs one.
"""

from __future__ import annotations

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import lineax as lx
from jax.flatten_util import ravel_pytree
from jaxtyping import Array

from ..linalg import (
    SparsityPattern,
    UnrolledLU,
    lu_factor_unrolled,
    lu_solve_unrolled,
    small_dense_solver,
    sparse_jacobian,
    sparse_solve,
)


class JacobianReuse(eqx.Module):
    """When a Rosenbrock-W method re-evaluates a kept Jacobian (see the module docstring).

    **Fields:** `max_age` (steps with one Jacobian, default 20), `max_step_ratio`
    (re-evaluate when `h / h_J` leaves `[1/r, r]`, default 3). `rtol`, `atol` are the
    solve's tolerances, set by the method (the error test that triggers a redo).
    """

    max_age: int = eqx.field(static=True, default=20)
    max_step_ratio: float = eqx.field(static=True, default=3.0)
    rtol: float | None = None
    atol: float | None = None

    def __check_init__(self):
        if isinstance(self.max_age, bool) or not isinstance(self.max_age, int) or self.max_age < 1:
            raise ValueError(f"JacobianReuse: max_age must be an integer >= 1, got {self.max_age!r}")
        if not self.max_step_ratio > 1:
            raise ValueError(f"JacobianReuse: max_step_ratio must be > 1, got {self.max_step_ratio!r}")


def reuse_init(solver, span, y0) -> dict:
    y_flat, _ = ravel_pytree(y0)
    n, dtype = y_flat.size, y_flat.dtype
    sparse = isinstance(solver.jacobian, SparsityPattern)
    jac = jnp.zeros((solver.jacobian.nnz,) if sparse else (n, n), dtype)
    zero = jnp.zeros((), jnp.int32)
    state = dict(span=span, jac=jac, have=jnp.array(False), age=zero, h_jac=jnp.ones((), dtype), njev=zero)
    if not sparse:
        state.update(lu=jnp.zeros((n, n), dtype), pivots=jnp.zeros((n,), jnp.int32), hg_lu=jnp.full((), jnp.nan, dtype))
    return state


def reuse_step(solver, terms, t0, t1, y0, args, state):
    reuse = solver.reuse
    y_flat, unravel = ravel_pytree(y0)
    dtype = y_flat.dtype

    def f(t, y):
        return ravel_pytree(terms.vf(t, unravel(y), args))[0]

    h = (t1 - t0).astype(dtype)
    hg = h * solver.tableau.gamma
    f0, dfdt = jax.jvp(lambda t: f(t, y_flat), (t0,), (jnp.ones_like(t0),))
    ratio = jnp.abs(h / state["h_jac"])
    keep = state["have"] & (state["age"] < reuse.max_age)
    keep = keep & (ratio <= reuse.max_step_ratio) & (ratio >= 1 / reuse.max_step_ratio)

    def fresh():
        return _evaluate(solver, f, t0, y_flat, args, unravel)

    def attempt(jac, fresh_jac):
        factors, new_lu = _factor(solver, state, jac, hg, fresh_jac, y_flat)
        solve_stage = _stage_solver(solver, factors, y_flat)
        return solver.stages(f, t0, t1, y_flat, f0, dfdt, solve_stage), new_lu

    jac = _where_any(~keep, fresh, state["jac"])
    (y1, err, dense, ok), lu = attempt(jac, ~keep)
    redo = jnp.array(False)
    if solver.reject_failures:  # adaptive steps; constant ones cannot be retried
        redo = keep & ~(ok & _passes_error_test(reuse, y_flat, y1, err))

        def redo_branch():
            new_jac = _evaluate(solver, f, t0, y_flat, args, unravel)
            step, new_lu = attempt(new_jac, jnp.array(True))
            return new_jac, step, new_lu

        current = (jac, (y1, err, dense, ok), lu)
        jac, (y1, err, dense, ok), lu = _where_any(redo, redo_branch, current)
    fresh_now = ~keep | redo
    span = state["span"]
    y1_tree, err_tree, dense_info, result = solver.finish(t0, t1, y0, y1, err, dense, ok, span)
    new_state = dict(
        span=span,
        jac=jac,
        have=jnp.array(True),
        age=jnp.where(fresh_now, 1, state["age"] + 1).astype(jnp.int32),
        h_jac=jnp.where(fresh_now, h, state["h_jac"]),
        njev=state["njev"] + fresh_now.astype(jnp.int32),
    )
    if lu is not None:
        new_state.update(lu)
    return y1_tree, err_tree, dense_info, new_state, result


def _where_any(need, compute, old):
    """`compute()` where `need`, else `old`; `compute` runs only if some member of a `vmap` batch needs it."""

    def select():
        new = compute()
        return jax.tree_util.tree_map(lambda a, b: jnp.where(_expand(need, a), a, b), new, old)

    return jax.lax.cond(eqxi.unvmap_any(need), select, lambda: old)


def _expand(mask, like):
    return jnp.reshape(mask, jnp.shape(mask) + (1,) * (jnp.ndim(like) - jnp.ndim(mask)))


def _passes_error_test(reuse, y0, y1, err):
    rtol, atol = (ravel_pytree(tol)[0] if jnp.ndim(tol) else tol for tol in (reuse.rtol, reuse.atol))
    scale = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean((err / scale) ** 2)) <= 1


def _evaluate(solver, f, t0, y, args, unravel) -> Array:
    """The Jacobian at `(t0, y)`: values on the pattern (sparse) or an `(n, n)` matrix."""
    if isinstance(solver.jacobian, SparsityPattern):
        return sparse_jacobian(lambda x: f(t0, x), y, solver.jacobian).data
    if callable(solver.jacobian):
        jac = solver.jacobian(t0, unravel(y), args)
        if isinstance(jac, lx.AbstractLinearOperator) or jnp.shape(jac) != (y.size, y.size):
            raise ValueError(
                f"simulate: with reuse_jacobian, jacobian(t, y, params) must return an ({y.size}, {y.size}) array "
                f"(a matrix to keep), got {type(jac).__name__} of shape {getattr(jac, 'shape', None)}"
            )
        return jnp.asarray(jac, y.dtype)
    return jax.jacfwd(lambda x: f(t0, x))(y)


def _factor(solver, state, jac, hg, fresh_jac, y):
    """Factors of `M - hγJ`: dense LU kept in the state (refactorised when `J` or `hγ` changed), or sparse values."""
    if isinstance(solver.jacobian, SparsityPattern):
        pattern = solver.jacobian
        if solver.mass is None:
            return (-hg * jac).at[pattern.diagonal].add(1.0), None
        return solver.mass.newton_matrix(jac, hg, pattern), None
    factor = lu_factor_unrolled if _unrolled(y.size) else jsl.lu_factor
    old = dict(lu=state["lu"], pivots=state["pivots"], hg_lu=state["hg_lu"])

    def refactor():
        lu, pivots = factor(solver._identity(y) - hg * jac)
        return dict(lu=lu, pivots=pivots.astype(jnp.int32), hg_lu=hg)

    kept = _where_any(fresh_jac | (hg != state["hg_lu"]), refactor, old)
    return (kept["lu"], kept["pivots"]), kept


def _stage_solver(solver, factors, y):
    """`solve_stage(r) -> (k, ok)` from `_factor`'s factors."""
    if isinstance(solver.jacobian, SparsityPattern):
        values, pattern = factors, solver.jacobian
        if isinstance(solver.linear_solver, lx.AbstractLinearSolver):
            rows, cols, n = jnp.asarray(pattern.rows), jnp.asarray(pattern.cols), y.size
            matvec = lambda v: jax.ops.segment_sum(values * v[cols], rows, num_segments=n)  # noqa: E731
            operator = lx.FunctionLinearOperator(matvec, jax.eval_shape(lambda: y))

            def solve_iteratively(rhs):
                sol = lx.linear_solve(operator, rhs, solver.linear_solver, throw=False)
                return sol.value, sol.result == lx.RESULTS.successful

            return solve_iteratively

        def solve_sparse(rhs):
            k = sparse_solve(values, rhs, pattern, solver.linear_solver)
            return k, jnp.all(jnp.isfinite(k))

        return solve_sparse
    lu, pivots = factors

    def solve_dense(rhs):
        k = lu_solve_unrolled(lu, pivots, rhs) if _unrolled(y.size) else jsl.lu_solve((lu, pivots), rhs)
        return k, jnp.all(jnp.isfinite(k))

    return solve_dense


def _unrolled(n: int) -> bool:
    """Whether `n` states get the unrolled LU (as the stage solver without reuse would)."""
    return isinstance(small_dense_solver(n), UnrolledLU)


__all__ = ["JacobianReuse", "reuse_init", "reuse_step"]
