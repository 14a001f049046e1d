"""FD stencils: convergence orders on manufactured (analytic) functions, float64."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import fd

P = sciax.pde.Periodic()
L = 2 * np.pi


def _grid(n):
    return sciax.pde.Grid(n, L)


def _slope(errors, ns):
    return -np.polyfit(np.log(ns), np.log(errors), 1)[0]


def _u(x):
    return np.sin(x) + 0.5 * np.cos(2 * x)


def _ux(x):
    return np.cos(x) - np.sin(2 * x)


def _uxx(x):
    return -np.sin(x) - 2 * np.cos(2 * x)


NS = {2: (32, 64), 4: (16, 32), 6: (16, 32), 8: (20, 40)}


@pytest.mark.parametrize("order", fd.ORDERS)
def test_central_and_staggered_convergence(order):
    errs = {"d1": [], "d2": [], "stag": [], "div_a_grad": []}
    for n in NS[order]:
        g = _grid(n)
        (x,) = g.coords()
        h = g.spacing[0]
        u = jnp.asarray(_u(x))
        a = 2 + np.sin(x)
        errs["d1"].append(np.max(np.abs(fd.derivative(u, g, bc=P, order=order) - _ux(x))))
        errs["d2"].append(np.max(np.abs(fd.second_derivative(u, g, bc=P, order=order) - _uxx(x))))
        errs["stag"].append(np.max(np.abs(fd.staggered_derivative(u, g, bc=P, order=order) - _ux(x + h / 2))))
        exact = np.cos(x) * _ux(x) + a * _uxx(x)  # (a u')' with a = 2 + sin x
        errs["div_a_grad"].append(np.max(np.abs(fd.diffusion(u, jnp.asarray(a), g, bc=P, order=order) - exact)))
    for name, e in errs.items():
        assert abs(_slope(e, NS[order]) - order) < 0.3, (name, e)


@pytest.mark.parametrize("order", (2, 4))
def test_laplacian_gradient_divergence_2d(order):
    errs = []
    ns = (32, 64)
    for n in ns:
        g = sciax.pde.Grid((n, 2 * n), L)
        x, y = g.meshgrid()
        u = jnp.asarray(np.sin(x) * np.cos(2 * y))
        lap = fd.laplacian(u, g, bc=P, order=order)
        div = fd.divergence(fd.gradient(u, g, bc=P, order=order), g, bc=P, order=order)
        errs.append(max(np.max(np.abs(lap + 5 * u)), np.max(np.abs(div + 5 * u))))
    assert abs(_slope(errs, ns) - order) < 0.3


def test_upwind_first_order_and_weno5_fifth_order():
    up, we = [], []
    ns = (64, 128)
    for n in ns:
        g = _grid(n)
        (x,) = g.coords()
        u = jnp.asarray(np.exp(np.sin(x)))
        exact = np.cos(x) * np.exp(np.sin(x))
        up.append(np.max(np.abs(fd.upwind(u, 1.0, g, bc=P) - exact)))
        we.append(np.max(np.abs(fd.weno5(u, g, wind=-1.0, bc=P) - exact)))
    assert abs(_slope(up, ns) - 1) < 0.3
    assert abs(_slope(we, ns) - 5) < 0.3


def test_weno5_is_non_oscillatory_at_a_jump():
    g = _grid(64)
    (x,) = g.coords()
    u = jnp.asarray((x > 2) & (x < 4), dtype=float)
    # One explicit step of u_t + u_x = 0: WENO keeps it within [0, 1] (up to a small overshoot), central does not.
    dt = 0.4 * g.spacing[0]
    u_weno = u - dt * fd.weno5(u, g, wind=1.0, bc=P)
    u_central = u - dt * fd.derivative(u, g, bc=P, order=8)
    assert float(jnp.min(u_weno)) > -0.02 and float(jnp.max(u_weno)) < 1.02
    assert float(jnp.min(u_central)) < -0.05


def test_boundary_halo_rules():
    g = sciax.pde.Grid(4, 4.0)
    u = jnp.arange(1.0, 5.0)
    halo = sciax.pde.BoundaryHalo(g, ((sciax.pde.Dirichlet(1.0), sciax.pde.Neumann(2.0)),))
    padded = halo.pad(u, 2)
    # Dirichlet: 2 g - mirror; Neumann: mirror + (2m+1) dx flux.
    np.testing.assert_allclose(padded, [2 - 2, 2 - 1, 1, 2, 3, 4, 4 + 2, 3 + 6])
    np.testing.assert_allclose(sciax.pde.BoundaryHalo(g, P).pad(u, 1), [4, 1, 2, 3, 4, 1])
    timed = sciax.pde.BoundaryHalo(g, sciax.pde.Dirichlet(lambda t: 10 * t))
    np.testing.assert_allclose(np.asarray(timed.pad(u, 1, t=0.5))[[0, -1]], [10 - 1, 10 - 4])


def test_zero_padding_halo_and_stencil_against_numpy():
    # ZeroPadding: zeros outside, for fields and (flux=True) face fields; a padded layout may skip writing the
    # ghosts along an axis only when both of its sides hold zeros.
    z = sciax.pde.ZeroPadding()
    g = sciax.pde.Grid((6, 5), (6.0, 5.0))
    u = jnp.arange(1.0, 31.0).reshape(6, 5)
    halo = sciax.pde.BoundaryHalo(g, ((z, z), (sciax.pde.Neumann(), z)))
    for flux in (False, True):
        np.testing.assert_array_equal(halo.pad(u, 2, flux=flux, axes=(0,)), np.pad(u, ((2, 2), (0, 0))))
    np.testing.assert_array_equal(np.asarray(halo.pad(u, 2, axes=(1,)))[:, 7:], 0.0)
    np.testing.assert_array_equal(np.asarray(halo.pad(u, 2, axes=(1,)))[:, :2], np.asarray(u)[:, 1::-1])
    assert halo.zero_ghosts(0) and not halo.zero_ghosts(1)
    assert not sciax.pde.BoundaryHalo(g, sciax.pde.Neumann()).zero_ghosts(0)
    # The order-4 Laplacian with zero padding, against NumPy's constant padding and the same weights.
    v = np.random.default_rng(0).standard_normal((12, 10))
    grid = sciax.pde.Grid((12, 10), (12.0, 10.0))
    w = np.array([-1 / 12, 4 / 3, -5 / 2, 4 / 3, -1 / 12])
    padded = np.pad(v, 2)
    want = sum(w[k] * (padded[k : k + 12, 2:12] + padded[2:14, k : k + 10]) for k in range(5))
    np.testing.assert_allclose(fd.laplacian(jnp.asarray(v), grid, bc=z, order=4), want, rtol=0, atol=1e-12)
