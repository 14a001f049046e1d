"""Misleading-input cases of `sciax.linalg.solve`: grids that do not coarsen, singular matrices."""

import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest

from sciax import linalg as la
from sciax.pde import Dirichlet, Grid


@pytest.mark.parametrize("n", [13, 17])
def test_multigrid_on_a_grid_that_does_not_coarsen_solves_it(n):
    # An odd size never halves: the hierarchy is one dense level, refined against the iterate.
    grid = Grid((n, n), 1.0, points="centre")
    op = la.laplacian_operator(grid, Dirichlet())
    b = jnp.asarray(np.random.default_rng(n).standard_normal(grid.shape))
    res = la.solve(op, b, "multigrid", rtol=1e-10)
    assert bool(res.success) and int(res.num_steps) <= 3
    ref = np.linalg.solve(np.asarray(op.as_dense()), np.asarray(b).reshape(-1))
    np.testing.assert_allclose(np.asarray(res.value).reshape(-1), ref, rtol=1e-9, atol=1e-12)


def test_multigrid_on_a_large_grid_that_does_not_coarsen_names_the_size_rule():
    grid = Grid((50, 62), 1.0)  # halves once, to (25, 31): 775 points, solved densely
    la.Multigrid(la.laplacian_operator(grid, Dirichlet()))
    grid = Grid((97, 97), 1.0)  # odd: does not coarsen, 9409 points > the dense limit
    with pytest.raises(ValueError, match=r"grid shape \(97, 97\) coarsens only to \(97, 97\).*Size rule"):
        la.Multigrid(la.laplacian_operator(grid, Dirichlet()))


def test_singular_dense_matrix_is_called_singular():
    a = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])  # rank 2
    b = jnp.array([1.0, 0.0, 0.0])
    op = lx.MatrixLinearOperator(a)
    with pytest.raises(RuntimeError, match=r"the 3x3 matrix is singular.*lineax.SVD\(\)"):
        la.solve(op, b, "lu")
    res = la.solve(op, b, "lu", throw=False)
    assert not bool(res.success)
    assert res.lineax.result == lx.RESULTS.singular


def test_well_conditioned_dense_matrix_is_not_called_singular():
    a = jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])
    b = jnp.array([1.0, 2.0, 3.0])
    for method in ("lu", "cholesky", "qr"):
        res = la.solve(lx.MatrixLinearOperator(a, lx.positive_semidefinite_tag), b, method)
        np.testing.assert_allclose(np.asarray(res.value), np.linalg.solve(np.asarray(a), np.asarray(b)), rtol=1e-12)
