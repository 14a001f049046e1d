"""The wave kernel's stored face flux (`sciax.grid.materialize`): the same values and derivatives as the
plain expression, a conditional the compiler keeps, and the order-8 leapfrog step against an independent
NumPy evaluation with Fornberg's published staggered weights (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.grid import materialize

from ._fd_reference import shifted_sum

W = sciax.pde


def _flux(p, b):
    return (p[1:] - p[:-1]) * b[:-1] + jnp.sin(p[:-1])


def test_materialize_is_fn_under_jit_vmap_grad():
    rng = np.random.default_rng(0)
    p, b = jnp.asarray(rng.standard_normal((5, 7, 6))), jnp.asarray(rng.random((7, 6)))
    ref = jax.vmap(_flux, (0, None))(p, b)
    for in_axes in ((0, None), (None, 0)):  # batched first operand (a select) and unbatched one (a conditional)
        args = (p, b) if in_axes[0] == 0 else (p[0], jnp.stack([b] * 5))
        want = ref if in_axes[0] == 0 else jax.vmap(_flux, in_axes)(*args)
        out = jax.jit(jax.vmap(lambda x, y: materialize(_flux, x, y), in_axes))(*args)
        # Equal up to the compiler's choice of fused multiply-adds.
        np.testing.assert_allclose(np.asarray(out), np.asarray(want), rtol=1e-15, atol=1e-15)
    # A NaN (or any bit pattern) in the first element still takes the branch that computes fn.
    q = p[0].at[0, 0].set(jnp.nan)
    out = jax.jit(lambda x, y: materialize(_flux, x, y))(q, b)
    np.testing.assert_allclose(np.asarray(out), np.asarray(_flux(q, b)), rtol=1e-15, atol=1e-15)
    loss = lambda f: lambda x, y: jnp.sum(f(x, y) ** 2)  # noqa: E731
    for argnums in (0, 1):
        want = jax.grad(loss(_flux), argnums)(p[0], b)
        out = jax.grad(loss(lambda x, y: materialize(_flux, x, y)), argnums)(p[0], b)
        np.testing.assert_allclose(np.asarray(out), np.asarray(want), rtol=1e-14, atol=1e-15)
    # Not a float array first: fn itself.
    assert materialize(lambda i: i + 1, jnp.arange(3)).tolist() == [1, 2, 3]


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the fusion boundary matters on XLA:CPU")
def test_materialize_survives_compilation():
    # XLA:CPU drops lax.optimization_barrier before fusion; the conditional must reach the compiled program.
    text = jax.jit(lambda p, b: materialize(_flux, p, b)[1:] * 2.0).lower(jnp.ones((64, 64)), jnp.ones((64, 64)))
    assert " conditional(" in text.compile().as_text()


def test_order8_leapfrog_step_against_numpy_fornberg():
    n, h, dt = (40, 36), 1.0, 1e-3
    rng = np.random.default_rng(3)
    c, rho = 1 + rng.random(n), 1 + rng.random(n)
    p, p_prev = rng.standard_normal(n), rng.standard_normal(n)
    model = W.AcousticWave(W.Grid(n, (n[0] * h, n[1] * h)), f0=5.0, bc=W.Neumann(), order=8)
    params = {"c": jnp.asarray(c), "rho": jnp.asarray(rho)}
    method = W.Leapfrog(dt)
    coefficients = method.prepare(model, params)
    state = sciax.pde.waves._leapfrog.LeapfrogState(jnp.asarray(p), jnp.asarray(p_prev), None)
    out = np.asarray(jax.jit(lambda s: method.step(model, s, 0.0, coefficients))(state).p)
    # The reference on the points 7 .. n - 8 of each axis, from p alone (no boundary condition is read).
    total = 0.0
    for axis in range(2):
        m = n[axis]
        inv_rho = 2 / (rho + np.roll(rho, -1, axis))  # two-point mean of rho at the half points i + 1/2
        # Forward to the half points i + 1/2, i = 3 .. m - 5 (entry i - 3): p[i + 1 + k] - p[i - k].
        flux = shifted_sum(p, axis, 4, 3, m - 7) / h * np.take(inv_rho, np.arange(3, m - 4), axis)
        # Back to the points i = 7 .. m - 8: flux at i + 1/2 + k (entry i + k - 3) and i - 1/2 - k (entry i - k - 4).
        div = shifted_sum(flux, axis, 4, 3, m - 14) / h
        other = 1 - axis
        total = total + np.take(div, np.arange(7, n[other] - 7), other)
    inner = (slice(7, -7), slice(7, -7))
    want = 2 * p[inner] - p_prev[inner] + dt**2 * (rho * c**2)[inner] * total
    np.testing.assert_allclose(out[inner], want, rtol=0, atol=1e-12 * np.max(np.abs(want)))
