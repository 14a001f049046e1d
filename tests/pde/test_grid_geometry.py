"""`Grid` geometry: the two point layouts, where the walls of FD boundary conditions are, scalar
`origin`, and `Grid.integrate`. Every expected value is an exact solution or integral worked by hand."""

from __future__ import annotations

import tomllib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import io, parallel, pde
from sciax.pde import fd


def _orders(errors, ratio=2.0):
    errors = np.asarray(errors)
    return np.log(errors[:-1] / errors[1:]) / np.log(ratio)


def _laplacian_error(n, order, u, lap_exact, bc):
    """Pointwise |fd.laplacian(u) - lap_exact| on cell centres of [0, 1] (walls at 0 and 1)."""
    grid = pde.Grid(n, 1.0, points="centre")
    (x,) = grid.coords()
    got = np.asarray(fd.laplacian(jnp.asarray(u(x)), grid, bc=bc, order=order))
    return x, np.abs(got - lap_exact(x))


# ---- layouts, walls, coordinates ------------------------------------------------------------------


def test_coords_and_walls_of_both_layouts():
    start = pde.Grid(4, 1.0)
    centre = pde.Grid(4, 1.0, points="centre")
    assert start.points == "start" and centre.points == "centre"
    np.testing.assert_allclose(start.coords()[0], [0.0, 0.25, 0.5, 0.75], rtol=0, atol=1e-15)
    np.testing.assert_allclose(centre.coords()[0], [0.125, 0.375, 0.625, 0.875], rtol=0, atol=1e-15)
    # FD boundary faces lie half a spacing beyond the edge points.
    assert start.walls == ((-0.125, 0.875),)
    assert centre.walls == ((0.0, 1.0),)
    assert start.spacing == centre.spacing and start != centre and hash(start) != hash(centre)


def test_walls_and_meshgrid_in_2d_and_3d():
    g = pde.Grid((4, 8), (2.0, 4.0), origin=(-1.0, 3.0), points="centre")
    assert g.walls == ((-1.0, 1.0), (3.0, 7.0))
    X, Y = g.meshgrid()
    assert X.shape == Y.shape == (4, 8)
    np.testing.assert_allclose(X[:, 0], [-0.75, -0.25, 0.25, 0.75], rtol=0, atol=1e-15)
    np.testing.assert_allclose(Y[0, :], 3.25 + 0.5 * np.arange(8), rtol=0, atol=1e-15)
    g3 = pde.Grid((4, 4, 2), 1.0, origin=0.5)
    assert g3.walls == ((0.375, 1.375),) * 2 + ((0.25, 1.25),)
    assert g3.cell_volume == 0.25 * 0.25 * 0.5


def test_scalar_origin_broadcasts_like_lengths():
    assert pde.Grid((8, 8), 1.0, origin=-0.5).origin == (-0.5, -0.5)
    assert pde.Grid((8, 8, 4), 2.0, origin=np.float64(1.0)).origin == (1.0, 1.0, 1.0)
    assert pde.Grid((8, 8), 1.0, origin=[0.25]).origin == (0.25, 0.25)
    with pytest.raises(ValueError, match="origin has 2 entries but shape"):
        pde.Grid((8, 8, 8), 1.0, origin=(0.0, 1.0))
    with pytest.raises(TypeError, match="origin must be a number or a sequence"):
        pde.Grid((8, 8), 1.0, origin="0")


@pytest.mark.parametrize("points", ["center", "cell", "", None, 0.5])
def test_bad_points_is_refused_naming_both_layouts(points):
    with pytest.raises(ValueError, match=r"points must be 'start' .* or 'centre' .*got points="):
        pde.Grid(8, 1.0, points=points)


