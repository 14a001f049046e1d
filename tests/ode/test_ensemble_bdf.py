"""`simulate_ensemble(..., method=BDF(...))`: the shared-step ensemble (one step size and order for all
members) against scipy Radau per member, each member's own single solve, exact solutions and finite
differences; and the block GMRES it uses, against numpy's dense solve."""

import functools

import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest
import scipy.linalg

import sciax
from sciax.ode import simulate_ensemble
from sciax.ode._bdf_gmres import gmres

from .test_bdf import BRUSS, BRUSS_DIFFUSION, BRUSS_PATTERN, BRUSS_TS, BRUSS_Z0, bruss_radau

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# Three members that differ in diffusivity and initial amplitude.
ALPHAS = jnp.array([0.08, 0.1, 0.13])
SCALES = np.array([0.9, 1.0, 1.1])
Z0S = jnp.asarray(SCALES[:, None] * np.asarray(BRUSS_Z0)[None])
KRYLOV = sciax.ode.BDF(jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-8, atol=1e-14), preconditioner=BRUSS_DIFFUSION)
SPARSE = sciax.ode.BDF(jacobian=BRUSS_PATTERN)
METHODS = {"block-sparse-lu": SPARSE, "block-gmres": KRYLOV}
TOL = dict(rtol=1e-9, atol=1e-9)


def _radau(member):
    return bruss_radau(float(ALPHAS[member]), float(SCALES[member]))


@functools.cache
def _ensemble(name):
    run = jax.jit(
        lambda z, a: simulate_ensemble(BRUSS, z, BRUSS_TS, a, method=METHODS[name], path="shared_step", **TOL)
    )
    return run(Z0S, ALPHAS)


@functools.cache
def _single(name):
    return jax.jit(lambda z, a: sciax.simulate(BRUSS, z, BRUSS_TS, a, method=METHODS[name], **TOL))


@pytest.mark.parametrize("method", list(METHODS))
def test_every_member_matches_radau_and_its_own_single_solve(method):
    sol = _ensemble(method)
    assert sol.ys.shape == (3, BRUSS_TS.size, BRUSS_Z0.size)
    assert bool(jnp.all(sol.success))
    steps = np.asarray(sol.stats["num_steps"])
    assert np.all(steps == steps[0]), "one shared step sequence"
    for m in range(3):
        # The same bound as the single solves' own agreement with Radau (test_bdf.py).
        np.testing.assert_allclose(np.asarray(sol.ys[m]), _radau(m), rtol=2e-6, atol=2e-6)
        if method == "block-gmres":  # one path suffices for this check (each single solve compiles anew)
            single = _single(method)(Z0S[m], ALPHAS[m])
            np.testing.assert_allclose(np.asarray(sol.ys[m]), np.asarray(single.ys), rtol=2e-6, atol=2e-6)


def test_shared_steps_serve_the_most_demanding_member():
    # Every member passes its own error test at every shared step, so no member is integrated
    # more coarsely than alone: the shared run takes at least as many accepted steps as any member alone.
    sol = _ensemble("block-gmres")
    alone = [int(_single("block-gmres")(Z0S[m], ALPHAS[m]).stats["num_accepted_steps"]) for m in range(3)]
    assert int(sol.stats["num_accepted_steps"][0]) >= max(alone)


def _linear_members(k):
    """y' = A(k) y with A = [[-k, 1], [0, -1000 k]] (stiff), exact solution expm(A t) y0."""
    return jnp.array([[-k, 1.0], [0.0, -1000.0 * k]])


LINEAR = sciax.ode.ODE(lambda t, y, k: _linear_members(k) @ y)
LINEAR_TS = jnp.array([0.0, 0.5, 2.0])
LINEAR_Y0 = jnp.array([[1.0, 1.0], [2.0, -1.0]])


def _exact_linear(y0, k):
    return np.stack([scipy.linalg.expm(np.asarray(_linear_members(k)) * float(t)) @ np.asarray(y0) for t in LINEAR_TS])


def test_dense_blocks_exact_solution_and_forward_mode_against_finite_differences():
    def final(k):
        sol = simulate_ensemble(
            LINEAR, LINEAR_Y0, LINEAR_TS, k, method=sciax.ode.BDF(), rtol=1e-10, atol=1e-12,
            adjoint=sciax.ode.ForwardMode(), path="shared_step",
        )  # fmt: skip
        return sol.ys

    ks = jnp.array([0.7, 1.3])
    ys, tangent = jax.jit(lambda k: jax.jvp(final, (k,), (jnp.ones_like(k),)))(ks)
    for m in range(2):
        np.testing.assert_allclose(np.asarray(ys[m]), _exact_linear(LINEAR_Y0[m], float(ks[m])), rtol=1e-7, atol=1e-9)
    eps = 1e-5
    fd = (_exact_linear_all(ks + eps) - _exact_linear_all(ks - eps)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), fd, rtol=1e-5, atol=1e-7)


