"""UnrolledLU against numpy.linalg.solve, lineax.LU gradients, and as the Rosenbrock default."""

import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest

import sciax
from sciax.linalg import UnrolledLU

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20, 32])
def test_solve_and_transpose_solve_match_numpy(n):
    a = RNG.standard_normal((n, n)) + n * np.eye(n) * RNG.choice([0.0, 1.0])  # some need pivoting
    b = RNG.standard_normal(n)
    op = lx.MatrixLinearOperator(jnp.asarray(a))
    x = lx.linear_solve(op, jnp.asarray(b), UnrolledLU()).value
    xt = lx.linear_solve(op.T, jnp.asarray(b), UnrolledLU()).value
    scale = np.linalg.cond(a) * 1e-15
    np.testing.assert_allclose(
        np.asarray(x), np.linalg.solve(a, b), rtol=0, atol=scale * np.abs(np.linalg.solve(a, b)).max()
    )
    np.testing.assert_allclose(
        np.asarray(xt), np.linalg.solve(a.T, b), rtol=0, atol=scale * np.abs(np.linalg.solve(a.T, b)).max()
    )


def test_pivoting_handles_a_zero_leading_entry():
    a = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])
    b = np.array([1.0, 2.0, 3.0])
    x = lx.linear_solve(lx.MatrixLinearOperator(jnp.asarray(a)), jnp.asarray(b), UnrolledLU()).value
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-14)


def test_gradient_wrt_matrix_and_rhs_matches_lineax_lu_under_vmap():
    a = jnp.asarray(RNG.standard_normal((5, 4, 4)) + 4 * np.eye(4))
    b = jnp.asarray(RNG.standard_normal((5, 4)))

    def loss(solver):
        def one(a, b):
            return jnp.sum(lx.linear_solve(lx.MatrixLinearOperator(a), b, solver).value ** 2)

        return jax.vmap(jax.grad(one, argnums=(0, 1)))

    ours, ref = loss(UnrolledLU())(a, b), loss(lx.LU())(a, b)
    for g, r in zip(ours, ref):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-12, atol=1e-13)


def test_singular_matrix_reports_failure_and_large_systems_are_refused():
    sol = lx.linear_solve(lx.MatrixLinearOperator(jnp.zeros((3, 3))), jnp.ones(3), UnrolledLU(), throw=False)
    assert sol.result != lx.RESULTS.successful
    with pytest.raises(ValueError, match="at most 32"):
        lx.linear_solve(lx.MatrixLinearOperator(jnp.eye(33)), jnp.ones(33), UnrolledLU())


def test_rodas5p_default_stage_solver_agrees_with_lapack_lu():
    model, y0, _, k = sciax.ode.stiff_problem("rober")
    ts = jnp.array([0.0, 1e5])
    ours = sciax.simulate(model, y0, ts, k, method=sciax.ode.Rodas5P(), rtol=1e-8, atol=1e-12)
    lapack = sciax.simulate(model, y0, ts, k, method=sciax.ode.Rodas5P(linear_solver=lx.LU()), rtol=1e-8, atol=1e-12)
    # Same method and step sequence up to round-off in the stage solves.
    np.testing.assert_allclose(np.asarray(ours.ys[-1]), np.asarray(lapack.ys[-1]), rtol=1e-9, atol=1e-15)
