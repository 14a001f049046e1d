"""Curl, divergence, the periodic Poisson solve, stream function / velocity and the Leray
projection, against analytic fields; and the dealiasing fraction."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sciax import pde
from sciax.pde import spectral

G2 = pde.Grid((16, 12), (2 * np.pi, 3.0))
G3 = pde.Grid((8, 6, 10), (2 * np.pi, 3.0, 5.0))


def test_curl_and_divergence_2d():
    x, y = G2.meshgrid()
    b = 2 * np.pi / 3.0
    vx, vy = np.sin(2 * x) * np.cos(b * y), np.cos(x) * np.sin(2 * b * y)
    v = jnp.asarray(np.stack([vx, vy]))
    curl = -np.sin(x) * np.sin(2 * b * y) + b * np.sin(2 * x) * np.sin(b * y)
    div = 2 * np.cos(2 * x) * np.cos(b * y) + 2 * b * np.cos(x) * np.cos(2 * b * y)
    np.testing.assert_allclose(np.asarray(spectral.curl(v, G2)), curl, atol=1e-12)
    np.testing.assert_allclose(np.asarray(spectral.divergence(v, G2)), div, atol=1e-12)
    batched = spectral.curl(jnp.stack([v, 2 * v]), G2)  # leading batch axis
    np.testing.assert_allclose(np.asarray(batched[1]), 2 * curl, atol=1e-12)


def test_curl_3d_and_curl_of_gradient_vanishes():
    x, y, z = G3.meshgrid()
    a, b, c = 1.0, 2 * np.pi / 3.0, 2 * np.pi / 5.0
    v = np.stack([np.sin(b * y), np.cos(c * z) * np.sin(a * x), np.cos(a * x)])
    # curl = (dw/dy - dv/dz, du/dz - dw/dx, dv/dx - du/dy)
    expected = np.stack(
        [c * np.sin(c * z) * np.sin(a * x), a * np.sin(a * x), a * np.cos(c * z) * np.cos(a * x) - b * np.cos(b * y)]
    )
    np.testing.assert_allclose(np.asarray(spectral.curl(jnp.asarray(v), G3)), expected, atol=1e-12)
    phi = jnp.asarray(np.sin(a * x) * np.cos(2 * b * y) * np.sin(c * z))
    grad = jnp.stack(spectral.gradient(phi, G3))
    np.testing.assert_allclose(np.asarray(spectral.curl(grad, G3)), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match=r"trailing shape \(3, 8, 6, 10\)"):
        spectral.curl(grad[:2], G3)


def test_solve_poisson_plain_and_screened():
    x, y, z = G3.meshgrid()
    a, b, c = 1.0, 2 * np.pi / 3.0, 2 * np.pi / 5.0
    phi = np.sin(a * x) * np.cos(b * y) * np.cos(2 * c * z) + 0.3 * np.cos(b * y)
    lap = -(a**2 + b**2 + 4 * c**2) * (phi - 0.3 * np.cos(b * y)) - b**2 * 0.3 * np.cos(b * y)
    np.testing.assert_allclose(np.asarray(spectral.solve_poisson(jnp.asarray(lap), G3)), phi, atol=1e-12)
    s = 2.5
    np.testing.assert_allclose(
        np.asarray(spectral.solve_poisson(jnp.asarray(lap - s * (phi + 1.0)), G3, screening=s)), phi + 1.0, atol=1e-12
    )
    with pytest.raises(ValueError, match="zero-mean f"):
        spectral.solve_poisson(jnp.asarray(lap + 1.0), G3)
    with pytest.raises(Exception, match="must have zero mean"):
        jax.jit(lambda f: spectral.solve_poisson(f, G3))(jnp.asarray(lap + 1.0))
    with pytest.raises(ValueError, match="screening must be >= 0"):
        spectral.solve_poisson(jnp.asarray(lap), G3, screening=-1.0)


def test_stream_function_and_velocity_have_the_documented_signs():
    g = pde.Grid((16, 16), 2 * np.pi)
    x, y = g.meshgrid()
    psi = np.sin(x) * np.cos(2 * y) + 0.2 * np.cos(3 * x)
    omega = -(-5 * np.sin(x) * np.cos(2 * y) - 9 * 0.2 * np.cos(3 * x))  # laplacian(psi) = -omega
    np.testing.assert_allclose(np.asarray(spectral.stream_function(jnp.asarray(omega), g)), psi, atol=1e-12)
    vel = spectral.velocity_from_vorticity(jnp.asarray(omega), g)
    np.testing.assert_allclose(np.asarray(vel[0]), -2 * np.sin(x) * np.sin(2 * y), atol=1e-12)  # dpsi/dy
    np.testing.assert_allclose(np.asarray(vel[1]), -(np.cos(x) * np.cos(2 * y) - 0.6 * np.sin(3 * x)), atol=1e-12)
    np.testing.assert_allclose(np.asarray(spectral.curl(vel, g)), omega, atol=1e-12)
    np.testing.assert_allclose(np.asarray(spectral.divergence(vel, g)), 0.0, atol=1e-12)


def test_leray_projection():
    x, y, z = G3.meshgrid()
    b, c = 2 * np.pi / 3.0, 2 * np.pi / 5.0
    solenoidal = np.stack([np.sin(b * y) * np.cos(c * z), np.sin(x) * np.cos(c * z), np.cos(x) * np.sin(b * y)])
    phi = jnp.asarray(np.cos(x) * np.sin(b * y) * np.sin(c * z))
    u = jnp.asarray(solenoidal) + jnp.stack(spectral.gradient(phi, G3))
    projected = spectral.project_divergence_free(u, G3)
    np.testing.assert_allclose(np.asarray(projected), solenoidal, atol=1e-12)
    np.testing.assert_allclose(np.asarray(spectral.divergence(projected, G3)), 0.0, atol=1e-12)


@pytest.mark.parametrize(
    "n, fraction, largest", [(12, 2 / 3, 3), (128, 2 / 3, 42), (64, 0.5, 15), (15, 0.5, 3), (16, 1.0, 7)]
)
def test_dealias_fraction(n, fraction, largest):
    mask = spectral.dealias_mask(pde.Grid(n, 1.0), fraction)
    assert int(np.max(np.nonzero(mask)[0])) == largest and mask[: largest + 1].all()
