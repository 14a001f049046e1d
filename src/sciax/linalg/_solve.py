"""`solve`: one entry point for linear systems `A x = b` over lineax, with sciax's operators,
preconditioners, multigrid and fast solvers, and a result reporting iterations and residual."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float, Int

from ._fast_poisson import FastPoisson
from ._lineax_solvers import DirectSolver, MultigridSolver
from ._multigrid import Multigrid
from ._operator import GridOperator
from ._preconditioner import AbstractPreconditioner

KRYLOV = ("cg", "bicgstab", "gmres")
DENSE = ("lu", "cholesky", "qr")
METHODS = KRYLOV + DENSE + ("multigrid", "fast")


class LinearSolveResult(eqx.Module):
    """What `sciax.linalg.solve` returns.

    - `value`: the solution `x`, shape of `b`.
    - `success`: bool scalar, the method met its tolerance.
    - `num_steps`: iterations used (Krylov steps, V-cycles; 1 for direct methods).
    - `residual`: `||b - A x||_2 / ||b||_2` recomputed from `x` (0 if `b = 0`).
    - `residual_max`: `max|b - A x|`.
    - `method`: the method used (a name).
    - `lineax`: lineax's own `Solution` (for everything else).
    """

    value: Float[Array, "..."]
    success: Bool[Array, ""]
    num_steps: Int[Array, ""]
    residual: Float[Array, ""]
    residual_max: Float[Array, ""]
    method: str = eqx.field(static=True)
    lineax: Any = None


def _as_lineax(operator):
    if isinstance(operator, GridOperator):
        return operator.as_lineax()
    if isinstance(operator, lx.AbstractLinearOperator):
        return operator
    if isinstance(operator, (jax.Array, np.ndarray)) and jnp.ndim(operator) == 2:
        return lx.MatrixLinearOperator(jnp.asarray(operator))
    raise TypeError(
        "solve: operator must be a sciax.linalg.GridOperator, a lineax.AbstractLinearOperator or a 2-D matrix, "
        f"got {type(operator).__name__}"
    )


def _default_method(operator, lx_op) -> str:
    if isinstance(lx_op, lx.MatrixLinearOperator):
        return "lu"
    if lx.is_symmetric(lx_op) and (lx.is_positive_semidefinite(lx_op) or lx.is_negative_semidefinite(lx_op)):
        return "cg"
    return "gmres"


def _check_cg(lx_op, operator):
    if not lx.is_symmetric(lx_op):
        raise ValueError(
            "solve: method='cg' needs a symmetric definite operator, but this operator is not tagged symmetric "
            "(lineax.symmetric_tag); use method='gmres' or 'bicgstab', or tag it if it really is symmetric"
        )
    if not (lx.is_positive_semidefinite(lx_op) or lx.is_negative_semidefinite(lx_op)):
        raise ValueError(
            "solve: method='cg' needs a definite operator, but this one is tagged neither positive nor negative "
            "semidefinite (e.g. Helmholtz with shift > 0 is indefinite); use method='gmres' or 'bicgstab'"
        )


def _runtime_cg_check(lx_op, b):
    # Two random products: catches a wrong symmetric/definite tag on a matrix-free operator.
    key = jax.random.PRNGKey(0)
    x, y = jax.random.normal(key, (2,) + b.shape, b.dtype)
    ax, ay = lx_op.mv(x), lx_op.mv(y)
    eps = jnp.finfo(b.dtype).eps
    scale = jnp.linalg.norm(ax) * jnp.linalg.norm(y) + jnp.linalg.norm(ay) * jnp.linalg.norm(x)
    asym = jnp.abs(jnp.vdot(ax, y) - jnp.vdot(x, ay)) > 100 * jnp.sqrt(eps) * scale
    sign = -1.0 if lx.is_negative_semidefinite(lx_op) else 1.0
    indefinite = sign * jnp.vdot(x, ax) < -100 * jnp.sqrt(eps) * scale
    return asym, indefinite


def _check_b(lx_op, b):
    struct = lx_op.in_structure()
    if not isinstance(struct, jax.ShapeDtypeStruct):
        return b
    b = jnp.asarray(b)
    if b.shape != struct.shape or lx_op.out_structure().shape != b.shape:
        raise ValueError(
            f"solve: b has shape {b.shape}, but the operator maps shape {struct.shape} to "
            f"{lx_op.out_structure().shape}; b must have the operator's output shape (and be square)"
        )
    return b.astype(struct.dtype)


def _compatible(b, project: bool):
    """A singular (constant null space) problem needs `mean(b) = 0` (the integral of the source
    balances the boundary fluxes). `project=True` removes the mean; otherwise a mean above
    round-off raises."""
    mean = jnp.mean(b)
    if project:
        return b - mean, jnp.asarray(False)
    tol = 1000 * jnp.finfo(b.dtype).eps * jnp.max(jnp.abs(b))
    return b, jnp.abs(mean) > tol


def solve(
    operator,
    b: Float[ArrayLike, "..."],
    method: str | lx.AbstractLinearSolver | None = None,
    *,
    rtol: float | None = None,
    atol: float = 0.0,
    max_steps: int | None = None,
    restart: int = 20,
    preconditioner: AbstractPreconditioner | lx.AbstractLinearOperator | None = None,
    x0: Float[ArrayLike, "..."] | None = None,
    project: bool = False,
    throw: bool = True,
) -> LinearSolveResult:
    """Solve `A x = b` with `A` a `GridOperator`, a lineax operator or a matrix.

    **Arguments:**

    - `method`: `"cg"` (symmetric definite; a negative definite `A` is solved as
      `(-A) x = -b`), `"bicgstab"`, `"gmres"` (restarted every `restart` steps),
      `"lu"`, `"cholesky"`, `"qr"` (dense; a `GridOperator` is materialised, small
      problems only), `"multigrid"` (V-cycles to tolerance), `"fast"` (FFT/DST/DCT,
      `laplacian_operator` only), or any `lineax.AbstractLinearSolver`. Default: CG
      for symmetric definite tags, LU for matrices, GMRES otherwise.
    - `rtol`, `atol`: converged when `max|b - A x| <= atol + rtol max|b|` (lineax
      additionally asks the last update to be small relative to `x`). Default `rtol`:
      `1e-8` in float64, `1e-5` in float32.
    - `max_steps`: iteration limit (Krylov steps or V-cycles).
    - `preconditioner`: `sciax.linalg.Jacobi(A)`, `sciax.linalg.Multigrid(A)`,
      `sciax.linalg.FastPoisson(A)` or a lineax operator, approximating `A^{-1}`.
    - `x0`: initial guess (iterative methods).
    - `project`: for singular `A` (a `GridOperator` with constant null space: pure
      Neumann/periodic, no shift) subtract the mean of `b` instead of raising when
      `mean(b) != 0`. The returned solution is always the zero-mean one.
    - `throw`: raise on failure (not converged: the message gives the residual and
      the iterations; a singular matrix for `"lu"`, `"cholesky"`, `"qr"`: the message
      says so); `False` returns the result with `success=False` (and, for a singular
      matrix, `result.lineax.result == lineax.RESULTS.singular`).

    The dense factorisations call a matrix singular when it is singular to working
    precision, LAPACK's test `rcond < eps`: the solution is not finite, or the lower
    bound `||A||_1 max(||x||_1 / ||b||_1, ||A^-1 z||_1 / ||z||_1)` (`z` a fixed random
    vector, one more solve with the same factors) of the condition number reaches `1/eps`.

    Differentiable (implicit differentiation by lineax) with respect to `b` and the
    operator's arrays (e.g. the coefficient of `diffusion_operator`); `jit`/`vmap` safe.
    """
    lx_op = _as_lineax(operator)
    b = _check_b(lx_op, b)
    dtype = b.dtype
    if rtol is None:
        rtol = 1e-8 if dtype == jnp.float64 else 1e-5
    if not (rtol >= 0 and atol >= 0):
        raise ValueError(f"solve: rtol and atol must be >= 0, got rtol={rtol!r}, atol={atol!r}")
    if method is None:
        method = _default_method(operator, lx_op)
    name = method if isinstance(method, str) else type(method).__name__
    if isinstance(method, str) and method not in METHODS:
        raise ValueError(f"solve: unknown method {method!r}; expected one of {METHODS} or a lineax solver")
    singular = isinstance(operator, GridOperator) and operator.singular
    if singular and method in DENSE:
        raise ValueError(
            f"solve: method={method!r} cannot solve a singular operator (constant null space); "
            "use 'cg', 'multigrid' or 'fast'"
        )
    bad_mean = jnp.asarray(False)
    if singular:
        b, bad_mean = _compatible(b, project)
        if not isinstance(bad_mean, jax.core.Tracer) and bool(bad_mean):
            raise ValueError(
                f"solve: the operator is singular (pure Neumann/periodic, constants in its null space) and b has mean "
                f"{float(jnp.mean(b)):.3g}; a solution exists only for mean-zero b (source balancing the boundary "
                "fluxes). Subtract the mean or pass project=True"
            )
    negate = False
    options: dict[str, Any] = {}
    if method == "cg":
        _check_cg(lx_op, operator)
        negate = lx.is_negative_semidefinite(lx_op)
    if preconditioner is not None:
        if method not in KRYLOV:
            raise ValueError(f"solve: preconditioner is used only by {KRYLOV}, not method={name!r}")
        options["preconditioner"] = _precond_operator(preconditioner, lx_op, negate, method == "cg")
    if x0 is not None:
        options["y0"] = jnp.asarray(x0, dtype).reshape(b.shape)
    solver = _solver(method, operator, rtol, atol, max_steps, restart, b)
    res = _run(lx_op, b, solver, options, negate, name, method == "cg", singular)
    asym, indefinite = res.pop("checks")
    if throw:
        _raise(res, name, asym, indefinite, bad_mean, _failure_context(solver, b))
    return LinearSolveResult(method=name, **res)


def _precond_operator(pc, lx_op, negate: bool, cg: bool):
    if isinstance(pc, AbstractPreconditioner):
        if pc.structure().shape != lx_op.in_structure().shape:
            raise ValueError(
                f"solve: preconditioner acts on shape {pc.structure().shape}, but the operator on "
                f"{lx_op.in_structure().shape}"
            )
        return pc.as_lineax(negate=negate, tags=frozenset({lx.positive_semidefinite_tag}) if cg else frozenset())
    if isinstance(pc, lx.AbstractLinearOperator):
        pc = -pc if negate else pc
        if cg and not lx.is_positive_semidefinite(pc):
            pc = lx.TaggedLinearOperator(pc, frozenset({lx.positive_semidefinite_tag, lx.symmetric_tag}))
        return pc
    raise TypeError(
        "solve: preconditioner must be a sciax.linalg preconditioner (Jacobi, Multigrid, FastPoisson) "
        f"or a lineax operator, got {type(pc).__name__}"
    )


def _solver(method, operator, rtol, atol, max_steps, restart, b):
    if isinstance(method, lx.AbstractLinearSolver):
        return method
    # lineax scales tolerances per entry, |r_i| <= atol + rtol |b_i|; a max-norm criterion
    # relative to max|b| is what a user means by rtol, so fold it into atol.
    scale = jax.lax.stop_gradient(atol + rtol * jnp.max(jnp.abs(b)))
    scale = jnp.where(scale > 0, scale, jnp.finfo(b.dtype).tiny)
    if method == "cg":
        return lx.CG(rtol=rtol, atol=scale, max_steps=max_steps)
    if method == "bicgstab":
        return lx.BiCGStab(rtol=rtol, atol=scale, max_steps=max_steps)
    if method == "gmres":
        return lx.GMRES(rtol=rtol, atol=scale, max_steps=max_steps, restart=restart, stagnation_iters=restart)
    if method in DENSE:
        return {"lu": lx.LU(), "cholesky": lx.Cholesky(), "qr": lx.QR()}[method]
    if not isinstance(operator, GridOperator):
        raise TypeError(f"solve: method={method!r} needs a sciax.linalg.GridOperator, got {type(operator).__name__}")
    if method == "multigrid":
        return MultigridSolver(Multigrid(operator), rtol, atol, 100 if max_steps is None else max_steps)
    return DirectSolver(FastPoisson(operator))


@eqx.filter_jit
def _run(lx_op, b, solver, options, negate, name, cg, singular):
    checks = _runtime_cg_check(lx_op, b) if cg else (jnp.asarray(False), jnp.asarray(False))
    op, rhs = (-lx_op, -b) if negate else (lx_op, b)
    if cg and negate:
        op = lx.TaggedLinearOperator(op, frozenset({lx.symmetric_tag, lx.positive_semidefinite_tag}))
    dense = isinstance(solver, (lx.LU, lx.Cholesky, lx.QR)) and not isinstance(op, lx.MatrixLinearOperator)
    if dense:  # materialise (on flattened vectors) for the factorisations
        op, rhs = lx.MatrixLinearOperator(op.as_matrix(), op.tags), rhs.reshape(-1)
    sol = lx.linear_solve(op, rhs, solver, options=options, throw=False)
    if isinstance(solver, (lx.LU, lx.Cholesky, lx.QR)):
        # lineax reports only non-finite output as singular; a finite answer from a matrix
        # singular to working precision is garbage that the residual alone does not reveal.
        bad = _singular_to_working_precision(op, rhs, solver, sol)
        sol = eqx.tree_at(lambda s: s.result, sol, lx.RESULTS.where(bad, lx.RESULTS.singular, sol.result))
    x = sol.value.reshape(b.shape)
    if singular:
        x = x - jnp.mean(x)
    r = b - lx_op.mv(x)
    bnorm = jnp.linalg.norm(b)
    residual = jnp.where(bnorm > 0, jnp.linalg.norm(r) / jnp.where(bnorm > 0, bnorm, 1), jnp.linalg.norm(r))
    steps = sol.stats.get("num_steps", 1) if isinstance(sol.stats, dict) else 1
    success = (sol.result == lx.RESULTS.successful) & jnp.all(jnp.isfinite(x))
    return dict(
        value=x,
        success=success,
        num_steps=jnp.asarray(steps),
        residual=residual,
        residual_max=jnp.max(jnp.abs(r)),
        lineax=sol,
        checks=checks,
    )


def _singular_to_working_precision(op, rhs, solver, sol):
    """LAPACK's `rcond < eps` test, from a lower bound of the 1-norm condition number: the solution
    and one more solve (same factors) with a fixed random vector; non-finite output counts too."""
    a = jax.lax.stop_gradient(op.as_matrix())
    z = jax.random.normal(jax.random.PRNGKey(1), rhs.shape, rhs.dtype)
    y = lx.linear_solve(lx.MatrixLinearOperator(a), z, solver, state=sol.state, throw=False).value
    x = jax.lax.stop_gradient(sol.value)
    bnorm = jnp.sum(jnp.abs(rhs))
    inverse_norm = jnp.maximum(
        jnp.sum(jnp.abs(y)) / jnp.sum(jnp.abs(z)),
        jnp.where(bnorm > 0, jnp.sum(jnp.abs(x)) / jnp.where(bnorm > 0, bnorm, 1), 0),
    )
    cond = jnp.max(jnp.sum(jnp.abs(a), axis=0)) * inverse_norm
    finite = jnp.all(jnp.isfinite(x)) & jnp.all(jnp.isfinite(y))
    return ~finite | (cond * jnp.finfo(a.dtype).eps >= 1)


def _failure_context(solver, b):
    """Static facts for the failure messages: the matrix size, or the multigrid hierarchy."""
    if isinstance(solver, (lx.LU, lx.Cholesky, lx.QR)):
        return {"dense": b.size, "cholesky": isinstance(solver, lx.Cholesky)}
    if isinstance(solver, MultigridSolver):
        return {"levels": solver.multigrid.shapes}
    return {}


def _singular_message(name, context):
    n = context["dense"]
    what = "singular or not definite" if context["cholesky"] else "singular"
    return (
        f"solve: the {n}x{n} matrix is {what} (to working precision: condition number >= 1/eps, or non-finite "
        f"factors), so method={name!r} has no unique solution to give. Fix the operator (e.g. a missing boundary "
        "condition, a repeated or zero row), or for a least-squares / minimum-norm solution pass "
        "method=lineax.SVD() (or lineax.AutoLinearSolver(well_posed=False))"
    )


def _not_converged_advice(name, context):
    if "levels" not in context:
        return "raise max_steps, loosen rtol/atol, or add a preconditioner (sciax.linalg.Multigrid)"
    levels = context["levels"]
    hierarchy = " -> ".join(str(s) for s in levels)
    return (
        f"grid shape {levels[0]}, V-cycle levels {hierarchy} (the last solved densely); raise max_steps or "
        "loosen rtol/atol. Point smoothers assume near-isotropic spacing and smooth coefficients: otherwise "
        "use method='cg' (symmetric) or 'gmres' with preconditioner=sciax.linalg.Multigrid(A)"
    )


def _raise(res, name, asym, indefinite, bad_mean, context):
    failed = ~res["success"]
    singular = (res["lineax"].result == lx.RESULTS.singular) if "dense" in context else jnp.asarray(False)
    concrete = not any(isinstance(v, jax.core.Tracer) for v in (asym, indefinite, bad_mean, failed, singular))
    if concrete:
        if bool(jnp.any(asym)):
            raise ValueError(
                f"solve: method={name!r} needs a symmetric operator, but A is not symmetric "
                "(runtime check x.Ay != y.Ax); use method='gmres' or 'bicgstab'"
            )
        if bool(jnp.any(indefinite)):
            raise ValueError(
                f"solve: method={name!r} needs a definite operator, but A is indefinite "
                "(runtime check found x.Ax of the wrong sign); use method='gmres' or 'bicgstab'"
            )
        if bool(jnp.any(singular)):
            raise RuntimeError(_singular_message(name, context))
        if bool(jnp.any(failed)):
            nonfinite = "" if bool(jnp.all(jnp.isfinite(res["value"]))) else " (the solution is not finite)"
            raise RuntimeError(
                f"solve: method={name!r} did not converge{nonfinite}: "
                f"residual ||b - Ax||/||b|| = {float(jnp.max(res['residual'])):.3e} "
                f"(max|b - Ax| = {float(jnp.max(res['residual_max'])):.3e}) after {int(jnp.max(res['num_steps']))} "
                f"iterations; {_not_converged_advice(name, context)}"
            )
        return
    res["value"] = eqx.error_if(
        res["value"],
        asym,
        f"solve: method={name!r} needs a symmetric operator, but A is not "
        "symmetric (runtime check); use method='gmres'",
    )
    res["value"] = eqx.error_if(
        res["value"],
        indefinite,
        f"solve: method={name!r} needs a definite operator, but A is indefinite (runtime check); use method='gmres'",
    )
    res["value"] = eqx.error_if(
        res["value"],
        bad_mean,
        "solve: singular operator (constant null space) needs mean-zero b; subtract the mean or pass project=True",
    )
    if "dense" in context:
        res["value"] = eqx.error_if(res["value"], singular, _singular_message(name, context))
    res["value"] = eqx.error_if(
        res["value"],
        failed,
        f"solve: method={name!r} did not converge (read residual and "
        f"num_steps with throw=False); {_not_converged_advice(name, context)}",
    )
