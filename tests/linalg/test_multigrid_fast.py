"""Multigrid (preconditioner and solver) and the FFT/DST/DCT fast Poisson solvers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft

from sciax import linalg as la
from sciax.pde import Dirichlet, Grid, Neumann, Periodic, fd


def _rhs(grid, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(grid.shape))


def test_mgpcg_iterations_do_not_grow_with_the_grid():
    # 1024^2 is in benchmarks/poisson.py; sizes here run in seconds.
    steps = []
    for n in (32, 64, 128):  # 256^2 and 1024^2: benchmarks/poisson.py (compile time dominates here)
        grid = Grid((n, n), 1.0, origin=(0.5 / n,) * 2)
        op = la.laplacian_operator(grid, Dirichlet())
        res = la.solve(op, _rhs(grid), "cg", rtol=1e-8, preconditioner=la.Multigrid(op))
        assert bool(res.success) and res.residual < 1e-7
        steps.append(int(res.num_steps))
    assert max(steps) - min(steps) <= 3 and max(steps) <= 15, steps


@pytest.mark.parametrize(
    "shape,bc,lengths",
    [
        ((64,), Neumann(), 1.0),
        ((8, 16), (Periodic(), (Dirichlet(), Neumann())), (1.0, 2.0)),
        ((8, 8, 8), Dirichlet(), 1.0),
        ((4, 8, 4), Periodic(), (1.0, 2.0, 1.0)),
    ],
)
def test_multigrid_solver_1d_2d_3d(shape, bc, lengths):
    grid = Grid(shape, lengths)  # isotropic spacing: point smoothers
    a = 1.0 + 0.3 * np.cos(2 * np.pi * grid.meshgrid()[0])
    op = la.diffusion_operator(grid, a, bc)
    b = _rhs(grid)
    res = la.solve(op, b, "multigrid", rtol=1e-9, project=op.singular)
    assert bool(res.success) and int(res.num_steps) <= 25
    ref = np.linalg.lstsq(np.asarray(op.as_dense()), np.asarray(b - jnp.mean(b) * op.singular).reshape(-1), rcond=None)[
        0
    ]
    ref = ref - ref.mean() * op.singular
    np.testing.assert_allclose(res.value.reshape(-1), ref, atol=1e-7 * np.abs(ref).max())


def test_jacobi_smoother_and_jacobi_preconditioner():
    grid = Grid((16, 16), 1.0)
    op = la.laplacian_operator(grid, Dirichlet())
    b = _rhs(grid)
    plain = la.solve(op, b, "cg")
    jac = la.solve(op, b, "cg", preconditioner=la.Multigrid(op, smoother="jacobi"))
    assert int(jac.num_steps) < int(plain.num_steps) / 3 and jac.residual < 1e-7


def test_dst_matches_scipy():
    x = np.random.default_rng(5).standard_normal((6, 7))
    for axis in (0, 1):
        np.testing.assert_allclose(
            la.dst2(jnp.asarray(x), axis), scipy.fft.dst(x, type=2, norm="ortho", axis=axis), atol=1e-13
        )
        np.testing.assert_allclose(la.idst2(la.dst2(jnp.asarray(x), axis), axis), x, atol=1e-13)


@pytest.mark.parametrize("order", [2, 4])
@pytest.mark.parametrize(
    "bc",
    [
        Dirichlet(),
        Neumann(),
        Periodic(),
        (Periodic(), (Dirichlet(1.0), Dirichlet(-2.0))),
        ((Neumann(0.3), Neumann(0.3)), Dirichlet(0.5)),
    ],
)
def test_fast_poisson_exact_on_manufactured_solutions(bc, order):
    grid = Grid((12, 10), (1.0, 2.0))
    x, y = grid.meshgrid()
    u = jnp.asarray(np.exp(np.sin(2 * np.pi * x)) * np.cos(np.pi * y / 2) + x * y)
    shift = -3.0 if isinstance(bc, Neumann) else 0.0
    f = fd.laplacian(u, grid, bc=bc, order=order) + shift * u  # the discrete problem u solves exactly
    res = la.solve_fd_poisson(f, grid, bc, order=order, shift=shift)
    err = res.value - u
    singular = isinstance(bc, Periodic)
    if singular:
        err = err - jnp.mean(err)
    assert float(jnp.max(jnp.abs(err))) < 1e-11 * float(jnp.max(jnp.abs(u)))


def test_fast_poisson_3d_and_as_preconditioner():
    grid = Grid((8, 6, 10), 1.0)
    op = la.laplacian_operator(grid, (Dirichlet(), Neumann(), Periodic()), shift=-1.0)
    b = _rhs(grid)
    ref = np.linalg.solve(np.asarray(op.as_dense()), np.asarray(b).reshape(-1)).reshape(grid.shape)
    np.testing.assert_allclose(la.solve(op, b, "fast").value, ref, atol=1e-12)
    res = la.solve(op, b, "cg", preconditioner=la.FastPoisson(op))
    assert int(res.num_steps) <= 2


def test_multigrid_under_jit_and_vmap():
    grid = Grid((16, 16), 1.0)
    op = la.laplacian_operator(grid, Dirichlet())
    bs = jnp.stack([_rhs(grid, s) for s in range(3)])

    @jax.jit
    def go(b):
        return la.solve(op, b, "cg", preconditioner=la.Multigrid(op)).value

    xs = jax.vmap(go)(bs)
    np.testing.assert_allclose(jax.vmap(op.mv)(xs), bs, atol=1e-6)
