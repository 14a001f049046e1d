"""Preconditioners from a sparse Jacobian (`BlockJacobi`, `IncompleteLU`, `JacobianPreconditioner`,
`OperatorSplit`): exact inverses where they are exact (numpy), fewer GMRES iterations on the
Brusselator, Newton–Krylov BDF with each agreeing with scipy Radau, transforms, bad input."""

import functools

import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from diffrax import ForwardMode
from scipy.integrate import solve_ivp

import sciax
from sciax.linalg import (
    BlockJacobi,
    Composed,
    IncompleteLU,
    JacobianPreconditioner,
    OperatorSplit,
    SparsityPattern,
    contiguous_blocks,
    point_blocks,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _block_diagonal(rng, blocks, n):
    matrix = np.zeros((n, n))
    for block in blocks:
        matrix[np.ix_(block, block)] = rng.standard_normal((len(block), len(block)))
    return matrix


@pytest.mark.parametrize("layout", ["points", "contiguous", "large"])
def test_block_jacobi_is_the_exact_inverse_of_a_block_diagonal_newton_matrix(layout):
    rng = np.random.default_rng(1)
    n, blocks = {
        "points": (15, point_blocks(15, 3)),
        "contiguous": (12, contiguous_blocks(12, 4)),
        "large": (68, contiguous_blocks(68, 34)),  # above the unrolled size: LAPACK per block
    }[layout]
    jac = _block_diagonal(rng, blocks, n)
    pattern = SparsityPattern(jac != 0, with_diagonal=True)
    c = 0.3
    r = rng.standard_normal(n)

    @jax.jit
    def apply(values, r):
        return BlockJacobi.newton(values, pattern, c, blocks, n).apply(r)

    expected = np.linalg.solve(np.eye(n) - c * jac, r)
    out = apply(jnp.asarray(jac[pattern.rows, pattern.cols]), jnp.asarray(r))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12, atol=1e-12)


def _tridiagonal_rhs(t, y, k):
    lap = jnp.concatenate([y[1:], jnp.zeros(1)]) + jnp.concatenate([jnp.zeros(1), y[:-1]]) - 2 * y
    return k * lap - y**3 + jnp.sin(t)


def test_incomplete_lu_is_exact_on_a_tridiagonal_newton_matrix():
    n, k, c, t = 20, 3.0, 0.7, 0.4
    rng = np.random.default_rng(2)
    y = rng.standard_normal(n)
    pattern = sp.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1])
    # Nothing dropped: a tridiagonal matrix has no fill, so the incomplete factors are the exact ones.
    ilu0 = {"drop_tol": 0.0, "fill_factor": 10.0, "ordering": "NATURAL"}
    p = JacobianPreconditioner(_tridiagonal_rhs, pattern, kind="ilu", ilu_options=ilu0)(t, jnp.asarray(y), c, k)
    jac = k * (np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1) - 2 * np.eye(n)) - np.diag(3 * y**2)
    r = rng.standard_normal(n)
    expected = np.linalg.solve(np.eye(n) - c * jac, r)
    np.testing.assert_allclose(np.asarray(p.apply(jnp.asarray(r))), expected, rtol=1e-12, atol=1e-12)
    # jit and vmap over right-hand sides (one host call for the batch)
    batch = jnp.asarray(np.stack([r, 2 * r]))
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(p.apply))(batch))[1], 2 * expected, rtol=1e-12)


# The 2-D Brusselator (the problem, unforced) on a periodic n x n grid, split into reactions and diffusion.
def _brusselator(n):
    problem = sciax.ode.brusselator_2d(n, forcing=False)
    rhs = problem.model.rhs
    preconditioners = {
        "block-jacobi": JacobianPreconditioner(rhs, problem.pattern, fields=2),
        "ilu": JacobianPreconditioner(rhs, problem.pattern, kind="ilu"),
        "fft-then-blocks": OperatorSplit(
            problem.diffusion,
            JacobianPreconditioner(problem.reactions, sp.kron(np.ones((2, 2)), sp.identity(n * n)), fields=2),
        ),
    }
    return rhs, problem.y0, preconditioners


N = 6
_rhs, Z0, PRECONDITIONERS = _brusselator(N)
MODEL = sciax.ode.ODE(_rhs)
TS = jnp.array([0.0, 0.5, 1.5])


def _gmres_iterations(n, preconditioner, c, alpha):
    """Iterations of scipy's GMRES (unrestarted) on `(I - cJ) x = 1` at the initial state, `J` dense by jax."""
    rhs, z0, preconditioners = _brusselator(n)
    jac = np.asarray(jax.jacfwd(lambda z: rhs(0.0, z, alpha))(z0))
    matrix = np.eye(z0.size) - c * jac
    kwargs = {}
    if preconditioner is not None:
        apply = jax.jit(lambda r: preconditioners[preconditioner](0.0, z0, c, alpha).apply(r))
        kwargs["M"] = spla.LinearOperator(matrix.shape, lambda r: np.array(apply(jnp.asarray(r))))
    residuals = []
    _, info = spla.gmres(
        matrix, np.ones(z0.size), rtol=1e-10, atol=0.0, restart=z0.size, callback=residuals.append,
        callback_type="pr_norm", **kwargs,
    )  # fmt: skip
    assert info == 0
    return len(residuals)


