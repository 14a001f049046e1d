"""Delay differential equations: `sciax.ode.DDE` with `MethodOfSteps` against exact
solutions (piecewise polynomials, a state-dependent delay problem of Neves), an
independent NumPy method of steps (Mackey–Glass), its convergence order, and
`jit`/`vmap`/`grad`; bad input is reported by name."""

from __future__ import annotations

from fractions import Fraction
from math import factorial, sqrt

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.ode import DDE, MethodOfSteps

# --- y'(t) = -y(t - tau), history 1 -------------------------------------------------


def _exact_unit_delay(t: float) -> float:
    """y' = -y(t - 1), y = 1 on t <= 0: on [k-1, k], y = sum_{j<=k} (-1)^j (t - (j-1))^j / j!."""
    k = max(int(np.ceil(t)), 0)
    return sum((-1) ** j * (t - (j - 1)) ** j / factorial(j) for j in range(k + 1))


LINEAR = DDE(
    lambda t, y, yd, p: -yd[0],
    lambda t, y, p: jnp.reshape(p["tau"], (1,)),
    lambda t, p: jnp.full((1,), p["h"]),
    names=("y",),
)


def _solve_linear(params, ts, **options):
    return sciax.simulate(LINEAR, jnp.full((1,), params["h"]), ts, params, **options)


_solve_linear_jit = eqx.filter_jit(_solve_linear)


def test_piecewise_polynomial_solution_and_breakpoints():
    ts = jnp.linspace(0.0, 5.0, 21)  # contains the breakpoints 1, 2, 3, 4
    sol = _solve_linear_jit({"tau": 1.0, "h": 1.0}, ts, rtol=1e-8, atol=1e-8)
    assert bool(sol.success) and int(sol.result) == 1
    exact = np.array([_exact_unit_delay(float(t)) for t in ts])
    error = np.abs(np.asarray(sol.ys[:, 0]) - exact)
    assert error.max() < 1e-6
    # Up to t = 4 the solution is a polynomial of degree <= 4 between breakpoints, which the
    # 5th-order pair and its 4th-order dense output reproduce exactly: round-off only, which a
    # step across a kink (O(h^2) error) would not give. So 1, 2, 3 were landed on exactly.
    assert error[ts <= 4.0].max() < 1e-12
    assert float(sol.stats["t_reached"]) == 5.0
    assert int(sol.stats["num_accepted_steps"]) < 60


COSINE_HISTORY = DDE(
    lambda t, y, yd, p: -yd[0],
    lambda t, y, p: jnp.ones(1),
    lambda t, p: jnp.cos(3 * t)[None],
)


def _exact_unit_delay_rational(k: int) -> float:
    """`_exact_unit_delay` at the integer `k`, summed in exact rational arithmetic."""
    return float(sum(Fraction((-1) ** j * (k - j + 1) ** j, factorial(j)) for j in range(k + 1)))


ORDER_SPAN = 7  # up to t = 5 the 5th-order methods reproduce the polynomial pieces exactly


@eqx.filter_jit
def _fixed_step_unit_delay(method, dt0):
    # At most 16 steps per delay window: a 64-slot buffer (vmapped, jax 0.12 compiles 256 slots slowly).
    ts = jnp.arange(ORDER_SPAN + 1.0)
    options = dict(adaptive=False, dt0=dt0, history_steps=64)
    return sciax.simulate(LINEAR, jnp.ones(1), ts, {"tau": 1.0, "h": 1.0}, method=method, **options)


@pytest.mark.parametrize(
    "rk, order",
    [
        (sciax.ode.Tsit5(), 5),
        (sciax.ode.Dopri5(), 5),
        (sciax.ode.Rodas5P(), 5),
        (sciax.ode.Rodas4(), 4),
        (sciax.ode.Ros34PW2(), 3),  # a cubic Hermite dense output, at one more evaluation per step
    ],
)
def test_convergence_order_fixed_steps_against_exact_solution(rk, order):
    """y' = -y(t - 1), history 1, on [0, 7] against its exact piecewise polynomial at the
    integers, fixed steps 1/m (all breakpoints on the grid): the error falls as m^-order. The
    pieces have degree k on [k - 1, k]; the 5th-order methods and their 4th-order dense output
    are exact up to degree 4, so their error appears only past t = 5 (and stays round-off
    before: delayed values and one-sided time derivatives at the breakpoints are right)."""
    ms = np.array([2, 4, 8, 16])
    sol = jax.vmap(lambda dt0: _fixed_step_unit_delay(MethodOfSteps(rk), dt0))(jnp.asarray(1.0 / ms))
    np.testing.assert_array_equal(sol.stats["num_accepted_steps"], ORDER_SPAN * ms)
    np.testing.assert_array_equal(sol.stats["num_rejected_steps"], 0)
    exact = np.array([_exact_unit_delay_rational(k) for k in range(ORDER_SPAN + 1)])
    errors = np.abs(np.asarray(sol.ys[:, :, 0]) - exact)
    if order == 5:
        assert errors[:, :5].max() < 1e-13
    slopes = np.log2(errors.max(axis=1)[:-1] / errors.max(axis=1)[1:])
    assert np.all(np.abs(slopes - order) < 0.5), (errors.max(axis=1), slopes)


