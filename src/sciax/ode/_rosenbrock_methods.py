"""Rosenbrock–Wanner stiff methods `Rodas5P`, `Rodas4`, `Ros3P`, `Ros34PW2`: thin modules over
the generic solver in `_rosenbrock.py`.

They suit stiff problems of small to moderate size (chemical kinetics, circuits,
method-of-lines PDEs): one Jacobian and one LU factorisation per step and no Newton
iteration, so usually far fewer and cheaper steps than ESDIRK methods (`Kvaerno5`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np

from .._solution import Solution
from ..linalg import SparseLU, SparsityPattern, UnrolledLU
from ._dae import check_mass_size, consistent_initial_state
from ._diffrax_method import AbstractDiffraxMethod
from ._failure import LINEAR, FailureReport
from ._mass import MassMatrix
from ._rosenbrock import ITERATIVE_SOLVERS, RosenbrockSolver, persistent_failure_step
from ._rosenbrock_reuse import JacobianReuse
from ._rosenbrock_tableaus import RODAS4, RODAS5P, ROS3P, ROS34PW2, RosenbrockTableau
from ._sparsity import as_jacobian, is_sparse, resolve_pattern

_JACOBIANS = ("auto", "jacfwd", "jvp", "sparse")


def _as_reuse(reuse):
    """`True` -> the default `JacobianReuse()`, `False`/`None` -> `None`."""
    if reuse is True:
        return JacobianReuse()
    if reuse is False or reuse is None:
        return None
    if not isinstance(reuse, JacobianReuse):
        raise TypeError(
            f"reuse_jacobian must be True, False or a sciax.ode.JacobianReuse(...), got {type(reuse).__name__}"
        )
    return reuse


class AbstractRosenbrock(AbstractDiffraxMethod):
    """Shared options of the Rosenbrock methods.

    **Arguments:**

    - `jacobian`: how `J = ∂f/∂y` is obtained, once per step:
        - `"auto"` (default): `"jacfwd"`, or `"jvp"` when `linear_solver` is iterative;
        - `"jacfwd"`: a dense `(n, n)` matrix by `jax` forward mode (n
          Jacobian–vector products, batched);
        - `"jvp"`: matrix-free, Jacobian–vector products only (needs an iterative
          `linear_solver`, e.g. `lineax.GMRES`); for large systems such as a
          method-of-lines PDE with 10^4 states;
        - `"sparse"`: from the model's sparsity pattern (`model.jacobian_sparsity`,
          known to every `sciax.pde.fd` model) by one `jvp` per colour of its
          columns (`sciax.linalg.sparse_jacobian`), with stage systems solved by
          sparse LU (`sciax.linalg.SparseLU`, SuperLU, one factorisation per step)
          or by `linear_solver` if it is an iterative lineax solver;
        - a sparsity pattern (`sciax.linalg.SparsityPattern`, a scipy sparse
          matrix, a `BCOO` or a dense boolean array, `(n, n)` over the flattened
          state): as `"sparse"`, with this pattern;
        - a function `jac(t, y, params)` returning the Jacobian over the flattened
          state (`jax.flatten_util.ravel_pytree` order) as an `(n, n)` array or as a
          `lineax.AbstractLinearOperator` (e.g. `lineax.TridiagonalLinearOperator`).
    - `linear_solver`: the `lineax` solver of the stage systems `(I - hγJ) k = r`,
      factorised once per step and reused by every stage. Default (`None`): for a
      dense Jacobian, `sciax.linalg.UnrolledLU()` up to 12 states (an order of
      magnitude faster than LAPACK for small systems under `vmap`) and
      `lineax.LU()` above; for a Jacobian given as a lineax operator,
      `lineax.AutoLinearSolver(well_posed=True)` (e.g. a tridiagonal solve). For
      large systems pass e.g. `lineax.GMRES(rtol=1e-10, atol=1e-10, restart=20)`.

    - `reuse_jacobian`: W-methods only (`Ros34PW2`): `True` (or a
      `JacobianReuse(max_age=, max_step_ratio=)`) keeps the Jacobian across steps,
      re-evaluating it after `max_age` (20) steps, when the step size has changed by
      more than `max_step_ratio` (3x) since, and at once when a step made with a kept
      Jacobian fails the error test; the factorisation of `I - hγJ` is reused while `h`
      is unchanged. Needs a Jacobian matrix: dense (`"auto"`/`"jacfwd"` with a direct
      solver, or `jac(t, y, params)` returning an array) or sparse. Worth it when the
      Jacobian is expensive (many colours, a costly `f`, a large dense state).

    `stats["num_rhs_evals"]` counts stage evaluations of `f`; the Jacobian and
    `∂f/∂t` (once per step) are counted in `stats["num_jacobian_evals"]` (with
    `reuse_jacobian`, the Jacobian evaluations actually made, rejected steps included).

    A step whose stage matrix is singular, or whose stages are not finite, is
    rejected and retried with a smaller step; if it keeps failing until the step
    is a few ulps of `t`, the solve stops and reports the time and step size.
    """

    jacobian: str | Callable | SparsityPattern = eqx.field(static=True, default="auto", converter=as_jacobian)
    linear_solver: lx.AbstractLinearSolver | SparseLU | None = None
    reuse_jacobian: bool | JacobianReuse = eqx.field(static=True, default=False, converter=_as_reuse)
    # Set by `solve` from the model (never by users): the mass matrix of `M y' = f`.
    mass: MassMatrix | None = eqx.field(static=True, default=None, repr=False)

    adaptive_capable: ClassVar[bool] = True
    solves_mass_matrix: ClassVar[bool] = True
    saves_final: ClassVar[bool] = True  # the traced collapse report names the time reached
    tableau: ClassVar[RosenbrockTableau]

    def __check_init__(self):
        sparse = is_sparse(self.jacobian)
        if not (callable(self.jacobian) or sparse or self.jacobian in _JACOBIANS):
            raise ValueError(
                f"{type(self).__name__}: jacobian must be one of {_JACOBIANS}, a sparsity pattern (scipy sparse "
                f"matrix, BCOO, sciax.linalg.SparsityPattern) or a function jac(t, y, params) -> (n, n) array; "
                f"got {self.jacobian!r}"
            )
        solvers = (lx.AbstractLinearSolver, SparseLU) if sparse else lx.AbstractLinearSolver
        if self.linear_solver is not None and not isinstance(self.linear_solver, solvers):
            raise TypeError(
                f"{type(self).__name__}: linear_solver must be a lineax solver such as lineax.LU() "
                f"or lineax.GMRES(rtol=..., atol=...){' or sciax.linalg.SparseLU()' if sparse else ''}, "
                f"got {type(self.linear_solver).__name__}"
            )
        if sparse and isinstance(self.linear_solver, lx.AbstractLinearSolver):
            if not isinstance(self.linear_solver, ITERATIVE_SOLVERS):
                raise ValueError(
                    f"{type(self).__name__}: a sparse jacobian is solved by sciax.linalg.SparseLU() (default) or "
                    f"an iterative lineax solver; {type(self.linear_solver).__name__} would need a dense matrix"
                )
        if self.reuse_jacobian is not None:
            self._check_reuse()
        if self.jacobian == "jvp" and not isinstance(self.linear_solver, ITERATIVE_SOLVERS):
            raise ValueError(
                f"{type(self).__name__}: jacobian='jvp' never forms the Jacobian, so it needs an iterative "
                f"linear_solver (lineax.GMRES or lineax.BiCGStab), not {type(self.linear_solver).__name__}"
            )

    def _check_reuse(self):
        name = type(self).__name__
        if not self.tableau.w_method:
            raise ValueError(
                f"{name}: reuse_jacobian needs a W-method (sciax.ode.Ros34PW2), whose order holds with a kept "
                f"Jacobian; {name} needs the exact Jacobian at every step and would lose its order"
            )
        dense_solver = self.linear_solver is None or isinstance(self.linear_solver, (lx.LU, UnrolledLU))
        sparse = is_sparse(self.jacobian)
        if self.jacobian == "jvp" or (not sparse and not dense_solver):
            raise ValueError(
                f"{name}: reuse_jacobian keeps a Jacobian matrix, so it needs jacobian='auto'/'jacfwd' with a "
                f"direct solver, a sparsity pattern, or jac(t, y, params) -> array; got jacobian={self.jacobian!r} "
                f"with linear_solver={type(self.linear_solver).__name__}"
            )

    def solve(self, model, y0, ts, params, **options) -> Solution:
        """As `AbstractDiffraxMethod.solve`, with a sparse Jacobian's pattern resolved and checked first,
        and for a model with a mass matrix (a DAE) the matrix passed on and `y0` made consistent."""
        pattern = resolve_pattern(type(self).__name__, self.jacobian, model, y0, params)
        method = dataclasses.replace(self, jacobian=pattern) if pattern is not self.jacobian else self
        mass = getattr(model, "mass", None)
        if mass is not None:
            check_mass_size(type(self).__name__, mass, y0)
            if isinstance(method.jacobian, SparsityPattern):
                mass.on_pattern(method.jacobian)  # M's nonzeros inside the pattern, or a clear error now
            y0 = consistent_initial_state(model, y0, ts[0], params)
            method = dataclasses.replace(method, mass=mass)
        return super(AbstractRosenbrock, method).solve(model, y0, ts, params, **options)

    def diffrax_solver(self, rtol, atol, adaptive) -> RosenbrockSolver:
        reuse = self.reuse_jacobian
        if reuse is not None:
            reuse = dataclasses.replace(reuse, rtol=rtol, atol=atol)
        return RosenbrockSolver(
            tableau=self.tableau,
            jacobian=self.jacobian,
            linear_solver=self.linear_solver,
            reject_failures=adaptive,
            mass=self.mass,
            reuse=reuse,
        )

    def saves_solver_state(self) -> bool:
        return self.reuse_jacobian is not None

    def _to_solution(self, sol: diffrax.Solution, ts, has_event: bool, save_final: bool, model, params):
        out, report = super()._to_solution(sol, ts, has_event, save_final, model, params)
        njev = out.stats["num_steps"]
        if self.reuse_jacobian is not None:
            # Every rejected attempt evaluated one Jacobian; the state (kept on acceptance) counts the rest.
            njev = sol.solver_state["njev"] + out.stats["num_rejected_steps"]
        stats = dict(out.stats, num_jacobian_evals=njev)
        return eqx.tree_at(lambda s: s.stats, out, stats), report

    def failure_message(self, report: FailureReport, *, max_steps: int, ts, stats: dict, component: str) -> str:
        if int(report.code) != LINEAR:
            return super().failure_message(report, max_steps=max_steps, ts=ts, stats=stats, component=component)
        t_reached = float(report.t_reached)
        h_max = float(persistent_failure_step(t_reached, abs(float(ts[-1]) - float(ts[0]))))
        return _collapse_message(t_reached, h_max)

    def _report_traced(self, sol: Solution, report: FailureReport, ts) -> None:
        _raise_if_step_collapsed(sol.result == diffrax.RESULTS.singular, report.t_reached, ts)


def _collapse_message(t_reached: float, h_max: float) -> str:
    return (
        f"sciax.simulate: the Rosenbrock step kept failing (singular stage matrix I - h*gamma*J, "
        f"or non-finite stage values) and was retried down to step size {h_max:.3g} "
        f"at t = {t_reached:.10g}, where the solve stopped. Check the model's right-hand "
        "side and Jacobian near this time (NaN/inf, division by zero) or the initial state."
    )


def _raise_if_step_collapsed(collapsed, t_reached, ts) -> None:
    """Under a trace, raise naming the time reached and the step size if steps kept failing.

    `equinox.error_if` messages are fixed at trace time, so the values travel
    through a host callback (it runs under `jit` and `vmap` alike).
    """
    h_max = persistent_failure_step(t_reached, jnp.abs(ts[-1] - ts[0]))
    # Under vmap a debug callback runs once per member (a Python call each, ~0.2 ms):
    # the unbatched predicate keeps it off the path of a solve that did not fail.
    jax.lax.cond(
        eqxi.unvmap_any(collapsed),
        lambda: jax.debug.callback(_report_collapse, collapsed, t_reached, h_max),
        lambda: None,
    )


def _report_collapse(collapsed, t_reached, h_max) -> None:
    collapsed, t_reached, h_max = (np.atleast_1d(np.asarray(x)) for x in (collapsed, t_reached, h_max))
    if np.any(collapsed):
        i = int(np.argmax(collapsed))
        raise RuntimeError(_collapse_message(float(t_reached[i]), float(h_max[i])))


class Rodas5P(AbstractRosenbrock):
    """Rodas5P (Steinebach 2023): order 5(4), 8 stages, L-stable, stiffly accurate,
    order-4 dense output. The default choice for stiff problems at moderate to
    tight tolerances (the analogue of Julia's `Rodas5P`)."""

    tableau: ClassVar[RosenbrockTableau] = RODAS5P
    rhs_evals_per_step: ClassVar[int] = 8


class Rodas4(AbstractRosenbrock):
    """Rodas4 (Hairer & Wanner 1996): order 4(3), 6 stages, L-stable, stiffly
    accurate, order-3 dense output."""

    tableau: ClassVar[RosenbrockTableau] = RODAS4
    rhs_evals_per_step: ClassVar[int] = 6


class Ros3P(AbstractRosenbrock):
    """ROS3P (Lang & Verwer 2001): order 3(2), 3 stages, A-stable, no order
    reduction on parabolic PDEs. Cheap per step; for loose tolerances.
    Dense output is a cubic Hermite interpolant (one extra evaluation per step).

    Caveat (a property of the published pair, not of this code): with α21 = 1 and
    γ21 = -1 the second stage repeats the first on a linear autonomous problem
    (`y' = Ay`), and the embedded weights differ only on those two stages, so
    the error estimate is exactly zero there and adaptive steps grow unchecked
    (3 % error on `y' = -y` over [0, 1] at rtol 1e-6). For linear constant-
    coefficient systems use `Ros34PW2`, fixed steps (`adaptive=False, dt0=`) or `Rodas4`."""

    tableau: ClassVar[RosenbrockTableau] = ROS3P
    rhs_evals_per_step: ClassVar[int] = 4  # 3 stages + the Hermite end point


class Ros34PW2(AbstractRosenbrock):
    """ROS34PW2 (Rang & Angermann 2005): order 3(2), 4 stages, L-stable, stiffly
    accurate, and a W-method: it keeps order 3 when the Jacobian is only approximate
    (e.g. a user's `jacobian=` that drops weak couplings, or one kept across steps:
    `reuse_jacobian=True`). Designed for parabolic
    PDEs, and its error estimate works on linear problems, where `Ros3P`'s does
    not: the low-order choice for the method of lines. Dense output is a cubic
    Hermite interpolant (one extra evaluation per step)."""

    tableau: ClassVar[RosenbrockTableau] = ROS34PW2
    rhs_evals_per_step: ClassVar[int] = 5  # 4 stages + the Hermite end point


__all__ = ["AbstractRosenbrock", "Rodas5P", "Rodas4", "Ros3P", "Ros34PW2"]
