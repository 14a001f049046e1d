"""Stiff delay differential equations: `MethodOfSteps` with the Rosenbrock methods against an
independent reference (scipy's Radau, applied as a method of steps interval by interval),
its step count against Tsit5's, `jit`/`vmap`/`grad`, and the refusal of an unsupported method."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import sciax
from sciax.ode import DDE, MethodOfSteps


def _radau_method_of_steps(rhs, history, tau: float, t_end: float, ts: np.ndarray) -> np.ndarray:
    """The method of steps by scipy: Radau (rtol 1e-12) on [k tau, (k + 1) tau], the delayed
    state read from the history (k = 0) or the previous interval's dense output."""
    past, y, out = history, history(0.0), np.empty((ts.size, np.size(history(0.0))))
    for k in range(int(np.ceil(t_end / tau))):
        lo, hi = k * tau, min((k + 1) * tau, t_end)
        sol = solve_ivp(
            lambda t, x, past=past: rhs(t, x, past(t - tau)),
            (lo, hi),
            y,
            method="Radau",
            rtol=1e-12,
            atol=1e-14,
            dense_output=True,
        )
        inside = (ts >= lo) & (ts <= hi)
        out[inside] = sol.sol(ts[inside]).T
        past, y = sol.sol, sol.y[:, -1]
    return out


# --- y' = -lam y(t) + mu y(t - tau), history cos(2t): stiff for lam tau >> 1 --------------

LAM, MU, TAU = 1.0e3, 500.0, 1.0

LINEAR = DDE(
    lambda t, y, yd, p: -p["lam"] * y + p["mu"] * yd[0],
    lambda t, y, p: jnp.reshape(p["tau"], (1,)),
    lambda t, p: jnp.cos(2 * t)[None],
)


def _history(s):
    return np.array([np.cos(2 * s)])


@eqx.filter_jit
def _solve_linear(params, ts, method, **options):
    return sciax.simulate(LINEAR, jnp.ones(1), ts, params, method=method, throw=False, **options)


def _linear_params(lam=LAM, mu=MU, tau=TAU):
    return {"lam": jnp.asarray(lam), "mu": jnp.asarray(mu), "tau": jnp.asarray(tau)}


def _linear_reference(lam, tau, ts):
    return _radau_method_of_steps(lambda t, y, yd: -lam * y + MU * yd, _history, tau, float(ts[-1]), ts)


TS = np.linspace(0.0, 3.0, 13)
RODAS5P = MethodOfSteps(sciax.ode.Rodas5P())
TOLERANCES = dict(rtol=1e-8, atol=1e-11)
# The batched solves: a modest buffer (128 steps covers a delay window at rtol 1e-6), because
# under vmap jax 0.12's XLA compile time grows steeply with the buffer (85 s at 256 slots vs 13 s at 128).
BATCH_TOLERANCES = dict(rtol=1e-6, atol=1e-9)


@pytest.fixture(scope="module")
def rodas5p_batch():
    """Rodas5P under `jit` and `vmap` over (lam, tau); the middle member is (LAM, TAU)."""
    lam = jnp.array([500.0, LAM, 2000.0])
    tau = jnp.array([0.7, TAU, 1.3])
    solve = jax.vmap(
        lambda lam_i, tau_i: _solve_linear(
            _linear_params(lam=lam_i, tau=tau_i), jnp.asarray(TS), RODAS5P, history_steps=128, **BATCH_TOLERANCES
        )
    )
    return lam, tau, solve(lam, tau)


def test_jit_vmap_over_lam_and_delay_against_scipy_radau(rodas5p_batch):
    lam, tau, batch = rodas5p_batch
    assert batch.ys.shape == (3, TS.size, 1) and bool(jnp.all(batch.success))
    for i in range(3):
        reference = _linear_reference(float(lam[i]), float(tau[i]), TS)
        np.testing.assert_allclose(batch.ys[i], reference, rtol=1e-5, atol=1e-8)
    np.testing.assert_array_equal(batch.stats["num_jacobian_evals"], batch.stats["num_steps"])


def test_stiff_method_takes_far_fewer_steps_than_tsit5(rodas5p_batch):
    """lam tau = 1,000: Tsit5's steps stay near its stability limit (|h lam| < ~3.5) long after
    each transient, Rodas5P's are set by accuracy and the delay."""
    explicit = _solve_linear(_linear_params(), jnp.asarray(TS), MethodOfSteps(), history_steps=1024, **BATCH_TOLERANCES)
    assert bool(explicit.success)
    np.testing.assert_allclose(explicit.ys, _linear_reference(LAM, TAU, TS), rtol=1e-5, atol=1e-8)
    n_stiff, n_explicit = int(rodas5p_batch[2].stats["num_steps"][1]), int(explicit.stats["num_steps"])
    assert n_explicit > TS[-1] * LAM / 3.5 / 2  # at least half the stability-limited count
    assert 5 * n_stiff < n_explicit, (n_stiff, n_explicit)


