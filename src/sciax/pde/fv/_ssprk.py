"""`SSPRK2` and `SSPRK3`: strong-stability-preserving Runge-Kutta methods of Shu and Osher with a
step from the CFL condition, chosen inside `jit` before every step.

Reference: C.-W. Shu and S. Osher, "Efficient implementation of essentially non-oscillatory
shock-capturing schemes", J. Comput. Phys. 77 (1988) 439-471; S. Gottlieb, C.-W. Shu and
E. Tadmor, "Strong stability-preserving high-order time discretization methods", SIAM Review 43
(2001) 89-112.

The fixed-step driver (`sciax.pde.AbstractFixedStepMethod`) fixes the number of steps per output
interval at trace time from a static `dt`; here the step `dt = cfl dx / max|lambda|` (in d dimensions
`cfl / sum_k max|lambda_k| / dx_k`, `AbstractFVModel.cfl_step`) follows the
waves of the solution, so the steps are taken by a `while` loop per output interval (reverse-mode
differentiable through `equinox.internal.while_loop`'s checkpointing), the last one shortened to
land exactly on the output time.
"""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PyTree

from ..._checks import agreed
from ..._method import AbstractMethod
from ..._solution import Solution


class AbstractSSPRK(AbstractMethod):
    """An explicit SSP Runge-Kutta method for `sciax.pde.fv` models with the CFL step
    `dt = cfl dx / max|lambda|` (`max|lambda|` the model's largest characteristic speed on the
    current state; `cfl / sum_k max|lambda_k| / dx_k` over the axes of a 2-D or 3-D grid),
    shortened to land on each output time.

    **Fields:** `cfl` in `(0, 1]` (static); `max_steps`: most steps per output interval
    (static), beyond which the solve fails (`throw`) or returns `success=False`.
    """

    cfl: eqx.AbstractVar[float]
    max_steps: eqx.AbstractVar[int]
    rhs_evals_per_step: ClassVar[int]
    options: ClassVar[tuple[str, ...]] = ("throw",)

    # Shu-Osher form: stage k+1 is `a_k u + (1 - a_k)(u_k + dt L(t + c_k dt, u_k))`, `u_0 = u`.
    tableau: eqx.AbstractClassVar[tuple[tuple[float, float], ...]]

    def step(self, model, u: Array, t: Array, dt: Array, params: PyTree) -> Array:
        """One step of size `dt` from `(t, u)`."""
        a, c = (jnp.asarray(col, u.dtype) for col in zip(*self.tableau))

        # The stages run as a scan so that the right-hand side is traced (and compiled) once.
        def stage(v, ac):
            a_k, c_k = ac
            return a_k * u + (1 - a_k) * (v + dt * model.rhs(t + c_k * dt, v, params)), None

        return jax.lax.scan(stage, u, (a, c))[0]

    def solve(self, model, y0, ts, params, *, throw: bool = True) -> Solution:
        """Run from `ts[0]`, saving at every `ts`. Raises `ValueError` at trace time for a state
        of the wrong shape or, with concrete values, a state that is not admissible (naming the
        first offending cell). Differentiable in `y0` and `params`; batchable with `jax.vmap`."""
        from ._model import AbstractFVModel

        name = type(self).__name__
        if not isinstance(model, AbstractFVModel):
            raise TypeError(f"{name}: steps sciax.pde.fv models only, got {type(model).__name__}")
        model.check_state(y0, "y0")
        y0 = model.check_admissible(y0, params)
        return _run(self, model, y0, jnp.asarray(ts), params, bool(throw))


def check_cfl(name: str, cfl) -> float:
    if isinstance(cfl, bool) or not isinstance(cfl, (int, float, np.integer, np.floating)) or not 0 < cfl <= 1:
        raise ValueError(f"{name}: cfl must be a number in (0, 1], got cfl={cfl!r}")
    return float(cfl)


def check_max_steps(name: str, max_steps) -> int:
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"{name}: max_steps must be an integer >= 1, got {max_steps!r}")
    return int(max_steps)


class SSPRK2(AbstractSSPRK):
    """Heun's method in Shu-Osher form, second order, SSP coefficient 1:
    `u1 = u + dt L(u)`, `u+ = (u + u1 + dt L(u1)) / 2`."""

    cfl: float = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 2
    tableau: ClassVar[tuple[tuple[float, float], ...]] = ((0.0, 0.0), (0.5, 1.0))

    def __init__(self, cfl: float = 0.5, *, max_steps: int = 100_000):
        self.cfl, self.max_steps = check_cfl("SSPRK2", cfl), check_max_steps("SSPRK2", max_steps)


class SSPRK3(AbstractSSPRK):
    """The third-order SSP Runge-Kutta method of Shu and Osher (1988, eq. 2.18), SSP coefficient 1:
    `u1 = u + dt L(u)`, `u2 = 3/4 u + 1/4 (u1 + dt L(u1))`, `u+ = 1/3 u + 2/3 (u2 + dt L(u2))`."""

    cfl: float = eqx.field(static=True)
    max_steps: int = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 3
    tableau: ClassVar[tuple[tuple[float, float], ...]] = ((0.0, 0.0), (0.75, 1.0), (1 / 3, 0.5))

    def __init__(self, cfl: float = 0.5, *, max_steps: int = 100_000):
        self.cfl, self.max_steps = check_cfl("SSPRK3", cfl), check_max_steps("SSPRK3", max_steps)


@eqx.filter_jit
def _run(method: AbstractSSPRK, model, y0, ts, params, throw):
    t_dtype = jnp.result_type(ts.dtype, float)
    ts = ts.astype(t_dtype)

    def interval(carry, t_next):
        def unfinished(c):
            return c[0] < t_next

        def one(c):
            t, u, n = c
            dt_cfl = model.cfl_step(u, params, method.cfl)
            last = dt_cfl >= t_next - t
            dt = jnp.where(last, t_next - t, dt_cfl).astype(u.dtype)
            u = method.step(model, u, t, dt, params)
            # The last step lands on t_next itself, not on t + (t_next - t) rounded.
            return jnp.where(last, t_next, t + dt.astype(t_dtype)), u, n + 1

        t, u, n = eqxi.while_loop(unfinished, one, carry, max_steps=method.max_steps, kind="checkpointed")
        ok = (t >= t_next) & jnp.all(jnp.isfinite(u))
        return (t, u, n), (u, ok)

    start = (ts[0], y0, jnp.asarray(0, jnp.int32))
    (_, _, num), (ys, ok) = jax.lax.scan(interval, start, ts[1:])
    ys = jnp.concatenate([y0[None], ys])
    success = jnp.all(ok)
    if throw:
        ys = eqx.error_if(
            ys,
            agreed(~success),
            f"simulate: {type(method).__name__} failed: the state of {type(model).__name__} became NaN or inf, or "
            f"an output interval needed more than max_steps={method.max_steps} steps",
        )
    stats = {
        "num_steps": num,
        "num_accepted_steps": num,
        "num_rejected_steps": jnp.zeros_like(num),
        "num_rhs_evals": num * method.rhs_evals_per_step,
    }
    return Solution(ts=ts, ys=ys, stats=stats, success=success)
