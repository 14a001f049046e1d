"""Sparse Jacobians by column colouring: exact against dense `jax.jacfwd`, patterns of FD stencils."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

from sciax import linalg as la
from sciax import pde
from sciax.pde import Dirichlet, Grid, Neumann, Periodic, fd


def _random_problem(n, density, seed):
    """f(x) = A x + sin(B x) * x with sparse A, B: its Jacobian's pattern is that of A + B (+ diagonal)."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, random_state=rng, format="csr")
    b = sp.random(n, n, density=density, random_state=rng, format="csr")
    ad, bd = jnp.asarray(a.toarray()), jnp.asarray(b.toarray())

    def f(x):
        return ad @ x + jnp.sin(bd @ x) * x

    pattern = (a + b + sp.eye(n)).astype(bool)
    return f, pattern, jnp.asarray(rng.standard_normal(n))


@pytest.mark.parametrize("n, density, seed", [(40, 0.05, 0), (60, 0.1, 1), (25, 0.3, 2)])
def test_colouring_is_valid_and_the_jacobian_exact(n, density, seed):
    f, pattern, x = _random_problem(n, density, seed)
    colours = la.column_colouring(pattern)
    csc = sp.csc_matrix(pattern)
    # no two columns of one colour share a row
    for c in range(colours.max() + 1):
        assert csc[:, colours == c].sum(axis=1).max() <= 1
    jac = la.sparse_jacobian(f, x, pattern, colours=colours)
    np.testing.assert_allclose(np.asarray(jac.todense()), np.asarray(jax.jacfwd(f)(x)), rtol=0, atol=1e-14)


def test_colour_counts_are_those_of_the_stencil_not_the_size():
    tridiagonal = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(1000, 1000))
    assert la.column_colouring(tridiagonal).max() + 1 == 3
    # 2-D five-point stencil: each column shares rows with the 12 points within distance 2,
    # so greedy needs at most 13 colours (5 is optimal); what matters is that n does not enter.
    counts = {la.column_colouring(la.stencil_pattern(Grid((n, n), 1.0), 1, True)).max() + 1 for n in (16, 64)}
    assert len(counts) == 1 and counts.pop() <= 13


