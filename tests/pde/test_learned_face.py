"""Learned face values (float64): the polynomial-accuracy constraint for random networks, the
standard centred scheme at initialisation, conservation, the trainable filter, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import learned

edges = eqx.filter_jit(lambda recon, v: recon.edges(v))


def random_mlp(inputs: int, outputs: int, seed: int):
    # Nonzero last layer: the constraint must hold whatever the network says.
    return eqx.nn.MLP(inputs, outputs, 8, 1, activation=jnp.tanh, key=jax.random.key(seed))


def polynomial_averages(poly: np.polynomial.Polynomial, cells: int, derivative: int = 0):
    """Exact averages of `poly` over unit cells centred at 0 .. cells - 1, and its values (or its
    `derivative`-th derivative) at their faces."""
    centres = np.arange(cells, dtype=np.float64)
    anti, face = poly.integ(), poly.deriv(derivative)
    return anti(centres + 0.5) - anti(centres - 0.5), face(centres + 0.5), face(centres - 0.5)


@pytest.mark.parametrize(
    ("stencil", "degree", "inputs", "values", "derivative"),
    [((-2, 3), 1, None, 1, 0), ((-2, 3), 3, (-3, 4), 1, 0), ((-2, 3), 1, (-4, 5), 2, 0), ((-2, 3), 2, (-3, 4), 1, 1)],
)
def test_random_network_is_exact_for_polynomials_up_to_degree(stencil, degree, inputs, values, derivative):
    a, b = inputs or stencil
    free = stencil[1] - stencil[0] - degree
    net = random_mlp(b - a + 1, values * free, 5)
    recon = learned.LearnedFaceValues(net, stencil, degree, inputs=inputs, values=values, derivative=derivative)
    rng = np.random.default_rng(degree)
    r, cells = recon.radius, 24
    for exact_degree in (degree, degree + 1):
        poly = np.polynomial.Polynomial(rng.normal(size=exact_degree + 1))
        # With derivative=1 the faces hold u_x times the cell width (1 here).
        ubar, right, left = polynomial_averages(poly, cells, derivative)
        got_right, got_left = edges(recon, jnp.asarray(ubar))
        assert got_right.shape == (cells - 2 * r,)
        err = max(np.max(np.abs(got_right - right[r:-r])), np.max(np.abs(got_left - left[r:-r])))
        if exact_degree == degree:
            assert err < 1e-10 * np.max(np.abs(right))
        else:
            assert err > 1e-6  # one degree more is not exact: the test can fail
    # The weights do vary with the data (the network is not trivially zero).
    weights = np.asarray(recon.coefficients(jnp.asarray(rng.normal(size=(6, b - a + 1)))))
    assert weights.shape == (6, values, free + degree + 1)
    assert np.ptp(weights, axis=0).max() > 1e-3
    if values == 2:
        # Two states per face: the two heads differ, so a cell's edges are not the neighbours'.
        assert np.abs(weights[:, 0] - weights[:, 1]).max() > 1e-3


@pytest.mark.parametrize("values", [1, 2])
def test_zero_network_is_the_centred_scheme_to_round_off(values):
    recon = learned.face_net((-2, 3), 1, inputs=(-3, 4), values=values, key=jax.random.key(0))
    v = np.random.default_rng(0).normal(size=(2, 30))
    right, left = edges(recon, jnp.asarray(v))
    # Sixth-order centred face value, (1, -8, 37, 37, -8, 1) / 60: published weights, not the code's.
    w = np.array([1, -8, 37, 37, -8, 1]) / 60
    r, m = recon.radius, 30
    face = sum(c * v[:, r - 1 + k : m - r + k] for c, k in zip(w, range(-2, 4)))
    np.testing.assert_allclose(right, face[:, 1:], rtol=0, atol=1e-14)
    np.testing.assert_allclose(left, face[:, :-1], rtol=0, atol=1e-14)
    linear = edges(learned.LinearReconstruction((-2, 3)), jnp.asarray(v[:, 1:-1]))
    np.testing.assert_allclose(linear[0], right, rtol=0, atol=1e-14)
    np.testing.assert_allclose(linear[1], left, rtol=0, atol=1e-14)


def test_learned_viscous_flux_at_initialisation_is_the_fourth_order_face_derivative():
    grid = sciax.pde.Grid(20, 2 * np.pi, points="centre")
    viscous = learned.face_net((-1, 2), 1, inputs=(-2, 3), derivative=1, key=jax.random.key(0))
    y = jnp.asarray(np.random.default_rng(1).normal(size=20))
    rhs = eqx.filter_jit(lambda m, y: m.rhs(0.0, y, None))
    got = rhs(learned.ForcedBurgers(grid, viscous=viscous), y) - rhs(learned.ForcedBurgers(grid), y)
    # Published fourth-order face derivative from cell averages, (1, -15, 15, -1) / 12, minus the
    # default second-order one, (-1, 1): the viscous rates' difference, by hand.
    v, dx = np.asarray(y), grid.spacing[0]
    d4 = sum(c * np.roll(v, -k) for c, k in zip(np.array([1, -15, 15, -1]) / 12, range(-1, 3)))
    d2 = np.roll(v, -1) - v
    expected = 0.01 * ((d4 - np.roll(d4, 1)) - (d2 - np.roll(d2, 1))) / dx**2
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)


def test_conservation_to_round_off_and_the_trainable_filter():
    grid = sciax.pde.Grid(24, 2 * np.pi, points="centre")
    recon = learned.LearnedFaceValues(random_mlp(8, 4, 2), (-2, 3), 1, inputs=(-3, 4))
    # A random learned viscous flux too: still one flux per face.
    viscous = learned.LearnedFaceValues(random_mlp(8, 4, 3), (-2, 3), 1, inputs=(-3, 4), derivative=1)
    model = learned.ForcedBurgers(grid, reconstruction=recon, viscous=viscous)
    x = grid.coords()[0]
    y0 = jnp.asarray(np.sin(x) + 0.3 * np.cos(3 * x) + 0.2)
    assert abs(float(jnp.sum(eqx.filter_jit(lambda m, y: m.rhs(0.0, y, None))(model, y0)))) < 1e-13
    ys = sciax.simulate(model, y0, jnp.array([0.0, 0.5]), method=sciax.pde.RK4(0.05)).ys
    assert abs(float(jnp.sum(ys[-1]) - jnp.sum(y0))) < 1e-12
    # The filter selects the network's weights and biases, nothing else.
    spec = learned.trainable(model)
    selected = [leaf is True for leaf in jax.tree_util.tree_leaves(spec)]
    assert sum(selected) == 2 * len(jax.tree_util.tree_leaves(eqx.filter(recon.net, eqx.is_inexact_array))) == 8


def test_bad_input():
    with pytest.raises(
        ValueError, match="stencil must be a pair of integer cell offsets .* lo <= 0 < hi.*got \\(-3, 0\\)"
    ):
        learned.LearnedFaceValues(random_mlp(4, 2, 0), (-3, 0), 1)
    with pytest.raises(ValueError, match="inputs must be a pair .*got \\(-3, 0\\)"):
        learned.face_net((-2, 3), 1, inputs=(-3, 0), key=jax.random.key(0))
    with pytest.raises(ValueError, match="net must output shape \\(4,\\).*got \\(3,\\)"):
        learned.LearnedFaceValues(random_mlp(6, 3, 0), (-2, 3), 1)
    with pytest.raises(ValueError, match="input window of shape \\(8,\\)"):
        learned.LearnedFaceValues(random_mlp(6, 4, 0), (-2, 3), 1, inputs=(-3, 4))
    with pytest.raises(ValueError, match="no freedom to learn; use a stencil of at least 5 cells"):
        learned.LearnedFaceValues(random_mlp(4, 1, 0), (-1, 2), 3)
    with pytest.raises(ValueError, match="needs at least degree \\+ 1 = 6 cells"):
        learned.LearnedFaceValues(random_mlp(4, 1, 0), (-1, 2), 5)
    with pytest.raises(ValueError, match="values must be 1 .* or 2 .*got 3"):
        learned.LearnedFaceValues(random_mlp(6, 4, 0), (-2, 3), 1, values=3)
    with pytest.raises(ValueError, match="net must output shape \\(8,\\).*got \\(4,\\)"):
        learned.LearnedFaceValues(random_mlp(6, 4, 0), (-2, 3), 1, values=2)
    with pytest.raises(TypeError, match="net must be a callable"):
        learned.LearnedFaceValues(3.0, (-2, 3), 1)
    with pytest.raises(ValueError, match="derivative must be 0 .* or 1 .* with values=1.*got derivative=1, values=2"):
        learned.LearnedFaceValues(random_mlp(6, 8, 0), (-2, 3), 1, values=2, derivative=1)
    with pytest.raises(ValueError, match="derivative must be 0 .* or 1, got 2"):
        learned.face_coefficients((-2, 3), 1, derivative=2)
    grid = sciax.pde.Grid(16, 1.0, points="centre")
    with pytest.raises(
        ValueError, match="viscous must be None or a LearnedFaceValues with derivative=1, got derivative=0"
    ):
        learned.ForcedBurgers(grid, viscous=learned.LearnedFaceValues(random_mlp(6, 4, 0), (-2, 3), 1))
    with pytest.raises(ValueError, match="viscous must be .* got float"):
        learned.ForcedBurgers(grid, viscous=3.0)
