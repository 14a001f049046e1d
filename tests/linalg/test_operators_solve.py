"""Grid operators (tags, dense/sparse materialisation) and `solve` against numpy.linalg.solve."""

import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest

from sciax import linalg as la
from sciax.pde import Dirichlet, Grid, Neumann, Periodic, fd


def _lap1d(n, h, kind):
    # Independent construction: cell-centred boundaries, ghost -u (Dirichlet) or +u (Neumann).
    a = np.diag(-2.0 * np.ones(n)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
    if kind == "periodic":
        a[0, -1] = a[-1, 0] = 1.0
    else:
        a[0, 0] = a[-1, -1] = -3.0 if kind == "dirichlet" else -1.0
    return a / h**2


@pytest.mark.parametrize("bc,kind", [(Dirichlet(), "dirichlet"), (Neumann(), "neumann"), (Periodic(), "periodic")])
def test_laplacian_matrix_matches_independent_kron(bc, kind):
    grid = Grid((6, 5), (1.0, 2.0))
    op = la.laplacian_operator(grid, bc)
    ax, ay = (_lap1d(n, h, kind) for n, h in zip(grid.shape, grid.spacing))
    ref = np.kron(ax, np.eye(5)) + np.kron(np.eye(6), ay)
    np.testing.assert_allclose(op.as_dense(), ref, atol=1e-10)
    np.testing.assert_allclose(op.as_sparse().todense(), ref, atol=1e-10)
    np.testing.assert_allclose(op.diagonal().reshape(-1), np.diag(ref), atol=1e-10)
    assert lx.symmetric_tag in op.tags and lx.negative_semidefinite_tag in op.tags
    assert op.singular == (kind != "dirichlet")


@pytest.mark.parametrize("order", [4])
def test_high_order_and_diffusion_symmetric(order):
    grid = Grid((10, 8), 1.0)
    a = 1.0 + 0.5 * np.sin(2 * np.pi * grid.meshgrid()[0]) * np.cos(2 * np.pi * grid.meshgrid()[1])
    for op in (
        la.laplacian_operator(grid, (Dirichlet(), Neumann()), order=order),
        la.diffusion_operator(grid, a, (Periodic(), (Dirichlet(), Neumann()))),
    ):
        m = np.asarray(op.as_dense())
        np.testing.assert_allclose(m, m.T, atol=1e-9 * np.abs(m).max())
        assert np.linalg.eigvalsh(m).max() < 1e-9 * np.abs(m).max()  # negative semidefinite, as tagged
        np.testing.assert_allclose(op.as_sparse().todense(), m, atol=1e-12 * np.abs(m).max())


def _spd_and_nonsymmetric():
    grid = Grid((7, 6), 1.0)
    spd = la.laplacian_operator(grid, Dirichlet(), scale=-1.0, shift=2.0)  # -lap + 2: SPD
    adv = lambda u, g, halo, c: fd.laplacian(u, g, bc=halo) - 30.0 * fd.derivative(u, g, 0, bc=halo)  # noqa: E731
    nonsym = la.stencil_operator(grid, adv, Dirichlet(), radius=1)
    return grid, spd, nonsym


@pytest.mark.parametrize("method", ["cg", "cholesky", "bicgstab"])
def test_spd_against_numpy(method):
    grid, spd, _ = _spd_and_nonsymmetric()
    b = np.random.default_rng(1).standard_normal(grid.shape)
    ref = np.linalg.solve(np.asarray(spd.as_dense()), b.reshape(-1)).reshape(grid.shape)
    res = la.solve(spd, jnp.asarray(b), method, rtol=1e-10)
    assert bool(res.success) and res.num_steps >= 1 and res.residual < 1e-9
    np.testing.assert_allclose(res.value, ref, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("method", ["gmres", "lu", "qr"])
def test_nonsymmetric_against_numpy(method):
    grid, _, nonsym = _spd_and_nonsymmetric()
    m = np.asarray(nonsym.as_dense())
    assert np.abs(m - m.T).max() > 1.0 and lx.symmetric_tag not in nonsym.tags
    b = np.random.default_rng(2).standard_normal(grid.shape)
    ref = np.linalg.solve(m, b.reshape(-1)).reshape(grid.shape)
    res = la.solve(
        nonsym, jnp.asarray(b), method, rtol=1e-10, preconditioner=la.Jacobi(nonsym) if method == "gmres" else None
    )
    np.testing.assert_allclose(res.value, ref, rtol=1e-7, atol=1e-9)
    assert res.residual < 1e-8


def test_matrix_and_lineax_operator_inputs():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    b = rng.standard_normal(5)
    np.testing.assert_allclose(la.solve(jnp.asarray(m), jnp.asarray(b)).value, np.linalg.solve(m, b), rtol=1e-10)
    op = lx.MatrixLinearOperator(jnp.asarray(m))
    np.testing.assert_allclose(
        la.solve(op, jnp.asarray(b), "gmres", rtol=1e-12).value, np.linalg.solve(m, b), rtol=1e-8
    )


def test_boundary_values_move_to_the_right_hand_side():
    grid = Grid((8, 8), 1.0, origin=(1 / 16, 1 / 16))
    bc = ((Dirichlet(1.0), Dirichlet(2.0)), (Neumann(0.5), Neumann(0.5)))
    op = la.laplacian_operator(grid, bc)
    u = jnp.asarray(np.random.default_rng(4).standard_normal(grid.shape))
    np.testing.assert_allclose(op.mv(u) + op.offset(), fd.laplacian(u, grid, bc=bc), atol=1e-10)
