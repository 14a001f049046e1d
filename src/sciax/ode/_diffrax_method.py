"""`AbstractDiffraxMethod`: the shared body of every ODE method, over `diffrax.diffeqsolve`."""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jaxtyping import Array, PyTree, Real

from .. import _checks
from .._method import AbstractMethod
from .._model import AbstractModel
from .._solution import Solution
from ._failure import (
    FailureReport,
    component_name,
    describe,
    diagnose,
    failure_code,
    raise_on_failure,
    traced_messages,
    unlocated,
)

_JVP_HINT = (
    "sciax.simulate: forward-mode differentiation (jax.jvp, jax.jacfwd, jax.linearize) of an "
    "ODE solve needs adjoint=sciax.ode.ForwardMode(). The default "
    "adjoint=sciax.ode.RecursiveCheckpointAdjoint() supports reverse mode (jax.grad, jax.vjp) only."
)


class AbstractDiffraxMethod(AbstractMethod):
    """An ODE method backed by a `diffrax` solver.

    Subclasses say which diffrax solver to build (`diffrax_solver`) and declare
    `adaptive_capable` (has an embedded error estimate), optionally
    `adaptive_by_default`, and, for explicit
    Runge–Kutta methods, `rhs_evals_per_step`/`fsal` so that `stats` counts
    right-hand-side evaluations exactly.
    """

    adaptive_capable: ClassVar[bool]
    adaptive_by_default: ClassVar[bool | None] = None
    rhs_evals_per_step: ClassVar[int | None] = None
    fsal: ClassVar[bool] = False
    # Also save the state where the solve stopped (SaveAt t1=True) on every solve, for
    # methods whose traced failure report needs the time reached. Others save it only
    # with an event, or when a failed solve is re-run to locate the failure: saving it
    # costs an extra pass over the output of every solve, which a large vmapped
    # ensemble feels (benchmarks/ode_ensemble.py, "simulate vs diffeqsolve").
    saves_final: ClassVar[bool] = False
    # Whether the method integrates `M dy/dt = f` (a model's mass_matrix, DAEs included).
    solves_mass_matrix: ClassVar[bool] = False
    options: ClassVar[tuple[str, ...]] = (
        "rtol",
        "atol",
        "dt0",
        "max_steps",
        "adaptive",
        "adjoint",
        "event",
        "dense",
        "progress",
        "throw",
    )

    @abc.abstractmethod
    def diffrax_solver(self, rtol: float, atol: float, adaptive: bool) -> diffrax.AbstractSolver:
        """The diffrax solver this method runs."""

    def solver_for(self, y0: PyTree[Array], rtol: float, atol: float, adaptive: bool) -> diffrax.AbstractSolver:
        """The diffrax solver for this state (shapes only); by default `diffrax_solver`."""
        del y0
        return self.diffrax_solver(rtol, atol, adaptive)

    def saves_solver_state(self) -> bool:
        """Whether `_to_solution` reads the solver's final state (e.g. counts it kept), `sol.solver_state`."""
        return False

    def terms(self, model: AbstractModel) -> diffrax.AbstractTerm:
        return diffrax.ODETerm(model.rhs)

    def solve(
        self,
        model: AbstractModel,
        y0: PyTree[Array],
        ts: Real[Array, " T"],
        params: PyTree,
        *,
        rtol: float = 1e-6,
        atol: float = 1e-6,
        dt0: float | None = None,
        max_steps: int | None = None,
        adaptive: bool | None = None,
        adjoint: diffrax.AbstractAdjoint | None = None,
        event: Callable | None = None,
        dense: bool = False,
        progress: bool = False,
        throw: bool = True,
    ) -> Solution:
        """Integrate with diffrax.

        **Options:**

        - `rtol`, `atol`: tolerances of the PID step-size controller (adaptive) or of
          the Newton iteration of implicit stages (fixed step).
        - `dt0`: initial step (adaptive; chosen automatically when `None`) or the step
          (fixed-step methods, where it is required).
        - `max_steps`: step budget; default 4096 for adaptive steps, exactly enough for
          fixed steps when `ts` and `dt0` are concrete.
        - `adaptive`: `False` forces constant steps of `dt0` for an adaptive method.
        - `adjoint`: `RecursiveCheckpointAdjoint()` (default, reverse mode),
          `BacksolveAdjoint()` (O(1) memory, re-solves backwards), or `ForwardMode()`
          (jax.jvp/jax.jacfwd; efficient when there are few inputs).
        - `event`: `cond(t, y, params) -> scalar`; the solve stops where it crosses
          zero (located by a Newton root find), reported in `Solution.event_time`.
        - `dense`: keep dense output for `Solution.evaluate`.
        - `progress`: show a tqdm progress bar.
        - `throw`: raise on failure (default) or return `success=False`. Outside
          `jax.jit`/`vmap`/`grad` a failed solve is run once more to locate the failure,
          and the error's first line names the cause (max_steps used up, a non-finite
          right-hand side or state, a collapsed step), the budget, the time reached,
          `t_end` and the fix; inside a trace it is `equinox`'s runtime error.
          `stats["t_reached"]` is `ts[-1]` on success; after a failure or an event it is
          where the solve stopped (with an event, for Rosenbrock methods, and in the
          re-run), otherwise the last output time reached.
        """
        if getattr(model, "mass", None) is not None and not self.solves_mass_matrix:
            raise TypeError(
                f"simulate: {type(self).__name__} cannot solve M dy/dt = f (the model has a mass_matrix); "
                "use a Rosenbrock method: sciax.ode.Rodas5P(), Rodas4(), Ros3P() or Ros34PW2()"
            )
        adaptive = self._resolve_adaptive(adaptive)
        rtol = _checks.check_positive("rtol", rtol)
        atol = _checks.check_positive("atol", atol)
        if not adaptive and dt0 is None:
            raise ValueError(f"simulate: {type(self).__name__} takes fixed steps; pass the step size as dt0=")
        dt0 = _checks.check_positive("dt0", dt0)
        max_steps = _max_steps(max_steps, adaptive, ts, dt0)
        if event is not None and not callable(event):
            raise TypeError(
                f"simulate: event must be a function cond(t, y, params) -> scalar, got {type(event).__name__}"
            )

        setup = (self, model, y0, ts, params, rtol, atol, dt0, max_steps, adaptive, adjoint, event, dense, progress)

        def run(save_final: bool):
            try:
                return _integrate(*setup, save_final)
            except TypeError as err:
                if "forward-mode" in str(err) and "custom_vjp" in str(err):
                    raise TypeError(_JVP_HINT) from err
                raise

        save_final = event is not None or self.saves_final
        sol, report = run(save_final)
        if not throw:
            return sol
        if not save_final and not isinstance(report.code, jax.core.Tracer) and int(report.code) != 0:
            # The error path only: solve again, saving the final state, to say where and why it failed.
            sol, report = run(True)
        return self._raise_if_failed(sol, report, y0, ts, max_steps, model)

    def _resolve_adaptive(self, adaptive: bool | None) -> bool:
        if adaptive is None:
            default = self.adaptive_by_default
            return self.adaptive_capable if default is None else default
        if adaptive and not self.adaptive_capable:
            raise ValueError(
                f"simulate: {type(self).__name__} has no error estimate and cannot take adaptive steps; "
                "use adaptive=False with dt0=, or an adaptive method such as sciax.ode.Tsit5()"
            )
        return bool(adaptive)

    def _to_solution(
        self, sol: diffrax.Solution, ts, has_event: bool, save_final: bool, model: AbstractModel, params
    ) -> tuple[Solution, FailureReport]:
        if save_final:
            ys, t_final, y_final = _split_final(sol, ts.shape[0])
            report = diagnose(failure_code(sol.result, y_final), model.rhs, params, ts, ys, t_final, y_final)
        else:
            # The solve ends at ts[-1] or fails, and rows it never reached are already inf:
            # the last row is the final state, the last finite time the last one reached.
            ys = sol.ys
            y_final = jax.tree_util.tree_map(lambda leaf: leaf[-1], ys)
            report = unlocated(failure_code(sol.result, y_final), sol.ts)
        stats = {k: jnp.asarray(v) for k, v in sol.stats.items()}
        stats["t_reached"] = report.t_reached
        if self.rhs_evals_per_step is not None:
            # FSAL methods evaluate f(t0, y0) once up front; diffrax's automatic
            # initial step reuses evaluations, so it adds none.
            stats["num_rhs_evals"] = stats["num_steps"] * self.rhs_evals_per_step + int(self.fsal)
        event_time = None
        if has_event:
            event_time = jnp.where(_fired(sol.event_mask), t_final, jnp.nan)
        out = Solution(
            ts=jnp.asarray(ts),
            ys=ys,
            stats=stats,
            success=report.code == 0,
            result=sol.result,
            event_time=event_time,
            interpolation=sol.interpolation,
        )
        return out, report

    def _raise_if_failed(self, sol: Solution, report: FailureReport, y0, ts, max_steps: int, model) -> Solution:
        """Raise if the solve failed: a Python exception with the numbers when the report is
        concrete, `equinox.error_if` (static messages) when it is traced."""
        t_end = None if isinstance(ts, jax.core.Tracer) else float(ts[-1])
        if not isinstance(report.code, jax.core.Tracer):
            if int(report.code) != 0:
                index = int(report.index)
                component = "?" if index < 0 else component_name(y0, index, model.labels().names)
                message = self.failure_message(report, max_steps=max_steps, ts=ts, stats=sol.stats, component=component)
                raise eqx.EquinoxRuntimeError(message)
            return sol
        self._report_traced(sol, report, ts)
        ys = raise_on_failure(sol.ys, report.code, traced_messages(max_steps, t_end))
        return dataclasses.replace(sol, ys=ys)

    def failure_message(self, report: FailureReport, *, max_steps: int, ts, stats: dict, component: str) -> str:
        """The error message of a concrete failed solve (methods may say more about their own failures)."""
        return describe(report, max_steps=max_steps, t_end=float(ts[-1]), steps=stats, component=component)

    def _report_traced(self, sol: Solution, report: FailureReport, ts) -> None:
        """Hook for methods that report a traced failure with run-time values (a host callback)."""