def test_reverse_mode_against_the_exact_derivative():
    def loss(k):
        sol = simulate_ensemble(
            LINEAR, LINEAR_Y0, LINEAR_TS, k, method=sciax.ode.BDF(), rtol=1e-10, atol=1e-12, path="shared_step"
        )
        return jnp.sum(sol.ys**2)

    ks = jnp.array([0.7, 1.3])
    grad = np.asarray(jax.jit(jax.grad(loss))(ks))
    eps = 1e-5  # central differences of the exact solution
    exact = [
        np.sum(_exact_linear_all(ks + eps * e) ** 2 - _exact_linear_all(ks - eps * e) ** 2) / (2 * eps)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(grad, exact, rtol=1e-6)


def _exact_linear_all(ks):
    return np.stack([_exact_linear(LINEAR_Y0[m], float(ks[m])) for m in range(2)])


def test_block_gmres_solves_each_block_to_its_own_tolerance():
    rng = np.random.default_rng(3)
    n = 12
    a = np.eye(n)[None] * 4 + rng.normal(size=(3, n, n)) / np.sqrt(n)
    b = rng.normal(size=(3, n)) * np.array([[1e-6], [1.0], [1e3]])  # very different scales per block
    mv = lambda x: jnp.einsum("mij,mj->mi", jnp.asarray(a), x)  # noqa: E731
    x, ok = jax.jit(lambda b: gmres(mv, lambda v: v, b, rtol=1e-11, atol=0.0, restart=4, max_restarts=30))(
        jnp.asarray(b)
    )
    assert bool(jnp.all(ok))
    exact = np.linalg.solve(a, b[..., None])[..., 0]
    for m in range(3):
        np.testing.assert_allclose(np.asarray(x[m]), exact[m], rtol=1e-9, atol=0)
    _, ok = gmres(mv, lambda v: v, jnp.asarray(b), rtol=1e-11, atol=0.0, restart=2, max_restarts=1)
    assert not bool(jnp.any(ok)), "two steps cannot reach 1e-11: reported as not converged"


def test_block_gmres_with_a_preconditioner_over_several_cycles():
    # Right preconditioning by an approximate inverse (each block's diagonal with 40 % error): the correction
    # is built from the stored preconditioned vectors, so an error there would leave the residual large.
    rng = np.random.default_rng(5)
    n = 16
    a = np.stack([np.diag(rng.uniform(1.0, 100.0, n)) + rng.normal(size=(n, n)) / np.sqrt(n) for _ in range(3)])
    rough = np.einsum("mii->mi", a) * rng.uniform(0.6, 1.4, size=(3, n))
    b = rng.normal(size=(3, n))
    mv = lambda x: jnp.einsum("mij,mj->mi", jnp.asarray(a), x)  # noqa: E731
    precondition = lambda r: r / jnp.asarray(rough)  # noqa: E731
    x, ok = jax.jit(lambda b: gmres(mv, precondition, b, rtol=1e-11, atol=0.0, restart=3, max_restarts=40))(
        jnp.asarray(b)
    )
    assert bool(jnp.all(ok))
    exact = np.linalg.solve(a, b[..., None])[..., 0]
    np.testing.assert_allclose(np.asarray(x), exact, rtol=1e-9, atol=1e-12)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="path='shared_step' runs sciax.ode.BDF, got Tsit5"):
        simulate_ensemble(LINEAR, LINEAR_Y0, LINEAR_TS, jnp.ones(2), method=sciax.ode.Tsit5(), path="shared_step")
    with pytest.raises(TypeError, match="not a Jacobian function"):
        method = sciax.ode.BDF(jacobian=lambda t, y, k: _linear_members(k))
        simulate_ensemble(LINEAR, LINEAR_Y0, LINEAR_TS, jnp.ones(2), method=method, path="shared_step")
    with pytest.raises(ValueError, match="takes no 'dense'"):
        simulate_ensemble(
            LINEAR, LINEAR_Y0, LINEAR_TS, jnp.ones(2), method=sciax.ode.BDF(), path="shared_step", dense=True
        )
