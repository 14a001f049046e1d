"""Finite-volume shallow water (float64): lake at rest over a bump, Ritter's dry and Stoker's wet
dam breaks against their exact solutions."""

import functools

import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import sciax
from sciax.pde import fv

G = 9.81


@functools.cache
def _model(n, rec=None, bc=None):
    kwargs = {} if rec is None else {"reconstruction": rec}
    return fv.ShallowWater(sciax.pde.Grid(n, 1.0, points="centre"), fv.Outflow() if bc is None else bc, **kwargs)


@pytest.mark.parametrize("rec", [None, fv.WENO5Z()])
def test_lake_at_rest_is_preserved_to_round_off(rec):
    model = _model(100, rec, fv.Reflective())
    (x,) = model.grid.coords()
    bottom = 0.4 * np.exp(-((x - 0.5) ** 2) / 0.005) + 0.1 * np.sin(2 * np.pi * x) + 0.1
    y0 = jnp.stack([jnp.asarray(1.0 - bottom), jnp.zeros(100)])
    sol = sciax.simulate(model, y0, jnp.array([0.0, 0.5]), {"g": G, "bottom": jnp.asarray(bottom)})
    assert int(sol.stats["num_steps"]) > 100
    assert np.max(np.abs(sol.ys[-1][0] + bottom - 1.0)) < 1e-13
    assert np.max(np.abs(sol.ys[-1][1])) < 1e-13


def _dam_break(n, h_right, t):
    model = _model(n)
    (x,) = model.grid.coords()
    y0 = jnp.stack([jnp.asarray(np.where(x < 0.5, 1.0, h_right)), jnp.zeros(n)])
    sol = sciax.simulate(model, y0, jnp.array([0.0, t]), {"g": G})
    return x, np.asarray(sol.ys[-1][0])


def _ritter(x, t):
    c0, xi = np.sqrt(G), (x - 0.5) / t
    return np.where(xi < -c0, 1.0, np.where(xi > 2 * c0, 0.0, (2 * c0 - xi) ** 2 / (9 * G)))


def _stoker(x, t, h_l, h_r):
    # Middle depth h_m: the rarefaction's velocity 2 (c_l - c_m) equals the velocity behind the
    # shock into still water from the Rankine-Hugoniot conditions.
    def mismatch(h):
        return 2 * (np.sqrt(G * h_l) - np.sqrt(G * h)) - (h - h_r) * np.sqrt(G * (h + h_r) / (2 * h * h_r))

    h_m = brentq(mismatch, h_r, h_l)
    u_m = 2 * (np.sqrt(G * h_l) - np.sqrt(G * h_m))
    shock = h_m * u_m / (h_m - h_r)
    xi = (x - 0.5) / t
    fan = (2 * np.sqrt(G * h_l) - xi) ** 2 / (9 * G)
    h = np.where(xi < -np.sqrt(G * h_l), h_l, np.where(xi < u_m - np.sqrt(G * h_m), fan, h_m))
    return np.where(xi < shock, h, h_r)


def test_dry_dam_break_matches_ritter_and_stays_non_negative():
    t = 0.05
    errors = []
    for n in (100, 200):
        x, h = _dam_break(n, 0.0, t)
        assert np.all(np.isfinite(h)) and h.min() >= 0.0
        errors.append(np.mean(np.abs(h - _ritter(x, t))))
    assert errors[1] < 2e-3 and errors[0] / errors[1] > 1.7


def test_wet_dam_break_matches_stoker():
    t = 0.05
    errors = []
    for n in (100, 200):
        x, h = _dam_break(n, 0.1, t)
        errors.append(np.mean(np.abs(h - _stoker(x, t, 1.0, 0.1))))
    assert errors[1] < 4e-3 and errors[0] / errors[1] > 1.5
