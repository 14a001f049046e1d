"""Bad input raises a clear error naming the argument and what was expected."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import pde
from sciax.pde import spectral

GRID = pde.Grid(16, 2 * np.pi)
U0 = jnp.asarray(np.sin(GRID.coords()[0]))
TS = jnp.array([0.0, 0.1])
P = {"nu": 0.1}


@pytest.mark.parametrize("dt", [0.0, -0.1, float("nan"), float("inf")])
def test_dt_must_be_positive(dt):
    with pytest.raises(ValueError, match="dt must be > 0"):
        pde.ETDRK4(dt=dt)


def test_dt_must_be_a_number():
    with pytest.raises(TypeError, match="dt must be a Python number"):
        pde.ETDRK2(dt="0.1")


def test_ts_must_be_whole_steps():
    with pytest.raises(ValueError, match=r"whole number of steps; ts\[2\] - ts\[1\]"):
        sciax.simulate(spectral.heat(GRID), U0, jnp.array([0.0, 0.1, 0.25]), P, method=pde.ETDRK4(dt=0.1))


def test_ts_must_be_concrete():
    import jax

    with pytest.raises(ValueError, match="concrete output times"):
        jax.jit(lambda ts: sciax.simulate(spectral.heat(GRID), U0, ts, P, method=pde.ETDRK1(dt=0.05)).ys)(TS)


@pytest.mark.parametrize("method", [pde.ETDRK4(dt=0.05), sciax.ode.Tsit5()], ids=["etdrk4", "tsit5"])
def test_u0_shape_must_match_grid(method):
    with pytest.raises(ValueError, match=r"shape \(8,\), but the grid has shape \(16,\)"):
        sciax.simulate(spectral.heat(GRID), jnp.zeros(8), TS, P, method=method)


def test_u0_must_be_real():
    with pytest.raises(TypeError, match="real floating-point"):
        pde.ETDRK4(dt=0.05).solve(spectral.heat(GRID), U0.astype(complex), TS, P)


def test_etdrk_needs_a_semilinear_pde():
    ode = sciax.ode.ODE(lambda t, y, p: -y)
    with pytest.raises(TypeError, match="ETDRK4 integrates a sciax.pde.SemilinearPDE.*got ODE"):
        sciax.simulate(ode, jnp.ones(3), TS, method=pde.ETDRK4(dt=0.05))


def test_no_default_method():
    with pytest.raises(ValueError, match=r"method=sciax.pde.ETDRK4\(dt=...\)"):
        sciax.simulate(spectral.heat(GRID), U0, TS, P)


def test_unknown_option_rejected():
    with pytest.raises(TypeError, match="unknown option.*rtol"):
        sciax.simulate(spectral.heat(GRID), U0, TS, P, method=pde.ETDRK4(dt=0.05), rtol=1e-6)


def test_bad_model_pieces():
    with pytest.raises(TypeError, match="linear must be callable"):
        pde.SemilinearPDE(GRID, None)
    with pytest.raises(ValueError, match="1-D"):
        spectral.burgers(pde.Grid((8, 8), 1.0))
    bad_symbol = pde.SemilinearPDE(GRID, lambda k, p: jnp.ones(5))
    with pytest.raises(ValueError, match=r"does not broadcast to the spectral \(rfft\) shape \(9,\)"):
        sciax.simulate(bad_symbol, U0, TS, None, method=pde.ETDRK4(dt=0.05))
    bad_n = pde.SemilinearPDE(GRID, lambda k, p: -k[0] ** 2, lambda t, u, p, g: u[:4])
    with pytest.raises(ValueError, match=r"nonlinear.*returned shape \(4,\)"):
        sciax.simulate(bad_n, U0, TS, None, method=pde.ETDRK4(dt=0.05))


def test_blow_up_is_reported():
    # u_t = u^2 from u0 = 2 blows up at t = 0.5.
    model = pde.SemilinearPDE(GRID, lambda k, p: 0.0 * k[0], lambda t, u, p, g: u**2)
    u0 = jnp.full(16, 2.0)
    ts = jnp.array([0.0, 1.0])
    with pytest.raises(Exception, match="became NaN or inf"):
        sciax.simulate(model, u0, ts, None, method=pde.ETDRK1(dt=0.01))
    sol = sciax.simulate(model, u0, ts, None, method=pde.ETDRK1(dt=0.01), throw=False)
    assert not bool(sol.success)
