"""Finite-volume Euler equations on 2-D and 3-D grids (float64): Shu's isentropic vortex and a
diagonal density sine against their exact solutions with measured orders, conservation, planar
Riemann problems equal to the 1-D scheme, wall symmetry, jit/vmap, bad input. Each grid compiles
once; the vortex and the sine share their runs' executables."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import fv

GAMMA = 1.4
BOX = 10.0  # the vortex's periodic box [-5, 5]^2


def _vortex(x, y, t):
    """Shu's isentropic vortex of strength 5 advected at (1, 1) (Shu, ICASE report 97-65, 1997,
    section 4.2): `(rho, u, v, p)` at `(x, y, t)`, exact for the Euler equations."""
    strength = 5.0
    xc, yc = (x - t + 5) % BOX - 5, (y - t + 5) % BOX - 5
    bump = np.exp(0.5 * (1 - xc**2 - yc**2))
    u = 1 - strength / (2 * np.pi) * bump * yc
    v = 1 + strength / (2 * np.pi) * bump * xc
    temperature = 1 - (GAMMA - 1) * strength**2 / (8 * GAMMA * np.pi**2) * bump**2
    rho = temperature ** (1 / (GAMMA - 1))
    return rho, u, v, rho * temperature


def _vortex_averages(grid, t):
    """Cell averages of the conserved vortex state by a 5x5-point Gauss rule (error ~ dx^10)."""
    nodes, weights = np.polynomial.legendre.leggauss(5)
    (x, y), (hx, hy) = grid.coords(), grid.spacing
    total = 0.0
    for a, wa in zip(nodes, weights):
        for b, wb in zip(nodes, weights):
            rho, u, v, p = _vortex(*np.meshgrid(x + a * hx / 2, y + b * hy / 2, indexing="ij"), t)
            total = total + wa * wb / 4 * np.asarray(fv.euler_conserved(rho, (u, v), p, GAMMA))
    return total


def _sine_averages(grid, t):
    """Density `1 + 0.2 sin(k (x + y - 2 t))`, `k = 2 pi / 10`, carried at u = v = 1, p = 1: exact
    cell averages (the flux is linear in the state along this family)."""
    (x, y), (h, _) = grid.meshgrid(), grid.spacing
    k = 2 * np.pi / BOX
    rho = 1 + 0.2 * np.sin(k * (x + y - 2 * t)) * (np.sin(k * h / 2) / (k * h / 2)) ** 2
    one = np.ones_like(rho)
    return np.asarray(fv.euler_conserved(rho, (one, one), one, GAMMA))


SIZES = (48, 64)


@functools.cache
def _periodic(n):
    grid = sciax.pde.Grid((n, n), BOX, -5.0, points="centre")
    return fv.Euler(grid, fv.Periodic(), face_quadrature=3)


def _run(n, exact, t=1.0):
    """The final state from `exact` at t = 0, WENO5Z + HLLC + SSPRK3 with Gauss quadrature across
    the faces, the step shrinking as dx^(5/3) (SSPRK3's O(dt^3) error stays below WENO5's
    O(dx^5)), and the exact final state."""
    model = _periodic(n)
    method = fv.SSPRK3(0.5 * (SIZES[0] / n) ** (2 / 3))
    sol = sciax.simulate(
        model, jnp.asarray(exact(model.grid, 0.0)), jnp.array([0.0, t]), {"gamma": GAMMA}, method=method
    )
    assert bool(sol.success)
    return np.asarray(sol.ys), exact(model.grid, t)


def _l1_order(exact):
    errors = [np.mean(np.abs(ys[-1, 0] - want[0])) for ys, want in (_run(n, exact) for n in SIZES)]
    return errors, np.log(errors[0] / errors[1]) / np.log(SIZES[1] / SIZES[0])


def test_isentropic_vortex_is_fifth_order_with_gauss_quadrature_across_faces():
    # With one point per face (face_quadrature=1) the nonlinear flux makes the scheme formally
    # second order in 2-D; three Gauss nodes keep WENO5's order. The order is still rising on these
    # grids (about 3.4 from 24 to 32 cells, 4.2 from 32 to 48).
    errors, order = _l1_order(_vortex_averages)
    assert order > 4.5 and errors[1] < 1.5e-5, (errors, order)


def test_diagonal_density_sine_is_fifth_order():
    errors, order = _l1_order(_sine_averages)
    assert order > 4.5 and errors[1] < 1e-7, (errors, order)


def test_periodic_2d_run_conserves_mass_momenta_and_energy_to_round_off():
    ys, _ = _run(SIZES[0], _vortex_averages)
    totals = ys.sum(axis=(-2, -1))
    assert np.allclose(totals[1], totals[0], rtol=0, atol=1e-12 * SIZES[0] ** 2)
    assert np.abs(totals[0, 1:3]).min() > 100  # the momenta are not trivially zero
    assert np.abs(ys[1] - ys[0]).max() > 0.1  # the vortex moved


# ---- planar problems equal the 1-D scheme ----------------------------------------------------------

N_LINE = 48
STEPS, DT = 12, 0.3 / N_LINE  # fixed steps: the CFL step of a planar run counts the other axes too


def _tube_1d():
    """A Riemann problem whose gas runs into both walls (velocity -1 left of 0.5, +0.5 right)."""
    (x,) = sciax.pde.Grid(N_LINE, 1.0, points="centre").coords()
    return np.where(x < 0.5, 1.0, 0.125), np.where(x < 0.5, -1.0, 0.5), np.where(x < 0.5, 1.0, 0.1)


@eqx.filter_jit
def _steps(model, y0):
    method = fv.SSPRK3()
    return jax.lax.fori_loop(0, STEPS, lambda k, y: method.step(model, y, k * DT, DT, {"gamma": GAMMA}), y0)


@pytest.mark.parametrize("shape,axis,quadrature", [((3, N_LINE), 1, 1), ((3, 3, N_LINE), 2, 3)])
def test_planar_riemann_problem_along_an_axis_equals_the_1d_run(shape, axis, quadrature):
    # With Gauss quadrature (3-D: 9 nodes per face) the nodes of a planar state equal its face
    # average up to the round-off of the interpolation weights' sum.
    walls = [fv.Periodic()] * len(shape)
    walls[axis] = fv.Reflective()  # a wall on the varying axis flips that momentum only
    model = fv.Euler(sciax.pde.Grid(shape, [1.0] * len(shape), points="centre"), walls, face_quadrature=quadrature)
    line = fv.Euler(sciax.pde.Grid(N_LINE, 1.0, points="centre"), fv.Reflective())
    rho, u, p = (np.broadcast_to(q, shape) for q in _tube_1d())
    velocity = [np.zeros(shape)] * len(shape)
    velocity[axis] = u
    got = np.asarray(_steps(model, fv.euler_conserved(rho, velocity, p, GAMMA)))
    want = np.asarray(_steps(line, fv.euler_conserved(*_tube_1d(), GAMMA)))
    fields = [0, axis + 1, len(shape) + 1]
    expected = np.broadcast_to(want.reshape(3, *([1] * (len(shape) - 1)), N_LINE), (3, *shape))
    assert np.allclose(got[fields], expected, rtol=1e-13, atol=1e-13)  # fusion order differs
    others = [k for k in range(1, len(shape) + 1) if k != axis + 1]
    # The transverse momenta stay at round-off: the identical transverse cells run in different
    # vector lanes of the fused reconstruction (or its scalar remainder loop), which can contract
    # multiply-adds differently; the bound is the one above, relative to the moving momentum.
    assert np.abs(got[others]).max() <= 1e-13 * np.abs(got[axis + 1]).max()
    assert np.abs(want[1, [0, -1]]).max() < np.abs(_tube_1d()[1]).max()  # the walls did slow the gas


# ---- walls, jit and vmap ---------------------------------------------------------------------------

BLAST = sciax.pde.Grid((12, 12), 1.0, points="centre")


def _bump(gamma, height, width):
    """A smooth pressure bump off the diagonal's centre of a closed box, gas at rest: pressure
    `1 + height exp(-((x - 0.4)^2 + (y - 0.4)^2) / width)`."""
    x, y = BLAST.meshgrid()
    p = 1.0 + height * np.exp(-((x - 0.4) ** 2 + (y - 0.4) ** 2) / width)
    return fv.euler_conserved(np.ones_like(p), (np.zeros_like(p), np.zeros_like(p)), p, gamma)


def _box_final(state, gamma):
    model = fv.Euler(BLAST, fv.Reflective())
    return sciax.simulate(model, state, jnp.array([0.0, 0.15]), {"gamma": gamma}).ys[-1]


def test_reflective_box_keeps_mirror_symmetry_under_jit_and_vmap_over_states_and_gamma():
    # Smooth data: there the scheme is well conditioned (a 1e-16 relative change of the start moves the
    # end by ~1e-15). A jump in the start amplifies round-off ~1e10 by t = 0.15 through the limiters,
    # so runs that XLA compiles with different arithmetic (batched or not, x or y sweeps) part at 1e-6.
    gammas = jnp.array([1.4, 5 / 3])
    starts = [_bump(gammas[0], 0.5, 0.02), _bump(gammas[1], 1.0, 0.01)]
    batched = np.asarray(jax.jit(jax.vmap(_box_final))(jnp.stack(starts), gammas))
    single = np.asarray(_box_final(starts[1], gammas[1]))
    assert np.allclose(batched[1], single, rtol=1e-13, atol=1e-13)
    for state, start in zip(batched, starts):
        # Symmetric about the diagonal: swapping x and y swaps the momenta.
        assert np.allclose(state[[0, 2, 1, 3]].transpose(0, 2, 1), state, rtol=1e-13, atol=1e-13)
        # No mass or energy goes through the walls, and the gas did move.
        totals = np.asarray(start).sum(axis=(1, 2))
        assert np.allclose(state.sum(axis=(1, 2))[[0, 3]], totals[[0, 3]], rtol=1e-14, atol=0)
        assert np.abs(state[1]).max() > 1e-2


# ---- bad input (no compiled runs) --------------------------------------------------------------------


def test_bad_state_shape_names_the_fields_and_bad_pressure_the_cell_with_coordinates():
    model = fv.Euler(sciax.pde.Grid((6, 5), (0.6, 0.5), points="centre"))
    with pytest.raises(ValueError, match=r"fields density, momentum_x, momentum_y, energy along the first axis"):
        sciax.simulate(model, jnp.ones((3, 6, 5)), jnp.array([0.0, 0.1]), {"gamma": GAMMA})
    p = np.ones((6, 5))
    p[4, 1] = p[5, 0] = -1.0
    y0 = fv.euler_conserved(1.0, (0.0, 0.0), p, GAMMA)
    with pytest.raises(ValueError, match=r"first offending cell is \(4, 1\) \(x=0.45, y=0.15\)"):
        sciax.simulate(model, y0, jnp.array([0.0, 0.1]), {"gamma": GAMMA})
    with pytest.raises(ValueError, match="face_quadrature must be 1 or 3"):
        fv.Euler(model.grid, face_quadrature=2)
    with pytest.raises(ValueError, match="characteristic=True is implemented for 1-D grids only"):
        fv.Euler(model.grid, characteristic=True)
    with pytest.raises(ValueError, match="sequence of 1 to 3 arrays, got 4"):
        fv.euler_conserved(1.0, (0.0,) * 4, 1.0, GAMMA)
    with pytest.raises(ValueError, match="needs 3 ghost cells on each side, but the grid has only 2 cells"):
        fv.Euler(sciax.pde.Grid((2, 8), 1.0))


def test_primitive_round_trip_in_3d():
    rng = np.random.default_rng(3)
    rho, p = rng.uniform(0.5, 2, (2, 4, 3, 2))
    u = tuple(rng.uniform(-1, 1, (3, 4, 3, 2)))
    got_rho, got_u, got_p = fv.euler_primitive(fv.euler_conserved(rho, u, p, GAMMA), GAMMA)
    assert np.allclose(got_rho, rho, rtol=1e-15) and np.allclose(got_p, p, rtol=1e-13)
    assert got_u.shape == (3, 4, 3, 2) and np.allclose(got_u, np.stack(u), rtol=1e-14, atol=1e-15)
