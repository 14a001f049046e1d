"""The fast path of the finite-volume right-hand side (float64): the grid swept in strips along
axis 0 (`Euler(..., tile=k)`) gives the untiled result, and the positivity fallback behind its
`lax.cond` gives the same as applying it to every face (the `vmap` path, where the cond is a
select) on a state where some reconstructions fail; its gradients equal the untiled ones and
finite differences."""

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import fv

PARAMS = {"gamma": 1.4}
GRID = sciax.pde.Grid((14, 9), (1.0, 0.7), points="centre")


def _smooth(grid):
    """A smooth state with velocity along both axes, nonzero at the boundaries."""
    x, y = grid.meshgrid()
    rho = 1 + 0.4 * np.sin(2 * np.pi * x) * np.cos(3 * y)
    return jnp.asarray(fv.euler_conserved(rho, (0.3 + 0.2 * y, -0.2 * np.sin(5 * x)), 1 + 0.1 * np.cos(4 * y), 1.4))


def _near_vacuum(grid):
    """Two gas blocks leaving a near-vacuum disc, where WENO5's face values undershoot below zero."""
    x, y = grid.meshgrid()
    hole = (x - 0.5) ** 2 + (y - 0.35) ** 2 < 0.03
    rho, p = np.where(hole, 1e-7, 1.0), np.where(hole, 1e-8, 0.4)
    return jnp.asarray(fv.euler_conserved(rho, (np.where(x < 0.5, -2.0, 2.0), 0 * x), p, 1.4))


class _NoFallback(fv.Euler):
    """Euler without the positivity fallback (every state taken as admissible)."""

    admissibility: ClassVar[str] = ""


def _rhs(model):
    return jax.jit(lambda y: model.rhs(0.0, y, PARAMS))


# 4 rows: three strips and a remainder of 2; 7 rows: two strips, no remainder.
@pytest.mark.parametrize(("bc", "tile"), [(fv.Outflow(), 4), (fv.Reflective(), 7)], ids=["outflow", "wall"])
def test_tiled_rhs_equals_untiled(bc, tile):
    y = _smooth(GRID)
    untiled, model = fv.Euler(GRID, bc), fv.Euler(GRID, bc, tile=tile)
    assert (untiled.strip_rows(), model.strip_rows()) == (GRID.shape[0], tile)
    np.testing.assert_allclose(_rhs(model)(y), _rhs(untiled)(y), rtol=0, atol=1e-13)


def test_tiled_rhs_3d():
    grid = sciax.pde.Grid((6, 5, 4), 1.0, points="centre")
    x, y, z = grid.meshgrid()
    rho = 1 + 0.3 * np.sin(2 * np.pi * x + z) * np.cos(2 * y)
    state = jnp.asarray(fv.euler_conserved(rho, (0.2 + 0.1 * z, 0.1 * np.cos(6 * y), 0.1 * x), 1 + 0.1 * y, 1.4))
    tiled = fv.Euler(grid, fv.Periodic(), reconstruction=fv.MUSCL(), tile=3)
    untiled = fv.Euler(grid, fv.Periodic(), reconstruction=fv.MUSCL())
    np.testing.assert_allclose(_rhs(tiled)(state), _rhs(untiled)(state), rtol=0, atol=1e-13)


def test_cond_fallback_equals_fallback_everywhere():
    y = _near_vacuum(GRID)
    model = fv.Euler(GRID, fv.Outflow(), tile=7)
    got = _rhs(model)(y)
    # Under vmap the cond's predicate is batched and both branches run through a select: the
    # fallback applied to every face, the formulation the cond replaced. The face values are then
    # fused differently (`materialize`'s conditional becomes a select too), so they agree to
    # round-off; a wrong fallback differs by far more (the last check).
    everywhere = jax.jit(jax.vmap(lambda s: model.rhs(0.0, s, PARAMS)))(y[None])[0]
    assert bool(jnp.all(jnp.isfinite(got)))
    np.testing.assert_allclose(got, everywhere, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(got))))
    # The state does make some reconstructions fail: without the fallback the result changes.
    plain = _rhs(_NoFallback(GRID, fv.Outflow(), tile=7))(y)
    assert not bool(jnp.all(jnp.abs(plain - got) <= 1e-6 * (1 + jnp.abs(got))))


@pytest.mark.parametrize("tile", [0, -3, 2.5, True])
def test_bad_tile(tile):
    with pytest.raises(ValueError, match="Euler: tile must be None or a positive int"):
        fv.Euler(GRID, fv.Outflow(), tile=tile)


def test_tiled_gradients_against_untiled_and_finite_differences():
    # Reverse mode through the strips (lax.map) and the fallback's lax.cond equals the untiled
    # right-hand side's up to round-off amplified by WENO-Z's weights (eps = 1e-12), on a smooth
    # state. Forward mode against a central difference uses WENO5-JS: WENO-Z's tau = |beta_0 - beta_2|
    # has a kink where the indicators meet (at the outflow ghost cells), where no quotient converges.
    y = _smooth(GRID)
    rng = np.random.default_rng(1)
    cotangent, direction = (jnp.asarray(rng.standard_normal(y.shape)) for _ in range(2))

    def pullback(model):
        return np.asarray(jax.jit(lambda u: jax.vjp(lambda w: model.rhs(0.0, w, PARAMS), u)[1](cotangent)[0])(y))

    expected = pullback(fv.Euler(GRID, fv.Outflow()))
    got = pullback(fv.Euler(GRID, fv.Outflow(), tile=4))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-11 * np.max(np.abs(expected)))
    smooth_weights = fv.Euler(GRID, fv.Outflow(), reconstruction=fv.WENO5JS(), tile=4)
    push = jax.jit(lambda u: jax.jvp(lambda w: smooth_weights.rhs(0.0, w, PARAMS), (u,), (direction,)))
    h = 1e-6
    central = (push(y + h * direction)[0] - push(y - h * direction)[0]) / (2 * h)
    tangent = push(y)[1]
    np.testing.assert_allclose(tangent, central, rtol=0, atol=1e-5 * float(jnp.max(jnp.abs(tangent))))
