"""Convergence order of every method at constant step, against an exact solution.

Main problem: y' = y cos t, y(0) = 1, exact y = exp(sin t) (DETEST A3, Hull et al. 1972).
IMEX methods get the same solution from y' = y cos t (explicit) - (y - exp(sin t))
(implicit), whose implicit part vanishes on the exact solution but not on the
numerical one. Slopes of log error vs log dt must be within 0.2 of the order.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

PROBLEMS = {
    "A3": (sciax.ode.ODE(lambda t, y, p: y * jnp.cos(t)), lambda t: jnp.exp(jnp.sin(t))),
    "A3-imex": (
        sciax.ode.ODE(
            explicit=lambda t, y, p: y * jnp.cos(t),
            implicit=lambda t, y, p: -(y - jnp.exp(jnp.sin(t))),
        ),
        lambda t: jnp.exp(jnp.sin(t)),
    ),
    # DETEST A4 (logistic), exact 20 / (1 + 19 exp(-t/4)): Dopri8's error stays above
    # round-off in its asymptotic range here.
    "A4": (
        sciax.ode.ODE(lambda t, y, p: 0.25 * y * (1.0 - y / 20.0)),
        lambda t: 20.0 / (1.0 + 19.0 * jnp.exp(-t / 4.0)),
    ),
}

# (method, problem, end time, order, numbers of steps) — step counts chosen in the
# asymptotic range and above round-off.
CASES = [
    ("Euler", "A3", 2.0, 1, [50, 100, 200, 400]),
    ("Heun", "A3", 2.0, 2, [25, 50, 100, 200]),
    ("RK4", "A3", 2.0, 4, [20, 40, 80, 160]),
    ("Tsit5", "A3", 3.0, 5, [20, 40, 80, 160]),
    ("Dopri5", "A3", 3.0, 5, [20, 40, 80, 160]),
    ("Tsit5-unrolled", "A3", 3.0, 5, [20, 40, 80, 160]),
    ("Dopri5-unrolled", "A3", 3.0, 5, [20, 40, 80, 160]),
    ("Dopri8", "A4", 10.0, 8, [4, 5, 6, 8, 10]),
    ("ImplicitEuler", "A3", 2.0, 1, [50, 100, 200, 400]),
    ("Kvaerno3", "A3", 2.0, 3, [10, 20, 40, 80]),
    ("Kvaerno4", "A3", 2.0, 4, [20, 40, 80, 160]),
    ("Kvaerno5", "A3", 2.0, 5, [10, 20, 40, 80]),
    ("KenCarp3", "A3-imex", 2.0, 3, [20, 40, 80, 160]),
    ("KenCarp4", "A3-imex", 2.0, 4, [20, 40, 80, 160]),
    ("KenCarp5", "A3-imex", 3.0, 5, [20, 40, 80, 160]),
]


@functools.cache
def _final_error(name: str, problem: str, t_end: float):
    model, exact = PROBLEMS[problem]
    base, _, variant = name.partition("-")
    method = getattr(sciax.ode, base)(unroll=True) if variant == "unrolled" else getattr(sciax.ode, base)()

    @jax.jit
    def error(dt):
        sol = sciax.simulate(
            model,
            jnp.array([1.0]),
            jnp.array([0.0, t_end]),
            None,
            method=method,
            dt0=dt,
            adaptive=False,
            max_steps=500,
            rtol=1e-13,
            atol=1e-13,
        )
        return jnp.abs(sol.ys[-1, 0] - exact(t_end))

    return error


@pytest.mark.parametrize("name, problem, t_end, order, steps", CASES, ids=[c[0] for c in CASES])
def test_convergence_order(name, problem, t_end, order, steps):
    error = _final_error(name, problem, t_end)
    dts = t_end / np.array(steps)
    errors = np.array([float(error(jnp.asarray(dt))) for dt in dts])
    assert np.all(errors > 1e-14), f"errors reached round-off, pick coarser steps: {errors}"
    slope = np.polyfit(np.log(dts), np.log(errors), 1)[0]
    assert abs(slope - order) <= 0.2, f"{name}: observed order {slope:.2f}, expected {order} (errors {errors})"
