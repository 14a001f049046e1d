"""Learned reconstructions (float64): the polynomial-accuracy constraint for random networks,
the published linear weights at initialisation, order of accuracy, conservation, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import learned


def averages_of(poly: np.polynomial.Polynomial, n: int, pad: int):
    """Exact averages of `poly` over the unit cells centred at -pad .. n + pad - 1 (plus ghost cells),
    and its exact values at their right and left faces."""
    centres = np.arange(-pad, n + pad, dtype=np.float64)
    anti = poly.integ()
    return anti(centres + 0.5) - anti(centres - 0.5), poly(centres + 0.5), poly(centres - 0.5)


# Compiled once per structure and shape: op-by-op dispatch of these small programs costs more.
edges = eqx.filter_jit(lambda recon, v: recon.edges(v))
coefficients = eqx.filter_jit(lambda recon, seen: recon.coefficients(seen))


def random_mlp(inputs: int, outputs: int, seed: int):
    # Nonzero last layer: the constraint must hold whatever the network says.
    return eqx.nn.MLP(inputs, outputs, 8, 1, activation=jnp.tanh, key=jax.random.key(seed))


@pytest.mark.parametrize(
    ("stencil", "degree", "inputs"), [((-2, 2), 1, None), ((-2, 2), 2, (-3, 3)), ((-2, 3), 3, None), ((-3, 3), 4, None)]
)
def test_random_network_is_exact_for_polynomials_up_to_degree(stencil, degree, inputs):
    width = stencil[1] - stencil[0] + 1
    a, b = inputs or stencil
    recon = learned.LearnedReconstruction(random_mlp(b - a + 1, width - degree - 1, 3), stencil, degree, inputs=inputs)
    rng = np.random.default_rng(degree)
    r = recon.radius
    for exact_degree in (degree, degree + 1):
        poly = np.polynomial.Polynomial(rng.normal(size=exact_degree + 1))
        ubar, right, left = averages_of(poly, 20, r)
        got_right, got_left = edges(recon, jnp.asarray(ubar))
        weights = coefficients(recon, jnp.asarray(rng.normal(size=(6, b - a + 1))))
        err = max(np.max(np.abs(got_right - right[r:-r])), np.max(np.abs(got_left - left[r:-r])))
        if exact_degree == degree:
            assert err < 1e-10 * np.max(np.abs(right))
            # The weights do vary with the data (the network is not trivially zero).
            assert np.ptp(np.asarray(weights), axis=0).max() > 1e-3
        else:
            assert err > 1e-6  # one degree more is not exact: the test can fail


def test_published_linear_weights():
    expected = {
        (-2, 2): np.array([2, -13, 47, 27, -3]) / 60,  # Jiang & Shu (1996), upwind-biased, order 5
        (-2, 3): np.array([1, -8, 37, 37, -8, 1]) / 60,  # centred, order 6
        (-1, 2): np.array([-1, 7, 7, -1]) / 12,  # centred, order 4
        (-1, 1): np.array([-1, 5, 2]) / 6,  # upwind-biased, order 3
        (0, 1): np.array([1, 1]) / 2,
    }
    for stencil, weights in expected.items():
        base, null = learned.face_coefficients(stencil, 1)
        np.testing.assert_allclose(base, weights, rtol=0, atol=1e-14)
        assert null.shape == (len(weights), len(weights) - 2)


def test_zero_network_reproduces_the_standard_scheme_to_round_off():
    recon = learned.stencil_net((-2, 2), 2, inputs=(-3, 3), key=jax.random.key(0))
    v = np.random.default_rng(0).normal(size=(2, 30))
    right, left = edges(recon, jnp.asarray(v))
    w = np.array([2, -13, 47, 27, -3]) / 60
    r, m = 3, 30
    exp_right = sum(c * v[:, r + k : m - r + k] for c, k in zip(w, range(-2, 3)))
    exp_left = sum(c * v[:, r - k : m - r - k] for c, k in zip(w, range(-2, 3)))
    np.testing.assert_allclose(right, exp_right, rtol=0, atol=1e-14)
    np.testing.assert_allclose(left, exp_left, rtol=0, atol=1e-14)
    linear = edges(learned.LinearReconstruction((-2, 2)), jnp.asarray(v[:, 1:-1]))
    np.testing.assert_allclose(linear[0], exp_right, rtol=0, atol=1e-14)


def test_order_of_accuracy_on_smooth_data():
    # Face values from exact cell averages of sin(x): errors fall as dx^(degree + 1) at least.
    recon = learned.LearnedReconstruction(random_mlp(5, 3, 1), (-2, 2), 1)
    errors = []
    for n in (32, 64, 128):
        dx = 2 * np.pi / n
        c = (np.arange(-2, n + 2) + 0.5) * dx
        ubar = (np.cos(c - dx / 2) - np.cos(c + dx / 2)) / dx
        right, _ = edges(recon, jnp.asarray(ubar))
        errors.append(np.max(np.abs(np.asarray(right) - np.sin(c[2:-2] + dx / 2))))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8), orders


def test_conservation_to_round_off():
    grid = sciax.pde.Grid(24, 2 * np.pi, points="centre")
    recon = learned.LearnedReconstruction(random_mlp(5, 3, 2), (-2, 2), 1)
    model = learned.ForcedBurgers(grid, reconstruction=recon)
    x = grid.coords()[0]
    y0 = jnp.asarray(np.sin(x) + 0.3 * np.cos(3 * x) + 0.2)
    assert abs(float(jnp.sum(eqx.filter_jit(lambda m, y: m.rhs(0.0, y, None))(model, y0)))) < 1e-13
    ys = sciax.simulate(model, y0, jnp.array([0.0, 0.5]), method=sciax.pde.RK4(0.05)).ys
    assert abs(float(jnp.sum(ys[-1]) - jnp.sum(y0))) < 1e-12


def test_bad_input():
    with pytest.raises(ValueError, match="needs at least degree \\+ 1 = 4 cells"):
        learned.LearnedReconstruction(random_mlp(3, 1, 0), (-1, 1), 3)
    with pytest.raises(ValueError, match="net must output shape \\(3,\\).*got \\(5,\\)"):
        learned.LearnedReconstruction(random_mlp(5, 5, 0), (-2, 2), 1)
    with pytest.raises(ValueError, match="input window of shape \\(7,\\)"):
        learned.LearnedReconstruction(random_mlp(5, 3, 0), (-2, 2), 1, inputs=(-3, 3))
    with pytest.raises(ValueError, match="no freedom to learn; use a stencil of at least 4 cells"):
        learned.LearnedReconstruction(random_mlp(3, 1, 0), (-1, 1), 2)
    with pytest.raises(ValueError, match="stencil must be a pair of integer cell offsets"):
        learned.LinearReconstruction((1, 2))
    with pytest.raises(TypeError, match="net must be a callable"):
        learned.LearnedReconstruction(3.0, (-2, 2), 1)


class _Decay(eqx.Module):
    rate: jax.Array

    def __call__(self, y):
        return -self.rate * y


def test_corrected_model_adds_the_correction():
    # A constant state has no flux difference: with the correction -y it decays as exp(-t).
    grid = sciax.pde.Grid(8, 2 * np.pi, points="centre")
    model = learned.Corrected(learned.ForcedBurgers(grid, eta=0.0), _Decay(jnp.asarray(1.0)))
    ts = jnp.array([0.0, 0.5, 1.0])
    ys = sciax.simulate(model, jnp.full(8, 0.7), ts, method=sciax.pde.RK4(0.01)).ys
    np.testing.assert_allclose(ys[:, 0], 0.7 * np.exp(-np.asarray(ts)), rtol=1e-9)
    spec = learned.corrected_spec(model)
    assert spec.net.rate is True and not any(jax.tree_util.tree_leaves(spec.model))
    with pytest.raises(ValueError, match="net must return the state's shape"):
        learned.Corrected(model.model, lambda y: y[:3]).rhs(0.0, jnp.zeros(8), None)
    with pytest.raises(TypeError, match="model must be a sciax.AbstractModel"):
        learned.Corrected(3, _Decay(jnp.asarray(1.0)))