# --- Mackey–Glass against an independent NumPy method of steps ---------------------

MG = dict(beta=0.2, gamma=0.1, n=10.0, tau=17.0)


def _mackey_glass_rhs(y, yd, p=MG):
    return p["beta"] * yd / (1 + yd ** p["n"]) - p["gamma"] * y


def _mackey_glass_reference(t_end: float, steps_per_delay: int, history: float = 0.5):
    """RK4 with h = tau / steps_per_delay; y(s) for s in the past from the grid by cubic
    Hermite interpolation (the delayed stage points are grid points and midpoints)."""
    tau = MG["tau"]
    h = tau / steps_per_delay
    n_steps = round(t_end / h)
    y, f = np.empty(n_steps + 1), np.empty(n_steps + 1)
    y[0] = history

    def past(i, half):  # y(t_i - tau + half * h)
        j = i - steps_per_delay
        if j < 0 or (j == 0 and not half):  # s <= 0: the history
            return history
        if not half:
            return y[j]
        return 0.5 * (y[j] + y[j + 1]) + h * (f[j] - f[j + 1]) / 8

    for i in range(n_steps):
        f[i] = _mackey_glass_rhs(y[i], past(i, 0))
        k1 = f[i]  # the Hermite midpoint reads f at grid points up to i + 1 - N <= i: already known
        k2 = _mackey_glass_rhs(y[i] + h / 2 * k1, past(i, 1))
        k3 = _mackey_glass_rhs(y[i] + h / 2 * k2, past(i, 1))
        k4 = _mackey_glass_rhs(y[i] + h * k3, past(i + 1, 0))
        y[i + 1] = y[i] + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.arange(n_steps + 1) * h, y


MACKEY_GLASS = DDE(
    lambda t, y, yd, p: p["beta"] * yd[0] / (1 + yd[0] ** p["n"]) - p["gamma"] * y,
    lambda t, y, p: jnp.reshape(p["tau"], (1,)),
    lambda t, p: jnp.full((1,), 0.5),
)


