"""IFRK4 and CNAB2 against the exact Cole–Hopf Burgers solution (orders), multistep carry
across uneven output intervals, and the IMEX split for `sciax.ode` KenCarp methods."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import pde
from sciax.pde import spectral

from ._exact import burgers_cole_hopf

NU = 0.1
GRID = pde.Grid(64, 2 * np.pi)
(X,) = GRID.coords()
MODEL = spectral.burgers(GRID)
U0 = jnp.asarray(burgers_cole_hopf(X, 0.0, NU))


def _error(method):
    sol = sciax.simulate(MODEL, U0, jnp.array([0.0, 1.0]), {"nu": NU}, method=method)
    return np.abs(np.asarray(sol.ys[-1]) - burgers_cole_hopf(X, 1.0, NU)).max()


@pytest.mark.parametrize("cls, order, dts", [(pde.IFRK4, 4, (0.1, 0.05, 0.025)), (pde.CNAB2, 2, (0.04, 0.02, 0.01))])
def test_convergence_order_vs_cole_hopf(cls, order, dts):
    errors = np.array([_error(cls(dt=dt)) for dt in dts])
    observed = np.log2(errors[:-1] / errors[1:])
    assert np.all(np.abs(observed - order) < 0.3), (errors, observed)


def test_ifrk4_exact_for_linear_model():
    g = pde.Grid(16, 2 * np.pi)
    (x,) = g.coords()
    sol = sciax.simulate(
        spectral.heat(g), jnp.asarray(np.cos(3 * x)), jnp.array([0.0, 1.0]), {"nu": 0.5}, method=pde.IFRK4(dt=0.5)
    )
    np.testing.assert_allclose(np.asarray(sol.ys[-1]), np.exp(-4.5) * np.cos(3 * x), atol=1e-14)


def test_cnab2_carries_its_history_across_uneven_intervals():
    ts = jnp.array([0.0, 0.02, 0.08, 0.12])  # 1, 3 and 2 steps
    uneven = sciax.simulate(MODEL, U0, ts, {"nu": NU}, method=pde.CNAB2(dt=0.02))
    even = sciax.simulate(MODEL, U0, jnp.linspace(0.0, 0.12, 7), {"nu": NU}, method=pde.CNAB2(dt=0.02))
    np.testing.assert_allclose(np.asarray(uneven.ys), np.asarray(even.ys)[[0, 1, 4, 6]], rtol=1e-13, atol=1e-15)
    assert int(uneven.stats["num_rhs_evals"]) == 6 + 1


@pytest.mark.parametrize("tol", [1e-8, 1e-11])
def test_imex_split_drives_kencarp(tol):
    # Same semi-discretisation (16 points), two independent time integrators. ETDRK4 at
    # dt = 0.01 is converged to ~1e-15 here (halving dt changes it by less), so the
    # difference is KenCarp4's own global error, which follows its tolerance.
    g = pde.Grid(16, 2 * np.pi)
    (x,) = g.coords()
    model = spectral.burgers(g)
    u0 = jnp.asarray(burgers_cole_hopf(x, 0.0, NU))
    ts = jnp.array([0.0, 0.5])
    kencarp = sciax.simulate(model, u0, ts, {"nu": NU}, method=sciax.ode.KenCarp4(), rtol=tol, atol=tol)
    etd = sciax.simulate(model, u0, ts, {"nu": NU}, method=pde.ETDRK4(dt=0.01))
    error = np.abs(np.asarray(kencarp.ys[-1]) - np.asarray(etd.ys[-1])).max()
    assert 0.05 * tol < error < 3 * tol, (tol, error)
    # The implicit stage equation is linear, so each chord iteration ends at round-off; that
    # must count as converged (it once counted as divergence: 1,269 steps, 745 rejected).
    assert int(kencarp.stats["num_rejected_steps"]) <= 2, kencarp.stats
    assert int(kencarp.stats["num_steps"]) < (10 if tol == 1e-8 else 60), kencarp.stats


@pytest.mark.parametrize("cls", [pde.ETDRK4, pde.IFRK4, pde.CNAB2])
def test_float32_state_with_float64_params_stays_float32(cls):
    # Under x64, Python-float params make float64 coefficients; the state keeps its precision.
    ts = jnp.array([0.0, 0.2])
    single = sciax.simulate(MODEL, U0.astype(jnp.float32), ts, {"nu": NU}, method=cls(dt=0.02))
    double = sciax.simulate(MODEL, U0, ts, {"nu": NU}, method=cls(dt=0.02))
    assert single.ys.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(single.ys[-1]), np.asarray(double.ys[-1]), rtol=0, atol=1e-5)