def test_centre_layout_is_the_start_layout_shifted_by_half_a_cell():
    n = 16
    centre = pde.Grid(n, 1.0, points="centre")
    shifted = pde.Grid(n, 1.0, origin=0.5 / n)
    np.testing.assert_allclose(centre.coords()[0], shifted.coords()[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(centre.walls, shifted.walls, rtol=0, atol=1e-15)
    u = jnp.asarray(np.cos(np.pi * centre.coords()[0]))  # stencils see the spacing only
    lap = [fd.laplacian(u, grid, bc=pde.Neumann(), order=4) for grid in (centre, shifted)]
    np.testing.assert_array_equal(np.asarray(lap[0]), np.asarray(lap[1]))


# ---- the FD Laplacian on walls at 0 and 1 ---------------------------------------------------------


@pytest.mark.parametrize("order", fd.ORDERS)
def test_neumann_laplacian_of_cos_converges_at_the_stencil_order(order):
    # cos(pi x) has zero slope on walls at 0 and 1 and is even about both, so the even-reflection
    # ghosts of Neumann(0) are exact and the stencil keeps its full order up to the walls.
    errs = [_laplacian_error(n, order, lambda x: np.cos(np.pi * x), lambda x: -np.pi**2 * np.cos(np.pi * x),
                             pde.Neumann())[1].max() for n in (8, 16, 32)]  # fmt: skip
    np.testing.assert_allclose(_orders(errs), order, atol=0.1)


@pytest.mark.parametrize("order", fd.ORDERS)
def test_dirichlet_laplacian_of_sin_converges_at_the_stencil_order(order):
    # sin(pi x) vanishes on the walls and is odd about both: the odd-reflection ghosts are exact.
    errs = [_laplacian_error(n, order, lambda x: np.sin(np.pi * x), lambda x: -np.pi**2 * np.sin(np.pi * x),
                             pde.Dirichlet(0.0))[1].max() for n in (8, 16, 32)]  # fmt: skip
    np.testing.assert_allclose(_orders(errs), order, atol=0.1)


def test_neumann_laplacian_on_2d_walls_with_scalar_origin():
    # Box [-1, 0] x [-1, 1]: u = cos(pi (x + 1)) cos(pi (y + 1) / 2) has zero normal slope on all four walls.
    def err(n):
        g = pde.Grid((n, 2 * n), (1.0, 2.0), origin=-1.0, points="centre")
        X, Y = g.meshgrid()
        u = np.cos(np.pi * (X + 1)) * np.cos(np.pi * (Y + 1) / 2)
        got = np.asarray(fd.laplacian(jnp.asarray(u), g, bc=pde.Neumann(), order=2))
        return np.max(np.abs(got + (np.pi**2 + np.pi**2 / 4) * u))

    np.testing.assert_allclose(_orders([err(n) for n in (8, 16, 32)]), 2.0, atol=0.1)


def test_neumann_wall_closure_is_first_order_near_the_wall_for_a_general_profile():
    # u = cos(pi x) + x^3 - 3x^2/2: u' = 0 on both walls but u''' = 6 there, so an even-reflection ghost
    # at distance s is off by s^3 u'''/3 = O(dx^3), i.e. O(dx) in the Laplacian at the points next to
    # the walls, whatever the stencil order. Away from the walls the stencil keeps its order.
    def u(x):
        return np.cos(np.pi * x) + x**3 - 1.5 * x**2

    def lap(x):
        return -(np.pi**2) * np.cos(np.pi * x) + 6 * x - 3

    for order in (4, 6, 8):
        errs = [_laplacian_error(n, order, u, lap, pde.Neumann())[1].max() for n in (16, 32)]
        np.testing.assert_allclose(_orders(errs), 1.0, atol=0.1)
    # Interior: the same physical points (the centres of the 8-point grid inside (1/4, 3/4)) on grids
    # refined by 3, whose centres include the coarse ones.
    keep = (np.arange(8) + 0.5)[2:6] / 8
    for order in (2, 4):
        interior = []
        for n in (8, 24, 72):
            x, e = _laplacian_error(n, order, u, lap, pde.Neumann())
            interior.append(e[np.searchsorted(x, keep - 1e-12)].max())
        np.testing.assert_allclose(_orders(interior, ratio=3.0), order, atol=0.05)


def test_dirichlet_closure_on_a_curved_profile_is_off_by_a_constant_next_to_the_wall():
    # u = x^2 with u = 0 and u = 1 on walls at 0 and 1. The odd-reflection ghost 2 g - u(dx/2) misses
    # u(-dx/2) by dx^2/2, so the 3-point Laplacian there is (-1/4 - 2/4 + 9/4) = 3/2 instead of 2 at
    # every resolution (likewise at the top wall); interior points are exact for a quadratic. The
    # solution of a heat problem still converges at second order (tests/pde/test_fd_equations.py).
    for n in (8, 32):
        g = pde.Grid(n, 1.0, points="centre")
        (x,) = g.coords()
        bc = ((pde.Dirichlet(0.0), pde.Dirichlet(1.0)),)
        got = np.asarray(fd.laplacian(jnp.asarray(x**2), g, bc=bc, order=2))
        np.testing.assert_allclose(got, [1.5] + [2.0] * (n - 2) + [1.5], rtol=1e-11)


# ---- integrate ------------------------------------------------------------------------------------


def test_integrate_periodic_trigonometric_field_is_exact():
    g = pde.Grid((16, 12), 2 * np.pi, origin=0.3)
    X, Y = g.meshgrid()
    u = 1.5 + np.sin(X) * np.cos(2 * Y) + np.cos(X) ** 2
    exact = (2 * np.pi) ** 2 * 2.0  # the mean of cos^2 is 1/2, of sin x cos 2y is 0
    np.testing.assert_allclose(float(g.integrate(jnp.asarray(u))), exact, rtol=1e-14)


def test_integrate_cell_centred_smooth_field_is_second_order():
    def err(n):
        g = pde.Grid((n, n), (1.0, 2.0), points="centre")
        X, Y = g.meshgrid()
        return abs(float(g.integrate(jnp.asarray(np.exp(X) * Y**2))) - (np.e - 1) * 8 / 3)

    np.testing.assert_allclose(_orders([err(n) for n in (8, 16, 32)]), 2.0, atol=0.02)


def test_integrate_batches_differentiates_and_traces():
    g = pde.Grid((4, 6), (1.0, 3.0), points="centre")
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.standard_normal((2, 3, 4, 6)))  # leading axes are batch axes
    expected = np.asarray(u).sum(axis=(-2, -1)) * 0.25 * 0.5
    np.testing.assert_allclose(np.asarray(g.integrate(u)), expected, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jax.jit(g.integrate)(u)), expected, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jax.vmap(g.integrate)(u)), expected, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda v: g.integrate(v**2))(u[0, 0])), 2 * u[0, 0] * 0.125)
    both = g.integrate({"u": u[0, 0], "v": 2 * u[0, 0]})
    np.testing.assert_allclose(float(both["v"]), 2 * expected[0, 0], rtol=1e-14)
    assert g.integrate(jnp.ones((4, 6), jnp.float32)).dtype == jnp.float32
    assert float(g.integrate(np.ones((4, 6), dtype=int))) == 3.0