@eqx.filter_jit
def _integrate(
    method: AbstractDiffraxMethod,
    model,
    y0,
    ts,
    params,
    rtol,
    atol,
    dt0,
    max_steps,
    adaptive,
    adjoint,
    event,
    dense,
    progress,
    save_final,
) -> tuple[Solution, FailureReport]:
    # One compiled program for the solve and its post-processing, so that an
    # un-jitted call compiles once rather than op by op.
    controller = diffrax.PIDController(rtol=rtol, atol=atol) if adaptive else diffrax.ConstantStepSize()
    # t1=True also saves the state where the solve stopped (at an event or a failure),
    # which the failure report names; plain SaveAt, unlike SaveAt(subs=...), works
    # with every adjoint.
    saveat = diffrax.SaveAt(ts=ts, t1=save_final, dense=dense, solver_state=method.saves_solver_state())
    sol = diffrax.diffeqsolve(
        method.terms(model),
        method.solver_for(y0, rtol, atol, adaptive),
        t0=ts[0],
        t1=ts[-1],
        dt0=dt0,
        y0=y0,
        args=params,
        saveat=saveat,
        stepsize_controller=controller,
        adjoint=adjoint if adjoint is not None else diffrax.RecursiveCheckpointAdjoint(),
        event=_diffrax_event(event, rtol, atol),
        max_steps=max_steps,
        progress_meter=diffrax.TqdmProgressMeter() if progress else diffrax.NoProgressMeter(),
        throw=False,
    )
    return method._to_solution(sol, ts, event is not None, save_final, model, params)


