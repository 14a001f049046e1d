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