# --- a nonlinear stiff two-state system ------------------------------------------------


def _two_state_rhs(y, yd, k):
    """A fast relaxation of y0 towards a feedback of y1 delayed by tau, and a slow y1 driven by
    y0 and damped by y0 delayed by tau / 2 (`yd[j]`: the state delayed by the j-th delay)."""
    return np.array([-k * (y[0] - 1 / (1 + yd[1, 1] ** 2)), y[0] - 0.5 * y[1] * yd[0, 0]])


TWO_STATE = DDE(
    lambda t, y, yd, p: jnp.stack([-p["k"] * (y[0] - 1 / (1 + yd[1, 1] ** 2)), y[0] - 0.5 * y[1] * yd[0, 0]]),
    lambda t, y, p: jnp.array([0.5, 1.0]) * p["tau"],
    lambda t, p: jnp.array([0.2, 1.0]),
)


def test_nonlinear_stiff_two_states_against_scipy_radau():
    """Two delays (tau / 2 and tau) with k = 1e4; the reference runs with the smaller delay's
    intervals, reading each delayed state from its own interval's dense output."""
    k, tau, t_end = 1.0e4, 1.0, 2.0
    ts = np.linspace(0.0, t_end, 9)
    pieces = {}

    def past(s):
        if s <= 0:
            return np.array([0.2, 1.0])
        index = min(int(np.floor(s / (tau / 2))), max(pieces))
        return pieces[index](s)

    y, reference = np.array([0.2, 1.0]), np.empty((ts.size, 2))
    for i in range(int(round(t_end / (tau / 2)))):
        lo, hi = i * tau / 2, (i + 1) * tau / 2

        def rhs(t, x):
            short, long = past(t - tau / 2), past(t - tau)
            return _two_state_rhs(x, np.stack([short, long]), k)

        sol = solve_ivp(rhs, (lo, hi), y, method="Radau", rtol=1e-12, atol=1e-14, dense_output=True)
        pieces[i] = sol.sol
        inside = (ts >= lo) & (ts <= hi)
        reference[inside] = sol.sol(ts[inside]).T
        y = sol.y[:, -1]
    out = eqx.filter_jit(sciax.simulate)(
        TWO_STATE,
        jnp.array([0.2, 1.0]),
        jnp.asarray(ts),
        {"k": k, "tau": tau},
        method=RODAS5P,
        rtol=1e-9,
        atol=1e-12,
    )
    assert bool(out.success)
    np.testing.assert_allclose(out.ys, reference, rtol=1e-6, atol=1e-9)
    assert int(out.stats["num_steps"]) < 400  # explicit: about 2 * k / 3.5 ~ 5,700 steps


# --- gradients -------------------------------------------------------------------------


def test_grad_wrt_lam_and_delay_matches_finite_differences():
    """Fixed steps (L-stable, |h lam| = 40), so the loss is a smooth function of both."""
    ts = jnp.array([0.0, 1.5, 2.5])

    def loss(lam, tau):
        sol = _solve_linear(_linear_params(lam=lam, tau=tau), ts, RODAS5P, adaptive=False, dt0=0.05)
        return jnp.sum(sol.ys[1:, 0] ** 2)

    # One compiled function gives both the gradient and the values for the differences.
    value_and_grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    grad = value_and_grad(800.0, 0.9)[1]

    def value(lam, tau):
        return value_and_grad(lam, tau)[0]

    eps_lam, eps_tau = 1e-2, 1e-6
    fd_lam = (value(800.0 + eps_lam, 0.9) - value(800.0 - eps_lam, 0.9)) / (2 * eps_lam)
    fd_tau = (value(800.0, 0.9 + eps_tau) - value(800.0, 0.9 - eps_tau)) / (2 * eps_tau)
    assert abs(float(fd_lam)) > 1e-6 and abs(float(fd_tau)) > 1e-2  # both derivatives matter
    np.testing.assert_allclose(grad[0], fd_lam, rtol=1e-5)
    np.testing.assert_allclose(grad[1], fd_tau, rtol=1e-5)


# --- bad input ---------------------------------------------------------------------------


def test_unsupported_method_names_the_accepted_ones():
    with pytest.raises(
        TypeError, match=r"rk must be one of .*Tsit5.*Dopri5.*Rodas5P.*Rodas4.*Ros3P.*Ros34PW2.*Kvaerno5"
    ):
        MethodOfSteps(sciax.ode.Kvaerno5())
    with pytest.raises(TypeError, match=r"jacobian=.*'auto' or 'jacfwd'.*got <function"):
        MethodOfSteps(sciax.ode.Rodas5P(jacobian=lambda t, y, p: -jnp.eye(y.size)))
