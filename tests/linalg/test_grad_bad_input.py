"""Gradients through `solve` (finite differences) and bad input."""

import functools

import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest

from sciax import linalg as la
from sciax.pde import Dirichlet, Grid, Neumann, Periodic, fd

GRID = Grid((8, 8), 1.0)
B = jnp.asarray(np.random.default_rng(0).standard_normal(GRID.shape))
A0 = jnp.asarray(1.0 + 0.3 * np.random.default_rng(1).random(GRID.shape))
W = jnp.asarray(np.random.default_rng(2).standard_normal(GRID.shape))


@functools.partial(jax.jit, static_argnums=3)
def _loss(a, b, shift, method):
    op = la.diffusion_operator(GRID, a, Dirichlet(), shift=shift)
    return jnp.sum(W * la.solve(op, b, method, rtol=1e-12).value)


def test_gradients_match_finite_differences():
    method = "cg"
    ga, gb, gs = jax.jit(jax.grad(_loss, argnums=(0, 1, 2)), static_argnums=3)(A0, B, -1.0, method)
    eps = 1e-6
    rng = np.random.default_rng(3)
    for g, arg in ((ga, 0), (gb, 1)):
        d = jnp.asarray(rng.standard_normal(GRID.shape))
        args = [A0, B, -1.0]
        plus, minus = list(args), list(args)
        plus[arg], minus[arg] = args[arg] + eps * d, args[arg] - eps * d
        fd_val = (_loss(*plus, method) - _loss(*minus, method)) / (2 * eps)
        np.testing.assert_allclose(jnp.sum(g * d), fd_val, rtol=1e-5)
    fd_s = (_loss(A0, B, -1.0 + eps, method) - _loss(A0, B, -1.0 - eps, method)) / (2 * eps)
    np.testing.assert_allclose(gs, fd_s, rtol=1e-5)


def test_gradient_through_fast_solver():
    def loss(b):
        return jnp.sum(W * la.solve(la.laplacian_operator(GRID, Dirichlet()), b, "fast").value)

    d = jnp.asarray(np.random.default_rng(4).standard_normal(GRID.shape))
    fd_val = (loss(B + 1e-6 * d) - loss(B - 1e-6 * d)) / 2e-6
    np.testing.assert_allclose(jnp.sum(jax.grad(loss)(B) * d), fd_val, rtol=1e-6)


def test_shape_mismatch():
    op = la.laplacian_operator(GRID, Dirichlet())
    with pytest.raises(ValueError, match=r"b has shape \(8, 7\).*\(8, 8\)"):
        la.solve(op, jnp.zeros((8, 7)))


def test_cg_refuses_nonsymmetric_and_indefinite_by_tags():
    adv = lambda u, g, h, c: fd.derivative(u, g, 0, bc=h)  # noqa: E731
    nonsym = la.stencil_operator(GRID, adv, Periodic())
    with pytest.raises(ValueError, match="not tagged symmetric"):
        la.solve(nonsym, B, "cg")
    helmholtz = la.laplacian_operator(GRID, Dirichlet(), shift=50.0)  # lap + k^2: indefinite
    with pytest.raises(ValueError, match="neither positive nor negative"):
        la.solve(helmholtz, B, "cg")


def test_cg_runtime_check_catches_a_wrong_tag():
    adv = lambda u, g, h, c: fd.laplacian(u, g, bc=h) + 20 * fd.derivative(u, g, 0, bc=h)  # noqa: E731
    lying = la.stencil_operator(GRID, adv, Dirichlet(), symmetric=True, definite="negative")
    with pytest.raises(ValueError, match="not symmetric"):
        la.solve(lying, B, "cg")


def test_singular_neumann_compatibility():
    op = la.laplacian_operator(GRID, Neumann())
    with pytest.raises(ValueError, match="mean-zero b"):
        la.solve(op, B + 1.0)
    res = la.solve(op, B + 1.0, project=True)
    assert abs(float(jnp.mean(res.value))) < 1e-12
    np.testing.assert_allclose(op.mv(res.value), B - jnp.mean(B), atol=1e-6)
    with pytest.raises(ValueError, match="cannot solve a singular"):
        la.solve(op, B - jnp.mean(B), "lu")


def test_no_convergence_reports_residual_and_iterations():
    op = la.laplacian_operator(Grid((16, 16), 1.0), Dirichlet())
    b = jnp.ones((16, 16))
    with pytest.raises(RuntimeError, match=r"did not converge: residual .* after 3 iterations"):
        la.solve(op, b, "cg", max_steps=3)
    res = la.solve(op, b, "cg", max_steps=3, throw=False)
    assert not bool(res.success) and int(res.num_steps) == 3 and float(res.residual) > 1e-3


def test_constructor_errors():
    with pytest.raises(ValueError, match="diffusion_operator: a must be > 0"):
        la.diffusion_operator(GRID, -A0, Dirichlet())
    with pytest.raises(ValueError, match="rbgs"):
        la.Multigrid(la.laplacian_operator(GRID, Dirichlet(), order=4), smoother="rbgs")
    with pytest.raises(ValueError, match="same kind on both sides"):
        la.FastPoisson(la.laplacian_operator(GRID, ((Dirichlet(), Neumann()), Periodic())))
    with pytest.raises(TypeError, match="GridOperator"):
        la.Multigrid(lx.MatrixLinearOperator(jnp.eye(3)))
    with pytest.raises(ValueError, match="unknown method"):
        la.solve(la.laplacian_operator(GRID, Dirichlet()), B, "jacobi")
