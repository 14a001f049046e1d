"""SuperLU solves on a sparsity pattern: exact vs numpy, differentiable, batched, singular -> NaN."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

import sciax

N = 24
_MATRIX = sp.random(N, N, density=0.12, random_state=3) + 4.0 * sp.identity(N)
PATTERN = sciax.linalg.SparsityPattern(_MATRIX, with_diagonal=True)
DENSE = np.asarray(_MATRIX.todense())
VALUES = jnp.asarray(DENSE[PATTERN.rows, PATTERN.cols])
B = jnp.asarray(np.random.default_rng(0).standard_normal(N))


def _dense(values):
    return jnp.zeros((N, N), values.dtype).at[PATTERN.rows, PATTERN.cols].set(values)


@jax.jit
def _loss(values, b):
    return jnp.sum(jnp.sin(sciax.linalg.sparse_solve(values, b, PATTERN)))


def _dense_loss(values, b):
    return jnp.sum(jnp.sin(jnp.linalg.solve(_dense(values), b)))


@pytest.mark.parametrize("ordering", ["MMD_AT_PLUS_A", "COLAMD", "NATURAL"])
def test_solution_equals_numpy(ordering):
    x = sciax.linalg.sparse_solve(VALUES, B, PATTERN, sciax.linalg.SparseLU(ordering=ordering))
    np.testing.assert_allclose(x, np.linalg.solve(DENSE, np.asarray(B)), rtol=1e-12, atol=1e-14)


def test_grad_and_jvp_equal_the_dense_solve():
    grads = jax.grad(_loss, argnums=(0, 1))(VALUES, B)
    dense = jax.grad(_dense_loss, argnums=(0, 1))(VALUES, B)
    for got, want in zip(grads, dense, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    tangents = (0.3 * VALUES, jnp.flip(B))
    np.testing.assert_allclose(
        jax.jvp(_loss, (VALUES, B), tangents)[1], jax.jvp(_dense_loss, (VALUES, B), tangents)[1], rtol=1e-10
    )


def test_vmap_over_values_and_right_hand_sides():
    scales = jnp.asarray([1.0, 2.0, 0.5])
    xs = jax.vmap(lambda s: sciax.linalg.sparse_solve(s * VALUES, s * B, PATTERN))(scales)
    want = np.linalg.solve(DENSE, np.asarray(B))
    np.testing.assert_allclose(xs, np.broadcast_to(want, xs.shape), rtol=1e-12, atol=1e-14)
    xs = jax.vmap(lambda b: sciax.linalg.sparse_solve(VALUES, b, PATTERN))(jnp.stack([B, 2 * B]))
    np.testing.assert_allclose(xs[1], 2 * want, rtol=1e-12, atol=1e-14)


def test_singular_matrix_gives_nan_not_garbage():
    x = sciax.linalg.sparse_solve(jnp.zeros_like(VALUES), B, PATTERN)
    assert np.all(np.isnan(x))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"values of shape \(\d+,\)"):
        sciax.linalg.sparse_solve(VALUES[:-1], B, PATTERN)
    with pytest.raises(TypeError, match="SparsityPattern"):
        sciax.linalg.sparse_solve(VALUES, B, _MATRIX)
    with pytest.raises(ValueError, match="ordering must be one of"):
        sciax.linalg.SparseLU(ordering="AMD")
    with pytest.raises(ValueError, match="with_diagonal needs a square pattern"):
        sciax.linalg.SparsityPattern(np.ones((2, 3)), with_diagonal=True)


def test_patterns_hash_by_content():
    again = sciax.linalg.SparsityPattern(DENSE != 0, with_diagonal=True)
    assert again == PATTERN and hash(again) == hash(PATTERN)
    assert sciax.linalg.SparsityPattern(sp.identity(N)) != PATTERN