def test_mackey_glass_against_numpy_method_of_steps():
    grid, fine = _mackey_glass_reference(100.0, 680)
    _, coarse = _mackey_glass_reference(100.0, 340)
    every = 40  # the fine grid at spacing 1
    ts, reference = grid[::every], fine[::every]
    reference_error = np.abs(reference - coarse[:: every // 2]) / 15  # Richardson, order 4
    assert reference_error.max() < 1e-7
    sol = sciax.simulate(MACKEY_GLASS, jnp.full((1,), 0.5), jnp.asarray(ts), MG, rtol=1e-10, atol=1e-10)
    assert bool(sol.success)
    error = np.abs(np.asarray(sol.ys[:, 0]) - reference)
    assert error.max() < 1e-6, error.max()


# --- a state-dependent delay with a closed-form solution ---------------------------

C = 1 - sqrt(2) / 2


def _neves_exact(t: float) -> float:
    """Neves (1975), in Bellen & Zennaro (2003) and Paul's test set: y'(t) = y(y(t) - sqrt(2) + 1)
    / (2 sqrt(t)), y = 1 for t <= 1: y = sqrt(t) on [1, 2], t/4 + 1/2 + (1 - sqrt(2)/2) sqrt(t) after."""
    return sqrt(t) if t <= 2 else t / 4 + 0.5 + C * sqrt(t)


NEVES = DDE(
    lambda t, y, yd, p: yd[0] / (2 * jnp.sqrt(t)),
    lambda t, y, p: t - y + sqrt(2) - 1,  # delayed argument y(t) - sqrt(2) + 1
    lambda t, p: jnp.ones(1),
)


def test_state_dependent_delay_exact_solution():
    ts = jnp.linspace(1.0, 3.0, 11)
    sol = sciax.simulate(NEVES, jnp.ones(1), ts, None, rtol=1e-10, atol=1e-10)
    assert bool(sol.success)
    exact = np.array([_neves_exact(float(t)) for t in ts])
    assert np.abs(np.asarray(sol.ys[:, 0]) - exact).max() < 1e-7


# --- transformations ------------------------------------------------------------------


def test_jit_vmap_over_params_and_history():
    ts = jnp.linspace(0.0, 3.0, 7)
    params = {"tau": jnp.array([0.8, 1.0, 1.3]), "h": jnp.array([1.0, 0.5, 2.0])}
    # A buffer sized to the problem: under vmap, jax 0.12 compiles the default 256 slots very slowly.
    batch = jax.vmap(lambda p: _solve_linear_jit(p, ts, rtol=1e-8, atol=1e-8, history_steps=64))(params)
    assert batch.ys.shape == (3, 7, 1) and bool(jnp.all(batch.success))
    for i in range(3):
        one = _solve_linear_jit({k: v[i] for k, v in params.items()}, ts, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(batch.ys[i], one.ys, rtol=1e-6, atol=1e-8)
    # Linear in the history level; tau = 1 is the exact piecewise polynomial.
    exact = np.array([_exact_unit_delay(float(t)) for t in ts])
    np.testing.assert_allclose(batch.ys[1, :, 0], 0.5 * exact, atol=1e-8)


def test_grad_wrt_history_and_constant_delay():
    # 1.8 = t0 + 2 tau: a step ends there on a breakpoint that moves with tau, the output does not.
    ts = jnp.array([0.0, 1.5, 1.8, 2.5])

    def loss(tau, h):
        params = {"tau": tau, "h": h}
        sol = _solve_linear(params, ts, rtol=1e-10, atol=1e-10, max_steps=512, history_steps=256)
        return jnp.sum(sol.ys[1:, 0] ** 2)

    grad = jax.jit(jax.grad(loss, argnums=(0, 1)))(0.9, 1.2)
    eps = 1e-5
    value = jax.jit(loss)
    fd_tau = (value(0.9 + eps, 1.2) - value(0.9 - eps, 1.2)) / (2 * eps)
    fd_h = (value(0.9, 1.2 + eps) - value(0.9, 1.2 - eps)) / (2 * eps)
    np.testing.assert_allclose(grad[0], fd_tau, rtol=1e-5)
    np.testing.assert_allclose(grad[1], fd_h, rtol=1e-5)


# --- bad input ------------------------------------------------------------------------


def test_non_positive_delay_is_an_error():
    with pytest.raises(ValueError, match="delay must be > 0"):
        _solve_linear({"tau": -1.0, "h": 1.0}, jnp.array([0.0, 1.0]))
    with pytest.raises(Exception, match="delays must stay positive"):
        _solve_linear_jit({"tau": jnp.array(0.0), "h": 1.0}, jnp.array([0.0, 1.0]))
    sol = _solve_linear_jit({"tau": jnp.array(0.0), "h": 1.0}, jnp.array([0.0, 1.0]), throw=False)
    assert not bool(sol.success) and int(sol.result) == int(sciax.ode._dde_method.BAD_DELAY)


def test_a_delay_reaching_before_the_history_start_stops_the_solve():
    # tau = 1 + y^2 with y' = y: the delay grows with the state until t - tau < history_start = -3.
    model = DDE(
        lambda t, y, yd, p: y,
        lambda t, y, p: 1.0 + y**2,
        lambda t, p: jnp.full((1,), 1.0),
        history_start=-3.0,
    )
    with pytest.raises(ValueError, match="before history_start = -3.0"):
        sciax.simulate(model, jnp.full((1,), 2.0), jnp.array([0.0, 1.0]), None)  # tau(t0) = 5 already
    sol = eqx.filter_jit(sciax.simulate)(model, jnp.ones(1), jnp.array([0.0, 3.0]), None, throw=False)
    assert not bool(sol.success) and int(sol.result) == int(sciax.ode._dde_method.BAD_DELAY)
    # y = e^t, so t - 1 - y^2 >= -3 until e^(2t) - t = 2 at t ~ 0.448: the solve stops before it.
    assert 0.0 < float(sol.stats["t_reached"]) < 0.448
    with pytest.raises(TypeError, match="history_start must be"):
        DDE(lambda t, y, yd, p: y, lambda t, y, p: jnp.ones(1), lambda t, p: jnp.ones(1), history_start="0")


def test_history_shape_mismatch_names_shapes():
    model = DDE(lambda t, y, yd, p: -yd[0], lambda t, y, p: jnp.ones(1), lambda t, p: jnp.ones(3))
    with pytest.raises(ValueError, match=r"history.*shape \(3,\).*y0 has shape \(2,\)"):
        sciax.simulate(model, jnp.ones(2), jnp.array([0.0, 1.0]))


def test_history_steps_too_small_is_reported():
    ts = jnp.array([0.0, 3.0])

    def solve(**options):
        return sciax.simulate(COSINE_HISTORY, jnp.ones(1), ts, None, rtol=1e-8, atol=1e-8, history_steps=4, **options)

    sol = solve(throw=False)  # steps of about 0.1 while looking back by 1
    assert not bool(sol.success)
    assert int(sol.result) == int(sciax.ode._dde_method.HISTORY_TOO_SHORT)
    assert 1.0 <= float(sol.stats["t_reached"]) < 3.0
    assert np.all(np.isinf(np.asarray(sol.ys[1:])))
    with pytest.raises(Exception, match="raise history_steps"):
        solve()
