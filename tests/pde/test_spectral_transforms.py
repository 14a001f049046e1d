"""jit, vmap (over u0 and over params) and grad (vs central finite differences) through ETDRK4."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import pde
from sciax.pde import spectral

from ._exact import burgers_cole_hopf

GRID = pde.Grid(32, 2 * np.pi)
(X,) = GRID.coords()
MODEL = spectral.burgers(GRID)
TS = jnp.linspace(0.0, 1.0, 5)  # 100 steps of 0.01
U0 = jnp.asarray(burgers_cole_hopf(X, 0.0, 0.1))
P = {"nu": jnp.asarray(0.1)}


def _simulate(u0, p):
    return sciax.simulate(MODEL, u0, TS, p, method=pde.ETDRK4(dt=0.01)).ys


@functools.cache
def _jitted():
    return jax.jit(_simulate)


def _loss(u0, p):
    ys = _jitted()(u0, p)
    return jnp.sum(ys[-1] ** 2 * jnp.cos(jnp.asarray(X))) + jnp.sum(ys[2] ** 3)


def test_jit_equals_eager():
    np.testing.assert_allclose(np.asarray(_jitted()(U0, P)), np.asarray(_simulate(U0, P)), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("axes", [(0, None), (None, 0)], ids=["u0", "params"])
def test_vmap_equals_loop(axes):
    scale = jnp.linspace(0.8, 1.2, 3)
    u0s, ps = U0 * scale[:, None], {"nu": P["nu"] * scale}
    args = (u0s if axes[0] == 0 else U0, ps if axes[1] == 0 else P)
    batched = jax.vmap(_jitted(), in_axes=axes)(*args)
    for i in range(3):
        u0 = u0s[i] if axes[0] == 0 else U0
        p = {"nu": ps["nu"][i]} if axes[1] == 0 else P
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(_jitted()(u0, p)), rtol=1e-12, atol=1e-14)


def test_grad_matches_finite_differences():
    g_u0, g_p = jax.grad(_loss, argnums=(0, 1))(U0, P)
    eps = 1e-6
    fd_nu = (_loss(U0, {"nu": P["nu"] + eps}) - _loss(U0, {"nu": P["nu"] - eps})) / (2 * eps)
    np.testing.assert_allclose(float(g_p["nu"]), float(fd_nu), rtol=1e-6)
    direction = jnp.asarray(np.random.default_rng(0).standard_normal(X.shape))
    fd_u0 = (_loss(U0 + eps * direction, P) - _loss(U0 - eps * direction, P)) / (2 * eps)
    np.testing.assert_allclose(float(jnp.vdot(g_u0, direction)), float(fd_u0), rtol=1e-6)


def test_forward_mode_matches_reverse_mode():
    tangent = jnp.asarray(np.sin(2 * X))
    _, jvp = jax.jvp(lambda u: _loss(u, P), (U0,), (tangent,))
    np.testing.assert_allclose(float(jvp), float(jnp.vdot(jax.grad(_loss)(U0, P), tangent)), rtol=1e-10)


def test_grad_through_1000_steps_matches_finite_differences():
    # Kuramoto–Sivashinsky-type model with a parameter in L and one in N, 1,000 ETDRK4 steps.
    g = pde.Grid(32, 8 * np.pi)
    (x,) = g.coords()

    def linear(k, p):
        return p["a"] * k[0] ** 2 - k[0] ** 4

    def nonlinear(t, u, p, grid):
        return -p["b"] * u * spectral.derivative(u, grid)

    model = pde.SemilinearPDE(g, linear, nonlinear, dealias=True)
    u0 = jnp.asarray(np.cos(x / 4) * (1 + np.sin(x / 4)))
    weight = jnp.asarray(np.sin(x / 4 + 0.3))

    ts = jnp.array([0.0, 10.0])  # created outside jit: the step count must be concrete

    @jax.jit
    def loss(u0, p):
        ys = sciax.simulate(model, u0, ts, p, method=pde.ETDRK4(dt=0.01)).ys
        return jnp.sum(ys[-1] * weight)

    p = {"a": jnp.asarray(1.0), "b": jnp.asarray(0.8)}
    g_u0, g_p = jax.grad(loss, argnums=(0, 1))(u0, p)
    eps = 1e-6
    for key in p:
        up, down = dict(p), dict(p)
        up[key], down[key] = p[key] + eps, p[key] - eps
        np.testing.assert_allclose(float(g_p[key]), float((loss(u0, up) - loss(u0, down)) / (2 * eps)), rtol=1e-6)
    direction = jnp.asarray(np.random.default_rng(1).standard_normal(x.shape))
    fd = (loss(u0 + eps * direction, p) - loss(u0 - eps * direction, p)) / (2 * eps)
    np.testing.assert_allclose(float(jnp.vdot(g_u0, direction)), float(fd), rtol=1e-6)


@pytest.mark.parametrize("name", ["navier_stokes_2d", "gray_scott"])
def test_vmap_over_initial_conditions_and_params_2d(name):
    g = pde.Grid((8, 8), 2 * np.pi)
    x, y = g.meshgrid()
    if name == "navier_stokes_2d":
        model, y0 = spectral.navier_stokes_2d(g, forcing_mode=1), np.sin(x) * np.cos(2 * y) + 0.5 * np.cos(x - y)
        p = {"nu": jnp.asarray(0.05), "drag": jnp.asarray(0.1), "forcing": jnp.asarray(1.0)}
    else:
        model, y0 = spectral.gray_scott(g), np.stack([1 - 0.3 * np.cos(x) * np.cos(y), 0.2 + 0.1 * np.sin(x)])
        p = {"Du": jnp.asarray(0.2), "Dv": jnp.asarray(0.1), "F": jnp.asarray(0.04), "kappa": jnp.asarray(0.06)}
    y0 = jnp.asarray(y0)
    ts = jnp.array([0.0, 0.5])
    run = jax.jit(lambda y, q: sciax.simulate(model, y, ts, q, method=pde.ETDRK4(dt=0.1)).ys)
    scale = jnp.array([0.9, 1.0, 1.1])
    y0s = y0 * scale.reshape((3,) + (1,) * y0.ndim)
    ps = jax.tree_util.tree_map(lambda v: v * scale, p)
    batched = jax.vmap(run)(y0s, ps)
    for i in range(3):
        one = run(y0s[i], jax.tree_util.tree_map(lambda v, i=i: v[i], ps))
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(one), rtol=1e-12, atol=1e-14)