@pytest.mark.parametrize("order", [2, 4])
@pytest.mark.parametrize(
    "bc, periodic",
    [(Periodic(), (True, True)), (((Periodic(), Periodic()), (Dirichlet(0.0), Neumann())), (True, False))],
    ids=["periodic", "mixed"],
)
def test_stencil_pattern_is_exactly_the_pattern_of_fd_laplacian(order, bc, periodic):
    grid = Grid((9, 7), 1.0, points="centre")

    def f(x):
        return fd.laplacian(x.reshape(grid.shape), grid, bc=bc, order=order).ravel()

    dense = np.asarray(jax.jacfwd(f)(jnp.zeros(grid.size)))
    pattern = la.stencil_pattern(grid, order // 2, periodic).toarray()
    np.testing.assert_array_equal(pattern, dense != 0)


def test_two_field_fd_model_jacobian_by_colouring():
    # Gray-Scott couples u and v at each point; the state is (u, v) flattened by ravel_pytree (key order).
    grid = Grid((8, 8), 2.5, points="centre")
    model = pde.fd.gray_scott(grid, bc=Periodic())
    params = {"Du": 2e-5, "Dv": 1e-5, "F": 0.04, "k": 0.06}
    rng = np.random.default_rng(3)
    y = {"u": jnp.asarray(rng.random(grid.shape)), "v": jnp.asarray(rng.random(grid.shape))}
    flat, unravel = jax.flatten_util.ravel_pytree(y)

    def f(z):
        return jax.flatten_util.ravel_pytree(model.rhs(0.0, unravel(z), params))[0]

    pattern = la.stencil_pattern(grid, 1, True, fields=2)
    la.check_sparsity_pattern(f, flat, pattern)
    jac = la.sparse_jacobian(f, flat, pattern)
    np.testing.assert_allclose(np.asarray(jac.todense()), np.asarray(jax.jacfwd(f)(flat)), rtol=0, atol=1e-12)


def test_jit_vmap_and_grad_through_a_sparse_jacobian():
    f, pattern, x = _random_problem(30, 0.1, 4)
    colours = la.column_colouring(pattern)
    xs = jnp.stack([x, 2 * x])
    batched = jax.jit(jax.vmap(lambda z: la.sparse_jacobian(f, z, pattern, colours=colours).data))(xs)
    for z, data in zip(xs, batched):
        # Entries are sums of O(1) terms; a small one is what their cancellation leaves, so round-off
        # is bounded relative to the largest entry, not to each entry.
        want = la.sparse_jacobian(f, z, pattern).data
        np.testing.assert_allclose(data, want, rtol=1e-14, atol=1e-14 * np.abs(want).max())

    def loss(z):
        return jnp.sum(la.sparse_jacobian(f, z, pattern).data ** 2)

    def dense_loss(z):
        return jnp.sum(jax.jacfwd(f)(z) ** 2)

    np.testing.assert_allclose(jax.grad(loss)(x), jax.grad(dense_loss)(x), rtol=1e-12, atol=1e-12)


def test_bad_patterns_are_named():
    f, pattern, x = _random_problem(20, 0.1, 5)
    with pytest.raises(ValueError, match=r"Jacobian has a nonzero outside the pattern in row \d+"):
        la.check_sparsity_pattern(f, x, sp.eye(20))
    with pytest.raises(ValueError, match=r"pattern has shape \(20, 20\), so x must be a 1-D array of 20 states"):
        la.sparse_jacobian(f, x[:10], pattern)
    with pytest.raises(ValueError, match=r"a 2-D \(rows, columns\) matrix"):
        la.sparse_jacobian(f, x, np.ones(20))
    with pytest.raises(ValueError, match=r"periodic needs one entry per axis"):
        la.stencil_pattern(Grid((4, 4), 1.0), 1, (True,))


def test_detection_finds_exactly_the_stencil_patterns():
    # A hand-written jnp.roll stencil (two coupled fields, periodic 2-D) and an FD model's own tendency.
    n = 6

    def rolled(z):
        u, v = z.reshape(2, n, n)
        lap = lambda w: jnp.roll(w, 1, 0) + jnp.roll(w, -1, 0) + jnp.roll(w, 1, 1) + jnp.roll(w, -1, 1) - 4 * w  # noqa: E731
        return jnp.concatenate([(lap(u) + u * u * v).ravel(), (lap(v) - u * u * v).ravel()])

    z = jnp.asarray(np.random.default_rng(1).random(2 * n * n) + 0.5)
    found = la.detect_sparsity(rolled, z, chunk=32)
    want = la.stencil_pattern(Grid((n, n), 1.0), 1, True, fields=2)
    # Laplacians couple u-u and v-v over the star; the reaction couples u and v at a point only.
    point = sp.kron(np.ones((2, 2), bool), sp.identity(n * n, dtype=bool))
    star = sp.kron(sp.identity(2, dtype=bool), want[: n * n, : n * n])
    np.testing.assert_array_equal(found.toarray(), (point + star).toarray())

    grid = Grid((10,), 0.1)
    model = fd.heat(grid, bc=Dirichlet(0.0))
    u0 = jnp.asarray(np.random.default_rng(2).random(10))
    found = la.detect_sparsity(lambda u: model.rhs(0.0, u, {"D": 1.0}), u0)
    np.testing.assert_array_equal(found.toarray(), model.jacobian_sparsity(u0).toarray())


def test_detection_bad_input_is_named():
    with pytest.raises(ValueError, match="1-D array of states"):
        la.detect_sparsity(lambda x: x, jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="num_probes"):
        la.detect_sparsity(lambda x: x, jnp.ones(3), num_probes=0)
