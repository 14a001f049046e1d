"""Finite-volume scalar laws (float64): Burgers' shock at the Rankine-Hugoniot speed and exact
translation by linear advection."""

import jax.numpy as jnp
import numpy as np

import sciax
from sciax.pde import fv


def test_burgers_shock_moves_at_rankine_hugoniot_speed():
    # u = 2 left of x = 0.2, 0 right of it: a shock of speed (2 + 0) / 2 = 1.
    n, t = 200, 0.3
    model = fv.Burgers(sciax.pde.Grid(n, 1.0, points="centre"), fv.Outflow())
    (x,) = model.grid.coords()
    y0 = jnp.asarray(np.where(x < 0.2, 2.0, 0.0))
    sol = sciax.simulate(model, y0, jnp.array([0.0, 0.15, t]), method=fv.SSPRK3(0.5))
    for u, time in zip(sol.ys[1:], (0.15, t)):
        u = np.asarray(u)
        k = int(np.argmax(u < 1.0))  # first cell below the mid value
        crossing = x[k - 1] + (u[k - 1] - 1.0) / (u[k - 1] - u[k]) * (x[k] - x[k - 1])
        assert abs(crossing - (0.2 + time)) < 0.5 / n
        exact = np.where(x < 0.2 + time, 2.0, 0.0)
        assert np.mean(np.abs(u - exact)) < 2.0 * 2 / n  # the shock smeared over about two cells
        assert u.max() < 2.0 + 1e-6 and u.min() > -1e-6  # no over/undershoots


def test_advection_translates_exactly_in_both_directions():
    n = 50
    grid = sciax.pde.Grid(n, 1.0)
    h = 1.0 / n
    (x,) = grid.coords()

    def averages(s):
        return (np.cos(2 * np.pi * (s - h / 2)) - np.cos(2 * np.pi * (s + h / 2))) / (2 * np.pi * h)

    model = fv.Advection(grid, numerical_flux=fv.HLL())
    finals = []
    for a in (1.0, -1.0):
        sol = sciax.simulate(model, jnp.asarray(averages(x)), jnp.array([0.0, 0.3]), {"velocity": a})
        assert np.mean(np.abs(sol.ys[-1] - averages(x - a * 0.3))) < 2e-5
        assert int(sol.stats["num_steps"]) == int(np.ceil(0.3 / (0.5 * h)))
        finals.append(np.asarray(sol.ys[-1]))
    # Upwinding follows the sign of the velocity: the scheme commutes with the reflection x -> -x.
    mirror = lambda u: np.roll(u[::-1], 1)  # noqa: E731  (cell i -> cell -i on the periodic grid)
    assert np.allclose(finals[1], -mirror(finals[0]), rtol=0, atol=1e-14)
