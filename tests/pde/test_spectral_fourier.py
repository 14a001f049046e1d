"""Grid geometry and Fourier operators against analytic derivatives of trigonometric functions."""

import jax.numpy as jnp
import numpy as np
import pytest

from sciax import pde
from sciax.pde import spectral


def test_grid_geometry():
    g = pde.Grid((8, 6), (2.0, 3.0), origin=(-1.0, 0.5))
    assert g.ndim == 2 and g.size == 48 and g.dims == ("x", "y")
    assert g.spacing == (0.25, 0.5)
    x, y = g.coords()
    np.testing.assert_allclose(x, -1.0 + 0.25 * np.arange(8))
    np.testing.assert_allclose(y, 0.5 + 0.5 * np.arange(6))
    assert hash(g) == hash(pde.Grid((8, 6), (2.0, 3.0), origin=(-1.0, 0.5)))
    assert pde.Grid(16, 1.0).shape == (16,) and pde.Grid((4, 4, 4), 2.0).lengths == (2.0, 2.0, 2.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(shape=(1,), lengths=1.0), "integer >= 2"),
        (dict(shape=(8, 8, 8, 8), lengths=1.0), "1, 2 or 3"),
        (dict(shape=(8,), lengths=-1.0), "> 0"),
        (dict(shape=(8, 8), lengths=(1.0, 2.0, 3.0)), "one per axis"),
        (dict(shape=(8,), lengths=1.0, origin=(0.0, 0.0)), "one per axis"),
        (dict(shape=(8.5,), lengths=1.0), "integer"),
    ],
)
def test_grid_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pde.Grid(**kwargs)


@pytest.mark.parametrize("n", [16, 15])
def test_derivatives_1d(n):
    g = pde.Grid(n, 3.0, origin=0.7)
    (x,) = g.coords()
    k = 2 * np.pi / 3.0 * 2  # mode 2
    u = jnp.asarray(np.sin(k * x) + 0.3 * np.cos(3 * 2 * np.pi / 3.0 * x))
    k3 = 3 * 2 * np.pi / 3.0
    expected = {
        1: k * np.cos(k * x) - 0.3 * k3 * np.sin(k3 * x),
        2: -(k**2) * np.sin(k * x) - 0.3 * k3**2 * np.cos(k3 * x),
        3: -(k**3) * np.cos(k * x) + 0.3 * k3**3 * np.sin(k3 * x),
        4: k**4 * np.sin(k * x) + 0.3 * k3**4 * np.cos(k3 * x),
    }
    for order, ref in expected.items():
        got = np.asarray(spectral.derivative(u, g, order=order))
        np.testing.assert_allclose(got, ref, atol=1e-12 * np.abs(ref).max())


def test_nyquist_mode_dropped_for_odd_orders():
    g = pde.Grid(8, 2 * np.pi)
    (x,) = g.coords()
    u = jnp.asarray(np.cos(4 * x))  # the Nyquist mode of an 8-point grid
    np.testing.assert_allclose(np.asarray(spectral.derivative(u, g, order=1)), 0.0, atol=1e-13)
    np.testing.assert_allclose(np.asarray(spectral.derivative(u, g, order=2)), -16 * np.cos(4 * x), atol=1e-12)


def test_gradient_laplacian_inverse_3d():
    g = pde.Grid((8, 6, 10), (2 * np.pi, 3.0, 5.0))
    x, y, z = g.meshgrid()
    a, b, c = 2.0, 2 * np.pi / 3.0, 2 * 2 * np.pi / 5.0
    phi = np.sin(a * x) * np.cos(b * y) * np.sin(c * z) + 0.5 * np.cos(b * y)
    u = jnp.asarray(phi + 4.0)  # the constant must not matter for derivatives
    gx, gy, gz = (np.asarray(d) for d in spectral.gradient(u, g))
    np.testing.assert_allclose(gx, a * np.cos(a * x) * np.cos(b * y) * np.sin(c * z), atol=1e-12)
    np.testing.assert_allclose(
        gy, -b * np.sin(a * x) * np.sin(b * y) * np.sin(c * z) - 0.5 * b * np.sin(b * y), atol=1e-12
    )
    np.testing.assert_allclose(gz, c * np.sin(a * x) * np.cos(b * y) * np.cos(c * z), atol=1e-12)
    lap = -(a**2 + b**2 + c**2) * np.sin(a * x) * np.cos(b * y) * np.sin(c * z) - 0.5 * b**2 * np.cos(b * y)
    np.testing.assert_allclose(np.asarray(spectral.laplacian(u, g)), lap, atol=1e-11)
    # inverse: the zero-mean phi, whatever the mean of the right-hand side
    np.testing.assert_allclose(np.asarray(spectral.inverse_laplacian(jnp.asarray(lap + 7.0), g)), phi, atol=1e-12)


def test_wavenumbers_and_masks():
    g = pde.Grid((6, 9), (3.0, 2 * np.pi))
    assert spectral.spectral_shape(g) == (6, 5)
    kx, ky = spectral.wavenumbers(g)
    assert kx.shape == (6, 1) and ky.shape == (1, 5)
    np.testing.assert_allclose(np.asarray(kx[:, 0]), 2 * np.pi / 3.0 * np.array([0, 1, 2, -3, -2, -1]))
    np.testing.assert_allclose(np.asarray(ky[0]), np.arange(5.0))
    mask = spectral.dealias_mask(g)  # keep 3|m| < n: |mx| <= 1 of 6, |my| <= 2 of 9
    assert mask.shape == (6, 5)
    np.testing.assert_array_equal(mask[:, 0], [True, True, False, False, False, True])
    np.testing.assert_array_equal(mask[0], [True, True, True, False, False])
    assert spectral.nyquist_mask(g, 0)[3, 0] and not spectral.nyquist_mask(g, 1).any()


def test_dealias_removes_aliasing_of_quadratic_product():
    # On 12 points, modes |m| <= 3 are kept; the product of two kept modes is exact after truncation.
    g = pde.Grid(12, 2 * np.pi)
    (x,) = g.coords()
    u = np.cos(3 * x)
    mask = spectral.dealias_mask(g)
    assert mask.sum() == 4  # m = 0, 1, 2, 3
    prod_hat = np.fft.rfft(u * u) * mask
    np.testing.assert_allclose(np.fft.irfft(prod_hat, n=12), 0.5 * np.ones(12), atol=1e-14)  # cos(6x) dropped


def test_operators_reject_wrong_shape():
    g = pde.Grid(16, 1.0)
    with pytest.raises(ValueError, match=r"\(8,\).*\(16,\)"):
        spectral.derivative(jnp.zeros(8), g)
    with pytest.raises(ValueError, match="axis"):
        spectral.derivative(jnp.zeros(16), g, axis=1)
    with pytest.raises(ValueError, match="order"):
        spectral.derivative(jnp.zeros(16), g, order=-1)
