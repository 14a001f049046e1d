"""Symbolic sparsity detection: exact stencil patterns of FD models and roll stencils, supersets elsewhere."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax import lax

import sciax
from sciax import linalg as la
from sciax.pde import Dirichlet, Grid, Neumann, Periodic, fd


def _jacobian_nonzeros(f, n, seeds=(0, 1)):
    """Nonzeros of the dense forward-mode Jacobian, united over random states (an independent reference)."""
    out = np.zeros((0, n), bool)
    for seed in seeds:
        x = jnp.asarray(np.random.default_rng(seed).standard_normal(n))
        jac = np.asarray(jax.jit(jax.jacfwd(f))(x)).reshape(-1, n) != 0
        out = jac if out.size == 0 else out | jac
    return out


def _pattern(f, n, *args):
    pattern = la.jacobian_sparsity(f, jnp.zeros(n), *args)
    assert isinstance(pattern, la.SparsityPattern)
    return pattern.csr.toarray()


BCS = {
    "periodic": (Periodic(), (True, True)),
    "dirichlet": (Dirichlet(0.0), (False, False)),
    "neumann": (Neumann(), (False, False)),
    "mixed": (((Periodic(), Periodic()), (Dirichlet(1.0), Neumann())), (True, False)),
}


@pytest.mark.parametrize("bc", BCS, ids=list(BCS))
def test_heat_model_gives_exactly_its_stencil_pattern(bc):
    bc, periodic = BCS[bc]
    grid = Grid((7, 6), 1.0, points="centre")
    model = fd.heat(grid, bc=bc)

    def f(y, t, params):
        return model.rhs(t, y.reshape(grid.shape), params).ravel()

    found = la.jacobian_sparsity(f, jnp.zeros(grid.size), 0.0, {"D": jnp.asarray(0.3)}).csr.toarray()
    np.testing.assert_array_equal(found, la.stencil_pattern(grid, 1, periodic).toarray())
    np.testing.assert_array_equal(found, _jacobian_nonzeros(lambda y: f(y, 0.0, {"D": 0.3}), grid.size))


@pytest.mark.parametrize("bc", ["periodic", "dirichlet"])
def test_gray_scott_pattern_is_the_exact_jacobian_pattern(bc):
    # u couples to its stencil and to v at its own point (and vice versa): fewer entries than
    # the model's own over-estimate, stencil_pattern(fields=2), which must contain it.
    bc, periodic = BCS[bc]
    grid = Grid((6, 5), 1.0, points="centre")
    model = fd.gray_scott(grid, bc=bc)
    params = {"Du": 0.2, "Dv": 0.1, "F": 0.04, "k": 0.06}
    y = {"u": jnp.zeros(grid.shape), "v": jnp.zeros(grid.shape)}
    flat, unravel = jax.flatten_util.ravel_pytree(y)

    def f(z):
        return jax.flatten_util.ravel_pytree(model.rhs(0.0, unravel(z), params))[0]

    found = _pattern(f, flat.size)
    np.testing.assert_array_equal(found, _jacobian_nonzeros(f, flat.size))
    stated = la.stencil_pattern(grid, 1, periodic, fields=2).toarray()
    assert not np.any(found & ~stated) and found.sum() < stated.sum()


def _roll_brusselator(n):
    def f(z):
        u, v = z.reshape(2, n, n)

        def lap(w):
            return jnp.roll(w, 1, 0) + jnp.roll(w, -1, 0) + jnp.roll(w, 1, 1) + jnp.roll(w, -1, 1) - 4 * w

        return jnp.concatenate([(1 + u * u * v - 4.4 * u + lap(u)).ravel(), (3.4 * u - u * u * v + lap(v)).ravel()])

    return f


def test_two_field_roll_stencil_is_exact():
    n = 5
    f = _roll_brusselator(n)
    found = _pattern(f, 2 * n * n)
    np.testing.assert_array_equal(found, _jacobian_nonzeros(f, 2 * n * n))
    # each field's equation: its own 5-point star plus the other field at the point
    assert found.sum() == 2 * n * n * 6


@pytest.mark.parametrize("seed", [0, 1])
def test_random_gathers_and_segment_sums_are_exact(seed):
    rng = np.random.default_rng(seed)
    n, m = 30, 45
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    segments = rng.integers(0, 12, m)
    matrix = jnp.asarray(sp.random(12, n, density=0.1, random_state=rng).toarray())

    def f(x):
        terms = x[a] * jnp.sin(x[b]) + x.at[a].get(mode="fill", fill_value=0.0)
        summed = jax.ops.segment_sum(terms, segments, num_segments=12)
        return jnp.concatenate([summed + matrix @ x, x.at[b[:5]].set(2.0)])

    np.testing.assert_array_equal(_pattern(f, n), _jacobian_nonzeros(f, n))


def test_control_flow():
    n = 8

    def loop(x):  # fori_loop of static length (a scan): the counter indexes the state
        return lax.fori_loop(0, 3, lambda i, c: c + x[i] * jnp.roll(c, 1), x)

    np.testing.assert_array_equal(_pattern(loop, n), _jacobian_nonzeros(loop, n))

    def scan(x):
        return lax.scan(lambda c, xi: (c * xi, c + xi), 1.0, x)[1]

    np.testing.assert_array_equal(_pattern(scan, n), np.tril(np.ones((n, n), bool)))

    def branch(x):  # a state-dependent predicate: the union of both branches
        return lax.cond(x[0] > 0, lambda: 2 * x, lambda: jnp.roll(x, 1))

    np.testing.assert_array_equal(
        _pattern(branch, n), np.eye(n, dtype=bool) | np.roll(np.eye(n, dtype=bool), 1, axis=0)
    )

    def spread(x):  # a while loop of unknown length: the fixed point, everything reaches everything
        return lax.while_loop(lambda c: c[1] < 2, lambda c: (c[0] + jnp.roll(c[0], 1), c[1] + 1), (x, 0))[0]

    found = _pattern(spread, n)
    assert found.all() and not np.any(_jacobian_nonzeros(spread, n) & ~found)


def test_constant_zeros_and_masks_are_structural():
    n = 6
    mask = jnp.arange(n) % 2 == 0
    coefficients = jnp.asarray([1.0, 0.0, 2.0, 0.0, 0.0, 3.0])

    def f(x):
        masked = jnp.where(mask, 0.0, x * x[0]) + coefficients * jnp.roll(x, 1)
        return masked + jnp.cumsum(x)[::-1] * (x > 0) + jax.nn.softplus(jnp.roll(x, 2))  # softplus: custom_jvp

    np.testing.assert_array_equal(_pattern(f, n), _jacobian_nonzeros(f, n))


def test_cancellation_gives_a_superset():
    def f(x):
        return x + jnp.roll(x, 1) - jnp.roll(x, 1) + jnp.sort(x) * 0

    found = _pattern(f, 5)
    assert found[0, 4] and not _jacobian_nonzeros(f, 5)[0, 4]
    assert not np.any(_jacobian_nonzeros(f, 5) & ~found)

    def pick(x):  # an index that depends on the state: every element may be read
        return x[jnp.argmax(x)] * x

    np.testing.assert_array_equal(_pattern(pick, 5), np.ones((5, 5), bool))
    assert not np.any(_jacobian_nonzeros(pick, 5) & ~_pattern(pick, 5))


def test_bad_input():
    with pytest.raises(ValueError, match="1-D floating array of states, got shape \\(2, 2\\)"):
        la.jacobian_sparsity(jnp.sin, jnp.zeros((2, 2)))
    with pytest.raises(ValueError, match="dtype int"):
        la.jacobian_sparsity(jnp.sin, jnp.zeros(3, int))
    with pytest.raises(TypeError, match="fn must be callable"):
        la.jacobian_sparsity("sin", jnp.zeros(3))
    with pytest.raises(ValueError, match="must return floating arrays"):
        la.jacobian_sparsity(lambda x: x > 0, jnp.zeros(3))
    with pytest.raises(la.SparsityTracerError, match="'fft'"):
        la.jacobian_sparsity(lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=4), jnp.zeros(4))


def test_an_ode_without_a_pattern_is_solved_sparsely_by_detection():
    n = 5
    rhs = _roll_brusselator(n)
    model = sciax.ode.ODE(lambda t, z, alpha: alpha * rhs(z) + (1 - alpha) * z)
    x = np.linspace(0.0, 1.0, n)
    z0 = jnp.asarray(np.concatenate([np.repeat(22 * (x * (1 - x)) ** 1.5, n), np.tile(27 * (x * (1 - x)) ** 1.5, n)]))
    ts = jnp.array([0.0, 0.5])

    def solve(method):
        return np.asarray(sciax.simulate(model, z0, ts, 0.5, method=method, rtol=1e-8, atol=1e-8).ys)

    sparse = jax.jit(lambda z: sciax.simulate(model, z, ts, 0.5, method=sciax.ode.BDF(jacobian="sparse"),
                                             rtol=1e-8, atol=1e-8).ys)(z0)  # fmt: skip
    np.testing.assert_allclose(np.asarray(sparse), solve(sciax.ode.BDF()), rtol=1e-10, atol=1e-10)
