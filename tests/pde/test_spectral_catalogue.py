"""The equation catalogue against exact solutions and independent references:
Taylor–Green and Kolmogorov flows (2-D Navier–Stokes), Beltrami flow and the 2-D
reduction (3-D Navier–Stokes), and the reaction ODEs of uniform states (scipy)."""

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import sciax
from sciax import pde
from sciax.pde import spectral

G2 = pde.Grid((16, 16), 2 * np.pi)
X2, Y2 = G2.meshgrid()


def test_taylor_green_vorticity_decays_exactly():
    k, nu, mu = 2.0, 0.05, 0.1
    w0 = -2 * k * np.cos(k * X2) * np.cos(k * Y2)  # curl of (cos kx sin ky, -sin kx cos ky)
    ts = jnp.array([0.0, 0.5, 1.0])
    sol = sciax.simulate(
        spectral.navier_stokes_2d(G2), jnp.asarray(w0), ts, {"nu": nu, "drag": mu}, method=pde.ETDRK4(dt=0.05)
    )
    for t, w in zip(np.asarray(ts), np.asarray(sol.ys)):
        np.testing.assert_allclose(w, w0 * np.exp(-(2 * nu * k**2 + mu) * t), atol=1e-12)


def test_kolmogorov_forcing_drives_the_laminar_flow():
    # From rest, omega(t) = A k_f cos(k_f y) (1 - exp(-(nu k_f^2 + mu) t)) / (nu k_f^2 + mu), exactly.
    g = pde.Grid((16, 16), (2 * np.pi, 4 * np.pi), origin=(0.0, 0.3))
    _, y = g.meshgrid()
    nu, mu, amp, mode = 0.05, 0.1, -1.5, 3
    k_f = 2 * np.pi * mode / (4 * np.pi)
    rate = nu * k_f**2 + mu
    sol = sciax.simulate(
        spectral.navier_stokes_2d(g, forcing_mode=mode),
        jnp.zeros(g.shape),
        jnp.array([0.0, 2.0]),
        {"nu": nu, "drag": mu, "forcing": amp},
        method=pde.ETDRK4(dt=0.1),
    )
    expected = amp * k_f * np.cos(k_f * y) * (1 - np.exp(-rate * 2.0)) / rate
    np.testing.assert_allclose(np.asarray(sol.ys[-1]), expected, atol=1e-12)


def test_beltrami_abc_flow_decays_exactly_3d():
    g = pde.Grid((8, 8, 8), 2 * np.pi)
    x, y, z = g.meshgrid()
    a, b, c = 1.0, 0.7, 0.4  # curl u = u (k = 1): u x omega = 0
    u0 = np.stack([a * np.sin(z) + c * np.cos(y), b * np.sin(x) + a * np.cos(z), c * np.sin(y) + b * np.cos(x)])
    np.testing.assert_allclose(np.asarray(spectral.curl(jnp.asarray(u0), g)), u0, atol=1e-13)
    sol = sciax.simulate(
        spectral.navier_stokes_3d(g), jnp.asarray(u0), jnp.array([0.0, 1.0]), {"nu": 0.1}, method=pde.ETDRK4(dt=0.1)
    )
    np.testing.assert_allclose(np.asarray(sol.ys[-1]), u0 * np.exp(-0.1), atol=1e-12)
    assert sol.to_xarray()["velocity"].dims == ("time", "field", "x", "y", "z")