def test_integrate_refuses_a_field_of_the_wrong_shape():
    g = pde.Grid((4, 6), 1.0)
    with pytest.raises(ValueError, match=r"last 2 axes of u must have the grid's shape \(4, 6\), got shape \(6, 4\)"):
        g.integrate(jnp.ones((6, 4)))
    with pytest.raises(ValueError, match=r"got shape \(6,\)"):
        g.integrate(jnp.ones(6))
    with pytest.raises(ValueError, match=r"u\['v'\] must have"):
        g.integrate({"u": jnp.ones((4, 6)), "v": jnp.ones((4, 5))})
    with pytest.raises(TypeError, match="u must be an array"):
        g.integrate("field")


# ---- the layout travels with the grid -------------------------------------------------------------


def test_layout_reaches_xarray_coordinates_and_sharded_grids():
    g = pde.Grid(8, 1.0, points="centre")
    model = fd.heat(g, bc=pde.Neumann())
    (x,) = g.coords()
    sol = sciax.simulate(model, jnp.asarray(np.cos(np.pi * x)), jnp.array([0.0, 1e-3]), {"D": 0.1},
                         method=pde.RK4(1e-3))  # fmt: skip
    np.testing.assert_allclose(sol.to_xarray()["x"].values, (np.arange(8) + 0.5) / 8, rtol=0, atol=1e-15)
    mesh = parallel.make_mesh("slab")
    sharded = parallel.ShardedGrid(g, mesh, axes=(None,))
    assert sharded.points == "centre" and sharded.walls == g.walls
    assert parallel.shard(model, mesh).local.grid.points == "centre"


_FD_CONFIG = """\
[model]
name = "fd_heat"
dtype = "float64"
[grid]
shape = [8, 4]
lengths = 1.0
origin = 0.0
bc = "neumann"
{points}
[params]
D = 0.01
[initial]
generator = "constant"
value = 1.0
[method]
name = "RK4"
dt = 0.01
[time]
end = 0.02
save_every = 0.01
[output]
path = "heat.zarr"
"""


def test_config_grid_points_and_scalar_origin():
    config = io.parse_config(tomllib.loads(_FD_CONFIG.format(points='points = "centre"')))
    assert config.model.grid.points == "centre" and config.model.grid.walls == ((0.0, 1.0), (0.0, 1.0))
    old = io.parse_config(tomllib.loads(_FD_CONFIG.format(points="")))  # configs without the key still load
    assert old.model.grid.points == "start" and old.model.grid.origin == (0.0, 0.0)
    with pytest.raises(io.ConfigError, match=r"\[grid\] points: unknown value 'center' \(did you mean 'centre'\?\)"):
        io.parse_config(tomllib.loads(_FD_CONFIG.format(points='points = "center"')))