def test_gmres_iterations_fall_on_the_brusselator():
    # 16 x 16, alpha = 10 (the benchmark's), c = 1e-2: diffusion dominates (c alpha / dx^2 = 22), which
    # the FFT inverse removes exactly and ILU approximately; block-Jacobi, blind to diffusion, is for
    # reaction-dominated systems: alpha = 0.01, c = 0.1 (c alpha / dx^2 = 0.2, c * reaction rates ~ 2).
    plain = _gmres_iterations(16, None, 1e-2, 10.0)
    split, ilu = (_gmres_iterations(16, name, 1e-2, 10.0) for name in ("fft-then-blocks", "ilu"))
    assert split <= plain // 3 and ilu <= 0.7 * plain, (plain, split, ilu)
    plain = _gmres_iterations(16, None, 0.1, 0.01)
    blocks = _gmres_iterations(16, "block-jacobi", 0.1, 0.01)
    assert blocks <= 0.75 * plain, (plain, blocks)


@functools.cache
def _radau(alpha):
    rhs = jax.jit(lambda t, z: _rhs(t, z, alpha))
    jac = jax.jit(jax.jacfwd(lambda z: _rhs(0.0, z, alpha)))
    ref = solve_ivp(
        lambda t, z: np.asarray(rhs(t, z)), (0.0, 1.5), np.asarray(Z0), "Radau", rtol=1e-12, atol=1e-12,
        t_eval=TS, jac=lambda t, z: np.asarray(jac(z)),
    )  # fmt: skip
    return ref.y.T


def _krylov_bdf(preconditioner):
    return sciax.ode.BDF(
        jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-8, atol=1e-14), preconditioner=PRECONDITIONERS[preconditioner]
    )


# fft-then-blocks (block-Jacobi on the reactions inside) is checked against Radau under vmap below;
# block-Jacobi alone is exact where it should be (above).
@pytest.mark.parametrize("preconditioner", ["ilu"])
def test_newton_krylov_bdf_with_each_agrees_with_radau(preconditioner):
    sol = sciax.simulate(MODEL, Z0, TS, 0.1, method=_krylov_bdf(preconditioner), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.asarray(sol.ys), _radau(0.1), rtol=2e-6, atol=2e-6)


def test_jit_vmap_and_jvp_through_a_block_preconditioned_solve():
    method = _krylov_bdf("fft-then-blocks")

    def loss(alpha):
        sol = sciax.simulate(MODEL, Z0, TS, alpha, method=method, rtol=1e-9, atol=1e-9, adjoint=ForwardMode())
        return jnp.sum(sol.ys[-1])

    # One compiled program: the members at alpha +- eps give the finite difference for the member at alpha.
    eps = 1e-4
    alphas = jnp.array([0.1, 0.12, 0.12 + eps, 0.12 - eps])
    values, tangents = jax.jit(jax.vmap(lambda a: jax.jvp(loss, (a,), (jnp.ones_like(a),))))(alphas)
    np.testing.assert_allclose(values[0], np.sum(_radau(0.1)[-1]), rtol=1e-6)
    np.testing.assert_allclose(tangents[1], (values[2] - values[3]) / (2 * eps), rtol=1e-5)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"pattern has shape \(10, 10\).*72 entries"):
        JacobianPreconditioner(_rhs, sp.identity(10), fields=2)(0.0, Z0, 0.1, 0.1)
    pattern = PRECONDITIONERS["ilu"].pattern
    with pytest.raises(ValueError, match="exactly one of fields=, block_size= or blocks="):
        JacobianPreconditioner(_rhs, pattern)
    with pytest.raises(ValueError, match="kind must be one of"):
        JacobianPreconditioner(_rhs, pattern, kind="amg")
    block = PRECONDITIONERS["block-jacobi"](0.0, Z0, 0.1, 0.1)
    with pytest.raises(ValueError, match=r"built for states with leaves of shapes \[\(72,\)\].*\[\(10,\)\]"):
        block.apply(jnp.ones(10))
    small = IncompleteLU.from_values(jnp.ones(10), sp.identity(10), 10)
    with pytest.raises(ValueError, match=r"BlockJacobi acts on .*\(72,\).*IncompleteLU on \[\(10,\)\]"):
        Composed(first=block, second=small, symmetric=False)
    with pytest.raises(ValueError, match="must not overlap"):
        BlockJacobi.from_matrix(jnp.ones((2, 2, 2)), np.array([[0, 1], [1, 2]]), 4)
