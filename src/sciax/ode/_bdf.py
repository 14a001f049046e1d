"""`BDF`: variable-order NDF/BDF (orders 1-5) with Jacobian and factorisation reuse.

The method of choice for large stiff systems (method-of-lines PDEs, big kinetic
networks) at moderate tolerances, as `ode15s`, scipy's `BDF`, SUNDIALS CVODE and
Julia's `QNDF`/`FBDF`: one new-state solve per step by a simplified Newton
iteration whose matrix `I - cJ` is factorised only when the step size or order
changes or Newton converges slowly; the Jacobian itself is kept until Newton
fails with it. Formulas, step/order selection and the Newton test follow
Shampine & Reichelt (1997) as in scipy's `BDF` (`_bdf_core.py`).

The whole integration is one `equinox` checkpointed loop, so it runs under `jit`,
`vmap` (all members step in lockstep) and both forward and reverse mode; linear
solves are differentiated implicitly (`jax.lax.custom_linear_solve`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import lineax as lx
import numpy as np
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, PyTree, Real

from .. import _checks
from .._method import AbstractMethod
from .._solution import Solution
from ..linalg import SparseLU, SparsityPattern, sparse_jacobian, sparse_solve
from . import _bdf_core as core
from ._adjoint_loop import loop_kind
from ._bdf_krylov import KRYLOV_SOLVERS, KrylovLinear
from ._dae import check_mass_size, consistent_initial_state
from ._mass import MassMatrix, time_derivative, times_mass
from ._sparsity import as_jacobian, resolve_pattern

_MAX_RATIO_CHANGE, _MAX_AGE = 0.3, 20
_RUNNING, _DONE, _MAX_STEPS, _STEP_COLLAPSED = (np.int32(code) for code in range(4))


class _Linear(eqx.Module):
    """Jacobian, Newton matrix `I - cJ` (`M - cJ` with a mass matrix) and its solve, dense (LAPACK LU)
    or sparse (SuperLU)."""

    jacobian: Any = eqx.field(static=True)
    solver: SparseLU | None = eqx.field(static=True)
    mass: MassMatrix | None = eqx.field(static=True, default=None)

    def jac(self, f, t, y, args):
        if isinstance(self.jacobian, SparsityPattern):
            return sparse_jacobian(lambda x: f(t, x), y, self.jacobian).data
        if callable(self.jacobian):
            return jnp.asarray(self.jacobian(t, args[0](y), args[1]), y.dtype)
        return jax.jacfwd(lambda x: f(t, x))(y)

    def factor(self, jac, c):
        if self.mass is not None:
            matrix = self.mass.newton_matrix(jac, c, self._pattern)
            return matrix if isinstance(self.jacobian, SparsityPattern) else jsl.lu_factor(matrix)
        if isinstance(self.jacobian, SparsityPattern):
            return (-c * jac).at[self.jacobian.diagonal].add(1.0)
        return jsl.lu_factor(jnp.eye(jac.shape[0], dtype=jac.dtype) - c * jac)

    def solve(self, factors, rhs):
        if isinstance(self.jacobian, SparsityPattern):
            return sparse_solve(factors, rhs, self.jacobian, self.solver)
        return jsl.lu_solve(factors, rhs)

    def times_mass(self, v):
        return times_mass(self.mass, v)

    def initial_slope(self, f, t0, y0, f0, jac):
        """`y'(t0)`: `f0`, or with a mass matrix the consistent slope of the DAE."""
        if self.mass is None:
            return f0
        ft0 = time_derivative(f, t0, y0)
        return self.mass.initial_slope(jac, f0, ft0, self._pattern, self.solver)

    @property
    def _pattern(self):
        return self.jacobian if isinstance(self.jacobian, SparsityPattern) else None


class BDF(AbstractMethod):
    """Variable-order (1-5) NDF/BDF with Jacobian and factorisation reuse; for large stiff systems.

    **Arguments:**

    - `jacobian`: `"auto"` (dense, by `jax.jacfwd`), `"sparse"` (the model's
      `jacobian_sparsity`, e.g. any `sciax.pde.fd` model), a sparsity pattern
      (`sciax.linalg.SparsityPattern`, scipy sparse matrix, `BCOO`, `(n, n)` over the
      flattened state), or `jac(t, y, params) -> (n, n)` array. Sparse Jacobians
      cost one `jvp` per colour of the pattern and are factorised by SuperLU.
    - `linear_solver`: `None` or `sciax.linalg.SparseLU(...)` for sparse Jacobians;
      `lineax.GMRES(...)` or `lineax.BiCGStab(...)` with `jacobian="jvp"`, the
      matrix-free Newton–Krylov mode (CVODE's SPGMR): Jacobian–vector products only,
      nothing factorised, everything on the device and batched under `vmap`. The
      Krylov `rtol` is relative to the Newton right-hand side (1e-3 to 1e-5 is typical).
    - `preconditioner`: with `jacobian="jvp"`, `preconditioner(t, y, c, params)`
      returning a `sciax.linalg.AbstractPreconditioner` (or lineax operator) that
      approximates `(I - cJ)^-1` (`(M - cJ)^-1`) on states shaped like `y`; rebuilt
      whenever `c = h/α` changes. Without one Krylov converges slowly on stiff
      diffusion; an FFT/multigrid inverse of `I - c D ∇²` (`sciax.linalg.FastPoisson`,
      `Multigrid`) is the usual choice for reaction–diffusion.
    - `lazy_factorisation`: keep the factorisation of `I - cJ` through changes of
      `c` up to 30 % and for up to 20 steps, correcting Newton updates by
      `2/(1 + c/c_old)` (`True`, default; SUNDIALS CVODE's rule), or refactorise at
      every change of step or order (`False`; scipy's `BDF`, step for step).
    - `ndf`: the numerical differentiation formulas of Klopfenstein and Shampine
      (`True`, default; smaller error constants at orders 1-4) or plain BDFs.

    A model with a constant mass matrix (`sciax.ode.ODE(f, mass_matrix=M)`, index-1
    DAEs included) is integrated in the form of `ode15s` (Shampine, Reichelt &
    Kierzenka, SIAM Review 41, 1999): Newton on `(M - cJ) Δ = c f - M (ψ + d)`,
    starting from a consistent `y0` (`sciax.ode.consistent_initial_state`) and its
    consistent slope. With a sparse Jacobian, `M`'s nonzeros must lie inside the pattern.

    Options of `sciax.simulate`: `rtol`, `atol` (per component, mixed error test),
    `dt0` (first step; automatic by default), `max_steps` (step attempts, default
    16384), `adjoint` (`None`: reverse mode through a checkpointed loop;
    `diffrax.ForwardMode()` for `jax.jvp`/`jax.jacfwd`), `throw`. Forward-time integration only. `stats` counts
    `num_steps`, `num_accepted_steps`, `num_rejected_steps`, `num_rhs_evals`,
    `num_jacobian_evals`, `num_factorisations`, `num_newton_failures` (attempts whose
    Newton iteration failed: retried with a fresh Jacobian, else with half the step) and
    `num_nonfinite_linear_solves` (those among them where the Newton update was not
    finite: a singular Newton matrix, or a non-finite right-hand side).
    """

    jacobian: str | Callable | SparsityPattern = eqx.field(static=True, default="auto", converter=as_jacobian)
    linear_solver: SparseLU | lx.AbstractLinearSolver | None = eqx.field(static=True, default=None)
    ndf: bool = eqx.field(static=True, default=True)
    lazy_factorisation: bool = eqx.field(static=True, default=True)
    preconditioner: Callable | None = eqx.field(static=True, default=None)

    options: ClassVar[tuple[str, ...]] = ("rtol", "atol", "dt0", "max_steps", "adjoint", "throw")

    def __check_init__(self):
        if not (callable(self.jacobian) or isinstance(self.jacobian, SparsityPattern)) and self.jacobian not in (
            "auto",
            "sparse",
            "jvp",
        ):
            raise ValueError(
                "BDF: jacobian must be 'auto', 'sparse', 'jvp', a sparsity pattern (scipy sparse matrix, BCOO, "
                f"sciax.linalg.SparsityPattern) or a function jac(t, y, params) -> (n, n); got {self.jacobian!r}"
            )
        krylov = isinstance(self.jacobian, str) and self.jacobian == "jvp"
        if krylov and not isinstance(self.linear_solver, KRYLOV_SOLVERS):
            raise TypeError(
                "BDF: jacobian='jvp' never forms the Jacobian, so it needs linear_solver=lineax.GMRES(...) or "
                f"lineax.BiCGStab(...), got {type(self.linear_solver).__name__}"
            )
        if not krylov and self.linear_solver is not None and not isinstance(self.linear_solver, SparseLU):
            raise TypeError(
                "BDF: linear_solver must be None or sciax.linalg.SparseLU(...) (or a lineax Krylov solver with "
                f"jacobian='jvp'), got {type(self.linear_solver).__name__}"
            )
        if self.preconditioner is not None and not (krylov and callable(self.preconditioner)):
            raise TypeError(
                "BDF: preconditioner must be a function preconditioner(t, y, c, params) and needs jacobian='jvp' "
                f"with a Krylov linear_solver; got {self.preconditioner!r} with jacobian={self.jacobian!r}"
            )

    def solve(
        self,
        model,
        y0: PyTree[Array],
        ts: Real[Array, " T"],
        params: PyTree,
        *,
        rtol: float = 1e-6,
        atol: float = 1e-6,
        dt0: float | None = None,
        max_steps: int = 16384,
        adjoint: diffrax.AbstractAdjoint | None = None,
        throw: bool = True,
    ) -> Solution:
        kind = loop_kind("BDF", adjoint)
        rtol = _checks.check_positive("rtol", rtol)
        atol = _checks.check_positive("atol", atol)
        dt0 = _checks.check_positive("dt0", dt0)
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"simulate: max_steps must be a positive integer, got {max_steps!r}")
        pattern = resolve_pattern("BDF", self.jacobian, model, y0, params)
        mass = getattr(model, "mass", None)
        if mass is not None:
            check_mass_size("BDF", mass, y0)
            if isinstance(pattern, SparsityPattern):
                mass.on_pattern(pattern)  # M's nonzeros inside the pattern, or a clear error now
            y0 = consistent_initial_state(model, y0, ts[0], params)
        return _solve(self, model, pattern, y0, ts, params, rtol, atol, dt0, max_steps, kind, throw)


@eqx.filter_jit
def _solve(method: BDF, model, pattern, y0, ts, params, rtol, atol, dt0, max_steps, kind, throw) -> Solution:
    # One compiled program per model, method and options. Outside jit the loop would
    # otherwise be traced and compiled again on every call: its body closes over the
    # unravel and right-hand side made afresh here.
    y_flat, unravel = ravel_pytree(y0)
    ts = jnp.asarray(ts, y_flat.dtype)

    def f(t, y):
        return ravel_pytree(model.rhs(t, unravel(y), params))[0]

    mass = getattr(model, "mass", None)
    lazy = method.lazy_factorisation
    if isinstance(pattern, str) and pattern == "jvp":
        linear = KrylovLinear(f, (unravel, params), method.linear_solver, method.preconditioner, mass)
        lazy = False  # the preconditioner is rebuilt for each new c, so the operator is exact
    else:
        linear = _Linear(pattern, method.linear_solver, mass)
    setup = (rtol, atol, dt0, max_steps, method.ndf, lazy, kind)
    state, stats = _integrate(f, linear, (unravel, params), y_flat, ts, *setup)
    success = state["status"] == _DONE
    ys = jax.vmap(unravel)(jnp.where(jnp.arange(ts.size)[:, None] < state["idx"], state["ys"], jnp.inf))
    if throw:
        ys = _raise_if_failed(ys, state, ts)
    return Solution(ts=ts, ys=ys, stats=stats, success=success, labels=model.labels())


def _raise_if_failed(ys, state, ts):
    message = (
        "sciax.simulate: BDF stopped before the last output time: the step budget (max_steps) was used up "
        "or the step size collapsed below round-off (a non-finite right-hand side, or a singular Newton "
        "matrix); see stats['t_reached'] for where, or pass throw=False"
    )
    return eqx.error_if(ys, state["status"] != _DONE, message)


def _coefficients(ndf: bool, dtype):
    kappa = core.KAPPA if ndf else np.zeros_like(core.KAPPA)
    alpha = (1.0 - kappa) * core.GAMMA
    error_const = kappa * core.GAMMA + 1.0 / np.arange(1, core.MAX_ORDER + 2)
    return jnp.asarray(alpha, dtype), jnp.asarray(error_const, dtype)


def _integrate(f, linear, args, y0, ts, rtol, atol, dt0, max_steps, ndf, lazy, kind, members=1):
    """The loop of `BDF`; with `members > 1` the flat state is `members` equal blocks (a shared-step
    ensemble) and every norm is the largest over the blocks, so each member meets the tolerance."""
    dtype = y0.dtype
    norm = functools.partial(core.rms, blocks=members)
    alpha, error_const = _coefficients(ndf, dtype)
    t0, t_end = ts[0], ts[-1]
    f0 = f(t0, y0)
    jac = linear.jac(f, t0, y0, args)
    slope = linear.initial_slope(f, t0, y0, f0, jac)
    if dt0 is not None:
        h0 = jnp.asarray(dt0, dtype)
    elif linear.mass is None:
        h0 = core.initial_step(f, t0, y0, f0, rtol, atol, t_end - t0, norm)
    else:
        h0 = core.initial_step_dae(y0, slope, rtol, atol, t_end - t0)
    h0 = jnp.where(t_end > t0, h0, 1.0)  # a zero-length span only writes y0
    d_table = jnp.zeros((core.MAX_ORDER + 3, y0.size), dtype).at[0].set(y0).at[1].set(h0 * slope)
    # jnp, not Python's max: rtol may be an array (then traced through the jitted solve).
    newton_tol = jnp.maximum(10 * np.finfo(dtype).eps / rtol, jnp.minimum(0.03, jnp.sqrt(rtol)))
    zero = jnp.zeros((), jnp.int32)
    state = dict(
        t=t0,
        h=h0,
        d_table=d_table,
        order=jnp.ones((), jnp.int32),
        n_equal=zero,
        jac=jac,
        jac_fresh=jnp.array(True),
        factors=linear.factor(jac, h0 / alpha[1]),
        factors_valid=jnp.array(False),
        c_factored=h0 / alpha[1],
        factor_age=zero,
        ys=jnp.zeros((ts.size, y0.size), dtype),
        idx=zero,
        status=zero,
        steps=zero,
        accepted=zero,
        rejected=zero,
        nfev=jnp.full((), 2, jnp.int32),
        njev=jnp.ones((), jnp.int32),
        nlu=zero,
        newton_failures=zero,
        nonfinite_solves=zero,
    )
    step = _Stepper(f, linear, args, ts, rtol, atol, max_steps, newton_tol, alpha, error_const, lazy, members)
    state = eqxi.while_loop(
        lambda s: s["status"] == _RUNNING, step.iterate, state, max_steps=max_steps + ts.size + 1, kind=kind
    )
    stats = dict(
        num_steps=state["steps"],
        num_accepted_steps=state["accepted"],
        num_rejected_steps=state["rejected"],
        num_rhs_evals=state["nfev"],
        num_jacobian_evals=state["njev"],
        num_factorisations=state["nlu"],
        num_newton_failures=state["newton_failures"],
        num_nonfinite_linear_solves=state["nonfinite_solves"],
        max_steps=jnp.asarray(max_steps),
        t_reached=jnp.where(state["status"] == _DONE, t_end, state["t"]),
    )
    return state, stats


class _Stepper(eqx.Module):
    f: Callable
    linear: _Linear
    args: Any
    ts: Array
    rtol: float
    atol: float
    max_steps: int
    newton_tol: float
    alpha: Array
    error_const: Array
    lazy_factorisation: bool = eqx.field(static=True)
    members: int = eqx.field(static=True, default=1)

    def _norm(self, x):
        return core.rms(x, blocks=self.members)

    def iterate(self, s):
        """One loop iteration: write the next output if the last step reached it, else attempt a step."""
        pending = self.ts[s["idx"]] <= s["t"]
        return jax.lax.cond(pending, lambda s: self._write_output(s), lambda s: self._attempt(s), s)

    def _write_output(self, s):
        t_eval = self.ts[s["idx"]]
        y = core.interpolate(s["d_table"], s["order"], s["t"], s["h"], t_eval)
        idx = s["idx"] + 1
        status = jnp.where(idx == self.ts.size, _DONE, _RUNNING)
        return dict(s, ys=s["ys"].at[s["idx"]].set(y), idx=idx, status=status)

    def _attempt(self, s):
        t_end = self.ts[-1]
        # Land on t_end: shrink the last step (and the history with it).
        factor = jnp.minimum(1.0, (t_end - s["t"]) / s["h"])
        clipped = factor < 1.0
        # A cond, not a where: the rewrite is a pass over the whole table, needed on the last step only.
        d_table = jax.lax.cond(
            clipped, lambda: core.change_step(s["d_table"], s["order"], factor), lambda: s["d_table"]
        )
        h = s["h"] * factor
        s = dict(s, d_table=d_table, h=h)
        order = s["order"]
        t_new = jnp.where(clipped, t_end, s["t"] + h)
        c = h / self.alpha[order]
        # CVODE's rule (Hindmarsh et al. 2005, §2.1): keep the factorisation of I - c'J while
        # c/c' stays within 30 % and for at most 20 steps, scaling corrections by 2/(1 + c/c').
        ratio = c / s["c_factored"]
        if self.lazy_factorisation:
            refactor = ~s["factors_valid"] | (jnp.abs(ratio - 1) > _MAX_RATIO_CHANGE) | (s["factor_age"] >= _MAX_AGE)
        else:
            # Any real change of c (round-off in recomputing c must not count as one).
            refactor = ~s["factors_valid"] | (jnp.abs(ratio - 1) > 1e-12)
        factors = jax.lax.cond(refactor, lambda: self.linear.factor(s["jac"], c.astype(h.dtype)), lambda: s["factors"])
        nlu = s["nlu"] + refactor.astype(jnp.int32)
        correction = jnp.where(refactor, 1.0, 2.0 / (1.0 + ratio))
        s = dict(
            s,
            c_factored=jnp.where(refactor, c, s["c_factored"]),
            factor_age=jnp.where(refactor, 0, s["factor_age"] + 1).astype(jnp.int32),
        )
        y_pred = core.predict(d_table, order)
        scale = self.atol + self.rtol * jnp.abs(y_pred)
        psi = core.psi(d_table, order, self.alpha)
        converged, nonfinite, n_iter, y_new, d = self._newton(t_new, y_pred, c, psi, factors, scale, correction)
        s = dict(s, factors=factors, factors_valid=jnp.array(True), nlu=nlu, nfev=s["nfev"] + n_iter)
        s = dict(
            s,
            newton_failures=s["newton_failures"] + (~converged).astype(jnp.int32),
            nonfinite_solves=s["nonfinite_solves"] + nonfinite.astype(jnp.int32),
        )
        s = dict(s, steps=s["steps"] + 1)
        t_now = jax.lax.stop_gradient(s["t"])
        collapsed = h < 10 * jnp.abs(jnp.nextafter(t_now, jnp.inf) - t_now)
        out_of_steps = s["steps"] > self.max_steps
        failed = jnp.where(out_of_steps, _MAX_STEPS, _STEP_COLLAPSED)
        s = jax.lax.cond(
            converged,
            lambda: self._error_test(s, t_new, y_new, d, n_iter),
            lambda: self._newton_failed(s, t_new, y_pred),
        )
        return dict(s, status=jnp.where(out_of_steps | collapsed, failed, s["status"]))

    def _newton(self, t_new, y_pred, c, psi, factors, scale, correction):
        """Simplified Newton on the corrector, at most NEWTON_MAXITER iterations, stopped by the rate test."""
        tol = self.newton_tol
        carry = dict(
            y=y_pred,
            d=jnp.zeros_like(y_pred),
            old=jnp.full((), jnp.nan, y_pred.dtype),
            active=jnp.array(True),
            converged=jnp.array(False),
            nonfinite=jnp.array(False),
            n_iter=jnp.zeros((), jnp.int32),
        )
        for k in range(core.NEWTON_MAXITER):

            def iteration(carry, k=k):
                fy = self.f(t_new, carry["y"])
                residual = c * fy - self.linear.times_mass(psi + carry["d"])
                dy = correction * self.linear.solve(factors, residual)
                norm = self._norm(dy / scale)
                rate = norm / carry["old"]
                remaining = core.NEWTON_MAXITER - k
                diverging = ~jnp.isfinite(norm)
                if k > 0:
                    diverging = diverging | (rate >= 1) | (rate**remaining / (1 - rate) * norm > tol)
                done = norm == 0
                if k > 0:
                    done = done | (rate / (1 - rate) * norm < tol)
                update = ~diverging
                return dict(
                    y=jnp.where(update, carry["y"] + dy, carry["y"]),
                    d=jnp.where(update, carry["d"] + dy, carry["d"]),
                    old=norm,
                    active=update & ~done,
                    converged=update & done,
                    nonfinite=carry["nonfinite"] | ~jnp.isfinite(norm),
                    n_iter=carry["n_iter"] + 1,
                )

            carry = jax.lax.cond(carry["active"], iteration, lambda carry: carry, carry)
        return carry["converged"], carry["nonfinite"], carry["n_iter"], carry["y"], carry["d"]

    def _newton_failed(self, s, t_new, y_pred):
        """Newton did not converge: first with a fresh Jacobian at the predictor, then with half the step."""

        def fresh_jacobian():
            jac = self.linear.jac(self.f, t_new, y_pred, self.args)
            # A retry of the same step, not a new attempt.
            return dict(
                s,
                jac=jac,
                jac_fresh=jnp.array(True),
                factors_valid=jnp.array(False),
                njev=s["njev"] + 1,
                steps=s["steps"] - 1,
            )

        def halve():
            return self._rescale(dict(s, rejected=s["rejected"] + 1), s["order"], 0.5)

        return jax.lax.cond(s["jac_fresh"], halve, fresh_jacobian)

    def _rescale(self, s, order, factor):
        factor = jnp.asarray(factor, s["h"].dtype)
        return dict(
            s,
            h=s["h"] * factor,
            d_table=core.change_step(s["d_table"], order, factor),
            order=order,
            n_equal=jnp.zeros((), jnp.int32),
        )

    def _error_test(self, s, t_new, y_new, d, n_iter):
        order = s["order"]
        safety = 0.9 * (2 * core.NEWTON_MAXITER + 1) / (2 * core.NEWTON_MAXITER + n_iter)
        scale = self.atol + self.rtol * jnp.abs(y_new)
        error_norm = self._norm(self.error_const[order] * d / scale)

        def reject():
            factor = jnp.maximum(core.MIN_FACTOR, safety * error_norm ** (-1.0 / (order + 1)))
            return self._rescale(dict(s, rejected=s["rejected"] + 1), order, factor)

        def accept():
            d_table = core.accept(s["d_table"], order, d)
            new = dict(s, t=t_new, d_table=d_table, n_equal=s["n_equal"] + 1, jac_fresh=jnp.array(False))
            new = dict(new, accepted=s["accepted"] + 1)
            return jax.lax.cond(
                new["n_equal"] >= order + 1, lambda: self._new_order(new, error_norm, safety, scale), lambda: new
            )

        return jax.lax.cond(error_norm > 1, reject, accept)

    def _new_order(self, s, error_norm, safety, scale):
        """After q+1 equal steps: the order (q-1, q or q+1) that allows the largest next step."""
        order, d_table = s["order"], s["d_table"]
        inf = jnp.full((), jnp.inf, error_norm.dtype)
        lower = jnp.where(order > 1, self._norm(self.error_const[order - 1] * d_table[order] / scale), inf)
        upper = jnp.where(
            order < core.MAX_ORDER, self._norm(self.error_const[order + 1] * d_table[order + 2] / scale), inf
        )
        norms = jnp.stack([lower, error_norm, upper])
        factors = norms ** (-1.0 / (order + jnp.arange(3)))
        new_order = order + jnp.argmax(factors).astype(jnp.int32) - 1
        factor = jnp.minimum(core.MAX_FACTOR, safety * jnp.max(factors))
        return self._rescale(s, new_order, factor)


__all__ = ["BDF"]
