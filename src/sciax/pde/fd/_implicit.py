"""`BackwardEuler` and `CrankNicolson`: implicit fixed-step theta methods for FD models, each step a
Newton–Krylov solve (`sciax.linalg.newton_krylov`), so `dt` may exceed the explicit stability limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import lineax as lx
import optimistix as optx

from ..._step_counts import check_checkpoint, check_dt
from ...linalg import newton_krylov
from .._fixed_step import AbstractFixedStep


class AbstractTheta(AbstractFixedStep):
    """The theta method `y1 = y0 + dt (theta f(t + dt, y1) + (1 - theta) f(t, y0))`, solved for `y1`
    by Newton's method with matrix-free Krylov steps (one Newton step is exact for linear `f`).

    **Arguments** (all static configuration):

    - `dt`: the step (time units); no stability limit (A-stable), only accuracy.
    - `method`: Krylov method for the Jacobian `I - theta dt df/dy`: `"gmres"` (default) or
      `"cg"` (set `symmetric=True`: the Jacobian of `f` is symmetric negative semidefinite,
      e.g. diffusion, so `I - theta dt df/dy` is symmetric positive definite).
    - `preconditioner`: `None` or `preconditioner(model, params, gamma)` returning a
      `sciax.linalg` preconditioner or lineax operator approximating
      `(I - gamma df/dy)^{-1}`, `gamma = theta dt`; built once per `simulate` call. E.g. for
      `sciax.pde.fd.heat`: `lambda m, p, g: sciax.linalg.Multigrid(sciax.linalg.diffusion_operator(
      m.grid, p["D"], m.halo.sides, scale=-g, shift=1.0))`.
    - `rtol`, `atol`, `max_newton`, `linear_rtol`: tolerances of `newton_krylov` (its defaults if `None`).
    - `checkpoint`: steps per recomputed block in reverse mode (see `AbstractFixedStep`).

    Differentiable in `y0` and `params` (each step by implicit differentiation).
    """

    theta: ClassVar[float]
    rhs_evals_per_step: ClassVar[int] = 1

    dt: float = eqx.field(static=True)
    checkpoint: int | None = eqx.field(static=True)
    method: str = eqx.field(static=True)
    symmetric: bool = eqx.field(static=True)
    preconditioner: Callable | None = eqx.field(static=True)
    rtol: float | None = eqx.field(static=True)
    atol: float | None = eqx.field(static=True)
    max_newton: int = eqx.field(static=True)
    linear_rtol: float | None = eqx.field(static=True)

    def __init__(
        self,
        dt: float,
        *,
        method: str = "gmres",
        symmetric: bool = False,
        preconditioner: Callable | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        max_newton: int = 20,
        linear_rtol: float | None = None,
        checkpoint: int | None = 64,
    ):
        name = type(self).__name__
        self.dt, self.checkpoint = check_dt(name, dt), check_checkpoint(name, checkpoint)
        if method not in ("gmres", "cg", "bicgstab"):
            raise ValueError(f"{name}: method must be 'gmres', 'cg' or 'bicgstab', got {method!r}")
        if method == "cg" and not symmetric:
            raise ValueError(
                f"{name}: method='cg' needs symmetric=True (a symmetric negative semidefinite Jacobian "
                "of the right-hand side, e.g. diffusion); otherwise use method='gmres'"
            )
        if preconditioner is not None and not callable(preconditioner):
            raise TypeError(
                f"{name}: preconditioner must be None or a function (model, params, gamma) -> "
                f"preconditioner, got {preconditioner!r}"
            )
        self.method, self.symmetric, self.preconditioner = method, bool(symmetric), preconditioner
        self.rtol, self.atol, self.max_newton, self.linear_rtol = rtol, atol, int(max_newton), linear_rtol

    def stable_dt(self, model, params):
        return None  # A-stable: no CFL limit

    def prepare(self, model, params):
        gamma = self.theta * self.dt
        pc = None if self.preconditioner is None else self.preconditioner(model, params, gamma)
        return params, pc

    def init(self, model, y0, params):
        return y0

    def observe(self, model, y, params, save):
        return y

    def step(self, model, y, t, prepared):

        params, pc = prepared
        h, theta = self.dt, self.theta
        f0 = None if theta == 1 else model.rhs(t, y, params)
        tmap = jax.tree_util.tree_map

        def residual(v, p):
            f1 = model.rhs(t + h, v, p)
            explicit = y if f0 is None else tmap(lambda a, b: a + (1 - theta) * h * b, y, f0)
            return tmap(lambda vv, e, f: vv - e - theta * h * f, v, explicit, f1)

        guess = y if f0 is None else tmap(lambda a, b: a + h * b, y, f0)
        tags = frozenset({lx.symmetric_tag, lx.positive_semidefinite_tag}) if self.symmetric else frozenset()
        sol = newton_krylov(
            residual,
            guess,
            params,
            method=self.method,
            rtol=self.rtol,
            atol=self.atol,
            max_steps=self.max_newton,
            linear_rtol=self.linear_rtol,
            preconditioner=pc,
            tags=tags,
            throw=False,
        )
        # A failed solve leaves a NaN state, which the driver reports (success=False or its error).
        failed = sol.result != optx.RESULTS.successful
        return tmap(lambda a: jax.numpy.where(failed, jax.numpy.nan, a), sol.value)


class BackwardEuler(AbstractTheta):
    """Backward (implicit) Euler, first order, L-stable: damps stiff modes at any `dt`. See `AbstractTheta`."""

    theta: ClassVar[float] = 1.0


class CrankNicolson(AbstractTheta):
    """Crank–Nicolson (trapezoidal rule), second order, A-stable (stiff modes oscillate, undamped,
    at large `dt`). See `AbstractTheta`."""

    theta: ClassVar[float] = 0.5
