"""Against scipy's independent integrators."""

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import sciax

LV_PARAMS = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}


def _lv_numpy(t, y, p=LV_PARAMS):
    x, z = y
    return [p["alpha"] * x - p["beta"] * x * z, p["delta"] * x * z - p["gamma"] * z]


@pytest.mark.parametrize(
    "method",
    [
        sciax.ode.Tsit5(),
        sciax.ode.Dopri5(),
        sciax.ode.Dopri8(),
        sciax.ode.Tsit5(unroll=True),
        sciax.ode.Dopri5(unroll=True),
    ],
    ids=lambda m: type(m).__name__ + ("-unrolled" if getattr(m, "unroll", False) else ""),
)
def test_lotka_volterra_vs_scipy(method):
    ts = np.linspace(0.0, 30.0, 61)
    y0 = np.array([30.0, 4.0])
    ref = solve_ivp(_lv_numpy, (0.0, 30.0), y0, method="DOP853", t_eval=ts, rtol=1e-13, atol=1e-12)
    sol = sciax.simulate(
        sciax.ode.lotka_volterra(),
        jnp.asarray(y0),
        jnp.asarray(ts),
        LV_PARAMS,
        method=method,
        rtol=1e-10,
        atol=1e-10,
        max_steps=20_000,
    )
    np.testing.assert_allclose(np.asarray(sol.ys), ref.y.T, rtol=1e-7)


def test_robertson_vs_scipy_radau():
    k = {"k1": 0.04, "k2": 3e7, "k3": 1e4}

    def rober(t, y):
        y1, y2, y3 = y
        return [-k["k1"] * y1 + k["k3"] * y2 * y3, k["k1"] * y1 - k["k2"] * y2**2 - k["k3"] * y2 * y3, k["k2"] * y2**2]

    ts = np.array([0.0, 1e-3, 1.0, 10.0, 1e2, 1e3, 1e4, 1e5])
    ref = solve_ivp(rober, (0.0, 1e5), [1.0, 0.0, 0.0], method="Radau", t_eval=ts, rtol=1e-12, atol=1e-14)
    sol = sciax.simulate(
        sciax.ode.robertson(),
        jnp.array([1.0, 0.0, 0.0]),
        jnp.asarray(ts),
        k,
        method=sciax.ode.Kvaerno5(),
        rtol=1e-8,
        atol=1e-12,
        max_steps=20_000,
    )
    assert bool(sol.success)
    # y2 is ~1e-5 and carries the stiffness: compare each component relative to its own size.
    np.testing.assert_allclose(np.asarray(sol.ys), ref.y.T, rtol=1e-5, atol=1e-13)
    assert int(sol.stats["num_steps"]) < 2_000  # an explicit method would need ~1e8 steps


def test_van_der_pol_stiff_vs_scipy_radau():
    mu = 1000.0
    ts = np.linspace(0.0, 3000.0, 7)
    ref = solve_ivp(
        lambda t, y: [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]],
        (0.0, 3000.0),
        [2.0, 0.0],
        method="Radau",
        t_eval=ts,
        rtol=1e-11,
        atol=1e-11,
    )
    sol = sciax.simulate(
        sciax.ode.van_der_pol(),
        jnp.array([2.0, 0.0]),
        jnp.asarray(ts),
        {"mu": mu},
        method=sciax.ode.Kvaerno5(),
        rtol=1e-8,
        atol=1e-8,
        max_steps=20_000,
    )
    assert bool(sol.success)
    np.testing.assert_allclose(np.asarray(sol.ys[:, 0]), ref.y[0], rtol=1e-4, atol=1e-6)