def test_navier_stokes_3d_reduces_to_the_2d_vorticity_form():
    # A z-independent flow with w = 0 is 2-D: the velocity-form (projection) solution's
    # vorticity must equal the vorticity-form (stream function) solution.
    g3 = pde.Grid((16, 16, 4), 2 * np.pi)
    w0 = np.sin(X2 + 0.3) * np.cos(2 * Y2) + 0.5 * np.cos(3 * X2 - Y2 + 1.0) + 0.4 * np.sin(X2 + 2 * Y2)
    uv0 = np.asarray(spectral.velocity_from_vorticity(jnp.asarray(w0), G2))
    u0 = np.stack([np.repeat(uv0[0][..., None], 4, -1), np.repeat(uv0[1][..., None], 4, -1), np.zeros((16, 16, 4))])
    p, ts, method = {"nu": 0.02}, jnp.array([0.0, 1.0]), pde.ETDRK4(dt=0.1)
    u1 = sciax.simulate(spectral.navier_stokes_3d(g3), jnp.asarray(u0), ts, p, method=method).ys[-1]
    w1 = sciax.simulate(spectral.navier_stokes_2d(G2), jnp.asarray(w0), ts, p, method=method).ys[-1]
    assert np.abs(np.asarray(w1) - w0).max() > 0.1  # the nonlinear term did something
    np.testing.assert_allclose(np.asarray(spectral.curl(u1, g3)[2, ..., 1]), np.asarray(w1), atol=1e-12)
    np.testing.assert_allclose(np.asarray(u1[2]), 0.0, atol=1e-14)


def _uniform(model, value, p, t1, dt):
    value = np.asarray(value, float)
    full = np.broadcast_to(value.reshape((-1,) + (1,) * model.grid.ndim), (value.size, *model.grid.shape))
    y0 = jnp.asarray(full if model.fields else full[0])
    ys = sciax.simulate(model, y0, jnp.array([0.0, t1]), p, method=pde.ETDRK4(dt=dt)).ys[-1]
    return np.asarray(ys).reshape((-1, model.grid.size))


@pytest.mark.parametrize("name", ["allen_cahn", "swift_hohenberg", "gray_scott"])
def test_uniform_states_follow_the_reaction_ode(name):
    # A uniform state sees only L(k = 0) and N: compare with scipy's DOP853 on that ODE.
    g1, g2 = pde.Grid(8, 2 * np.pi), pde.Grid((8, 8), 2 * np.pi)
    if name == "allen_cahn":
        model, p, y0 = spectral.allen_cahn(g1), {"epsilon": 0.1}, [0.2]
        f = lambda t, y: y - y**3  # noqa: E731
    elif name == "swift_hohenberg":
        model, p, y0 = spectral.swift_hohenberg(g1), {"r": 1.5, "kc": 0.8, "g": 0.5}, [0.1]
        f = lambda t, y: (1.5 - 0.8**4) * y + 0.5 * y**2 - y**3  # noqa: E731
    else:
        model, p, y0 = spectral.gray_scott(g2), {"Du": 0.2, "Dv": 0.1, "F": 0.04, "kappa": 0.06}, [0.6, 0.3]
        f = lambda t, y: [0.04 * (1 - y[0]) - y[0] * y[1] ** 2, y[0] * y[1] ** 2 - 0.1 * y[1]]  # noqa: E731
    got = _uniform(model, y0, p, 2.0, 0.02)
    ref = solve_ivp(f, (0.0, 2.0), y0, method="DOP853", rtol=1e-12, atol=1e-14).y[:, -1]
    np.testing.assert_allclose(got, np.broadcast_to(ref[:, None], got.shape), atol=1e-9)


def test_cahn_hilliard_conserves_mass_and_lowers_energy():
    g = pde.Grid(32, 2 * np.pi)
    (x,) = g.coords()
    u0 = 0.1 + 0.3 * np.cos(x) + 0.2 * np.sin(3 * x + 0.4)
    p = {"mobility": 1.0, "gamma": 0.2}
    ys = np.asarray(
        sciax.simulate(
            spectral.cahn_hilliard(g), jnp.asarray(u0), jnp.linspace(0, 2.0, 5), p, method=pde.ETDRK4(dt=0.01)
        ).ys
    )
    np.testing.assert_allclose(ys.mean(axis=1), 0.1, atol=1e-13)
    ux = [np.asarray(spectral.derivative(jnp.asarray(u), g)) for u in ys]
    energy = [np.mean((u**2 - 1) ** 2 / 4 + 0.2 / 2 * d**2) for u, d in zip(ys, ux)]
    assert np.all(np.diff(energy) < 0), energy
