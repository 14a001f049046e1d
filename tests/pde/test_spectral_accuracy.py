"""ETDRK steppers against exact solutions: heat-mode decay, Cole–Hopf Burgers (with
convergence orders), the KdV soliton, and the method-of-lines route."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import pde
from sciax.pde import spectral

from ._exact import burgers_cole_hopf, kdv_soliton

NU = 0.1
BURGERS_GRID = pde.Grid(64, 2 * np.pi)
(BX,) = BURGERS_GRID.coords()


def test_heat_modes_decay_exactly_2d():
    g = pde.Grid((16, 12), (2 * np.pi, 3.0))
    x, y = g.meshgrid()
    ky = 2 * 2 * np.pi / 3.0
    modes = [(1.0, 1.0, 0.0, np.cos(x)), (0.5, 3.0, ky, np.cos(3 * x) * np.sin(ky * y)), (0.2, 0.0, ky, np.sin(ky * y))]
    u0 = jnp.asarray(sum(a * f for a, _, _, f in modes) + 1.5)
    ts = jnp.array([0.0, 0.5, 2.0])
    sol = sciax.simulate(spectral.heat(g), u0, ts, {"nu": 0.3}, method=pde.ETDRK4(dt=0.5))
    for t, u in zip(np.asarray(ts), np.asarray(sol.ys)):
        ref = sum(a * np.exp(-0.3 * (kx**2 + kyy**2) * t) * f for a, kx, kyy, f in modes) + 1.5
        np.testing.assert_allclose(u, ref, atol=1e-13)
    assert bool(sol.success) and int(sol.stats["num_steps"]) == 4
    ds = sol.to_xarray()
    assert ds["u"].dims == ("time", "x", "y")
    np.testing.assert_allclose(ds["y"].values, g.coords()[1])


def _burgers_error(method_cls, dt):
    sol = sciax.simulate(
        spectral.burgers(BURGERS_GRID),
        jnp.asarray(burgers_cole_hopf(BX, 0.0, NU)),
        jnp.array([0.0, 1.0]),
        {"nu": NU},
        method=method_cls(dt=dt),
    )
    return np.abs(np.asarray(sol.ys[-1]) - burgers_cole_hopf(BX, 1.0, NU)).max()


@pytest.mark.parametrize(
    "method_cls, order, dts",
    [(pde.ETDRK1, 1, (0.1, 0.05, 0.025)), (pde.ETDRK2, 2, (0.1, 0.05, 0.025)), (pde.ETDRK4, 4, (0.2, 0.1, 0.05))],
)
def test_convergence_order_vs_cole_hopf(method_cls, order, dts):
    # Reference: the exact Cole–Hopf solution (spatial error ~1e-13 at 64 modes),
    # not a self-convergence study.
    errors = np.array([_burgers_error(method_cls, dt) for dt in dts])
    observed = np.log2(errors[:-1] / errors[1:])
    assert np.all(np.abs(observed - order) < 0.3), (errors, observed)


def test_burgers_matches_cole_hopf():
    ts = jnp.linspace(0.0, 2.0, 5)
    sol = sciax.simulate(
        spectral.burgers(BURGERS_GRID),
        jnp.asarray(burgers_cole_hopf(BX, 0.0, NU)),
        ts,
        {"nu": NU},
        method=pde.ETDRK4(dt=0.02),
    )
    ref = np.stack([burgers_cole_hopf(BX, t, NU) for t in np.asarray(ts)])
    np.testing.assert_allclose(np.asarray(sol.ys), ref, atol=1e-11)


def test_kdv_soliton_after_one_crossing():
    # c = 1 on a box of length 40: the sech^2 tails at the box edge are ~4e-9, so
    # 128 points resolve the soliton and the error is dominated by the tails.
    length, c = 40.0, 1.0
    g = pde.Grid(128, length, origin=-length / 2)
    (x,) = g.coords()
    period = length / c
    sol = sciax.simulate(
        spectral.kdv(g),
        jnp.asarray(kdv_soliton(x, 0.0, c, length)),
        jnp.array([0.0, period]),
        None,
        method=pde.ETDRK4(dt=0.01),
    )
    err = np.abs(np.asarray(sol.ys[-1]) - kdv_soliton(x, period, c, length)).max()
    assert err < 1e-6, err


def test_kuramoto_sivashinsky_etdrk4_order_vs_implicit_reference():
    # Stiff (|dt k^4| up to ~40 at dt = 0.25). Reference: an independent method,
    # the implicit sciax.ode.Kvaerno5 by the method of lines at rtol = atol = 1e-12
    # (agrees with ETDRK4 at dt = 1/128 to ~3e-11).
    g = pde.Grid(64, 32 * np.pi)
    (x,) = g.coords()
    u0 = jnp.asarray(np.cos(x / 16) * (1 + np.sin(x / 16)))
    ts = jnp.array([0.0, 10.0])
    model = spectral.kuramoto_sivashinsky(g)
    ref = np.asarray(sciax.simulate(model, u0, ts, None, method=sciax.ode.Kvaerno5(), rtol=1e-12, atol=1e-12).ys[-1])
    errors = np.array(
        [
            np.abs(np.asarray(sciax.simulate(model, u0, ts, None, method=pde.ETDRK4(dt=dt)).ys[-1]) - ref).max()
            for dt in (0.25, 0.125, 0.0625)
        ]
    )
    observed = np.log2(errors[:-1] / errors[1:])
    assert np.all(np.abs(observed - 4) < 0.3), (errors, observed)
    assert errors[-1] < 1e-6


@pytest.mark.parametrize("name", ["burgers", "heat"])
def test_method_of_lines_agrees(name):
    g = pde.Grid(32, 2 * np.pi)
    (x,) = g.coords()
    model = spectral.burgers(g) if name == "burgers" else spectral.heat(g)
    u0 = jnp.asarray(burgers_cole_hopf(x, 0.0, NU))
    ts = jnp.linspace(0.0, 1.0, 3)
    etd = sciax.simulate(model, u0, ts, {"nu": NU}, method=pde.ETDRK4(dt=0.025)).ys
    mol = sciax.simulate(model, u0, ts, {"nu": NU}, method=sciax.ode.Tsit5(), rtol=1e-10, atol=1e-10).ys
    np.testing.assert_allclose(np.asarray(etd), np.asarray(mol), atol=1e-8)


def test_uneven_output_intervals():
    # Intervals of 1, 3 and 2 steps: the same states as a uniform run at the shared times.
    ts = jnp.array([0.0, 0.1, 0.4, 0.6])
    model, u0 = spectral.burgers(BURGERS_GRID), jnp.asarray(burgers_cole_hopf(BX, 0.0, NU))
    uneven = sciax.simulate(model, u0, ts, {"nu": NU}, method=pde.ETDRK2(dt=0.1))
    even = sciax.simulate(model, u0, jnp.linspace(0.0, 0.6, 7), {"nu": NU}, method=pde.ETDRK2(dt=0.1))
    np.testing.assert_allclose(np.asarray(uneven.ys), np.asarray(even.ys)[[0, 1, 4, 6]], rtol=1e-13, atol=1e-15)
    assert int(uneven.stats["num_steps"]) == 6 and int(uneven.stats["num_rhs_evals"]) == 12