def _split_final(sol: diffrax.Solution, n: int):
    """Separate the `SaveAt(ts=ts, t1=True)` output into the `ts` rows and the final state.

    diffrax writes the saves in order, so when the solve stops early at an event or a
    failure, the final state lands right after the last `ts` reached instead of at
    row `n`. Rows from there on are not states at `ts` and become `inf`.
    """
    final = jnp.sum(jnp.isfinite(sol.ts)) - 1
    reached = jnp.arange(n) < final

    def rows(leaf):
        mask = reached.reshape((n,) + (1,) * (leaf.ndim - 1))
        return jnp.where(mask, leaf[:n], jnp.inf)

    ys = jax.tree_util.tree_map(rows, sol.ys)
    y_final = jax.tree_util.tree_map(lambda leaf: leaf[final], sol.ys)
    return ys, sol.ts[final], y_final


def _fired(event_mask) -> Array:
    return jnp.any(jnp.stack([jnp.asarray(m) for m in jax.tree_util.tree_leaves(event_mask)]))


def _diffrax_event(event: Callable | None, rtol, atol) -> diffrax.Event | None:
    if event is None:
        return None

    def cond_fn(t, y, args, **kwargs):
        return event(t, y, args)

    return diffrax.Event(cond_fn, root_finder=optx.Newton(rtol=rtol, atol=atol))


def _max_steps(max_steps: int | None, adaptive: bool, ts, dt0) -> int:
    if max_steps is not None:
        if not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ValueError(f"simulate: max_steps must be a positive integer, got {max_steps!r}")
        return int(max_steps)
    if adaptive or isinstance(ts, jax.core.Tracer) or isinstance(dt0, jax.core.Tracer):
        return 4096
    span = float(ts[-1] - ts[0])
    return max(1, math.ceil(span / float(dt0) * (1 + 1e-12))) + 1


__all__ = ["AbstractDiffraxMethod"]
