"""Finite volumes: bad input is refused by name at trace time (no compiled runs)."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import fv

GRID = sciax.pde.Grid(20, 1.0, points="centre")


def test_negative_density_or_pressure_names_first_offending_cell():
    model = fv.Euler(GRID)
    rho = np.ones(20)
    rho[7] = rho[12] = -0.1
    with pytest.raises(ValueError, match=r"density > 0 and pressure > 0; the first offending cell is 7 \(x=0.375\)"):
        sciax.simulate(model, fv.euler_conserved(rho, 0.0, 1.0, 1.4), jnp.array([0.0, 0.1]), {"gamma": 1.4})
    p = np.ones(20)
    p[3] = -1.0
    with pytest.raises(ValueError, match="first offending cell is 3 "):
        sciax.simulate(model, fv.euler_conserved(1.0, 0.0, p, 1.4), jnp.array([0.0, 0.1]), {"gamma": 1.4})


def test_negative_depth_names_first_offending_cell():
    h = np.ones(20)
    h[5] = -1e-3
    y0 = jnp.stack([jnp.asarray(h), jnp.zeros(20)])
    with pytest.raises(ValueError, match="depth >= 0; the first offending cell is 5 "):
        sciax.simulate(fv.ShallowWater(GRID), y0, jnp.array([0.0, 0.1]), {"g": 9.81})


@pytest.mark.parametrize("cfl", [0.0, -0.5, 1.5, True])
def test_cfl_outside_unit_interval(cfl):
    for method in (fv.SSPRK2, fv.SSPRK3):
        with pytest.raises(ValueError, match=r"cfl must be a number in \(0, 1\]"):
            method(cfl)


def test_reconstruction_needing_more_ghost_cells_than_the_grid_has():
    small = sciax.pde.Grid(2, 1.0)
    with pytest.raises(ValueError, match="WENO5Z needs 3 ghost cells on each side, but the grid has only 2 cells"):
        fv.Burgers(small, reconstruction=fv.WENO5Z())
    fv.Burgers(small, reconstruction=fv.MUSCL())  # two ghost cells fit


def test_boundary_flux_and_part_mismatches():
    with pytest.raises(ValueError, match="cannot take a Reflective wall"):
        fv.Advection(GRID, fv.Reflective())
    with pytest.raises(TypeError, match="bc must be Periodic\\(\\), Outflow\\(\\) or Reflective\\(\\)"):
        fv.Euler(GRID, sciax.pde.Dirichlet(1.0))
    with pytest.raises(TypeError, match="HLLC: serves the Euler equations only"):
        fv.Burgers(GRID, numerical_flux=fv.HLLC())
    with pytest.raises(TypeError, match="reconstruction must be a sciax.pde.fv.AbstractReconstruction"):
        fv.Euler(GRID, reconstruction="weno")
    with pytest.raises(ValueError, match="limiter must be one of"):
        fv.MUSCL("superbee")
    with pytest.raises(ValueError, match=r"Advection: grid must have 1 dimension\(s\), got a grid of shape \(8, 8\)"):
        fv.Advection(sciax.pde.Grid((8, 8), 1.0))


def test_state_shape_and_params():
    model = fv.Euler(GRID)
    with pytest.raises(ValueError, match=r"the state must have shape \(3, 20\) \(fields density, momentum, energy"):
        sciax.simulate(model, jnp.ones(20), jnp.array([0.0, 0.1]), {"gamma": 1.4})
    with pytest.raises(TypeError, match="params must be a dict with keys \\('gamma',\\)"):
        sciax.simulate(model, fv.euler_conserved(1.0, 0.0, np.ones(20), 1.4), jnp.array([0.0, 0.1]))
    with pytest.raises(ValueError, match=r"params\['bottom'\] must have the grid's shape \(20,\)"):
        sciax.simulate(
            fv.ShallowWater(GRID), jnp.ones((2, 20)), jnp.array([0.0, 0.1]), {"g": 9.8, "bottom": jnp.ones(3)}
        )
    with pytest.raises(TypeError, match="SSPRK3: steps sciax.pde.fv models only"):
        sciax.simulate(
            sciax.pde.fd.heat(GRID, bc=sciax.pde.Periodic()), jnp.ones(20), [0.0, 0.1], {"D": 1.0}, method=fv.SSPRK3()
        )


def test_non_finite_state_during_the_run_fails():
    # A state that is admissible but whose pressure overflows on the first step.
    model = fv.Burgers(GRID)
    sol = sciax.simulate(
        model, jnp.asarray(np.where(np.arange(20) < 10, 1e200, 0.0)), jnp.array([0.0, 1.0]), throw=False
    )
    assert not bool(sol.success)
