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
    bad_n = pde.SemilinearPDE(GRID, lambda k, p: -(k[0] ** 2), lambda t, u, p, g: u[:4])
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


@pytest.mark.parametrize(
    "bc", ["dirichlet", pde.Dirichlet(0.0), (pde.Periodic(), pde.Neumann())], ids=["str", "dirichlet", "mixed"]
)
def test_non_periodic_bc_points_to_fd_models(bc):
    g = pde.Grid((8, 8), 1.0)
    with pytest.raises(ValueError, match=r"sciax\.pde\.fd"):
        spectral.navier_stokes_2d(g, bc=bc)
    with pytest.raises(ValueError, match=r"sciax\.pde\.fd"):
        pde.SemilinearPDE(g, lambda k, p: -(k[0] ** 2), bc=bc)
    # periodic spelled every accepted way is fine
    for ok in ("periodic", pde.Periodic(), (pde.Periodic(), pde.Periodic())):
        spectral.heat(g, bc=ok)


def test_grid_sizes_the_method_cannot_use():
    with pytest.raises(ValueError, match="too few for dealias"):
        spectral.burgers(pde.Grid(3, 1.0))
    with pytest.raises(ValueError, match="forcing_mode=6 is not resolved"):
        spectral.navier_stokes_2d(pde.Grid((16, 16), 1.0), forcing_mode=6)
    with pytest.raises(ValueError, match="needs a 2-D"):
        spectral.navier_stokes_2d(pde.Grid(16, 1.0))
    with pytest.raises(ValueError, match="needs a 3-D"):
        spectral.navier_stokes_3d(pde.Grid((8, 8), 1.0))
    gs = spectral.gray_scott(pde.Grid((8, 8), 1.0))
    with pytest.raises(ValueError, match=r"expected \(2, 8, 8\)"):
        sciax.simulate(
            gs, jnp.zeros((8, 8)), TS, {"Du": 1.0, "Dv": 1.0, "F": 0.0, "kappa": 0.0}, method=pde.ETDRK4(dt=0.05)
        )


@pytest.mark.parametrize("cls", [pde.IFRK4, pde.CNAB2])
@pytest.mark.parametrize("dt", [0.0, -1.0])
def test_new_steppers_reject_nonpositive_dt(cls, dt):
    with pytest.raises(ValueError, match="dt must be > 0"):
        cls(dt=dt)


def test_growth_that_overflows_the_exponential():
    # L = +50 (a growth rate): exp(dt L) overflows float64 for dt > (log(max) - 1) / 50 ~ 14.2.
    model = pde.SemilinearPDE(GRID, lambda k, p: p["rate"] + 0.0 * k[0])
    with pytest.raises(ValueError, match=r"largest safe dt is 14\.1"):
        sciax.simulate(model, U0, jnp.array([0.0, 20.0]), {"rate": 50.0}, method=pde.ETDRK4(dt=20.0))
    with pytest.raises(ValueError, match="largest safe dt"):
        sciax.simulate(model, U0, jnp.array([0.0, 20.0]), {"rate": 50.0}, method=pde.IFRK4(dt=20.0))
    import jax

    ts = jnp.array([0.0, 20.0])
    run = jax.jit(lambda p: sciax.simulate(model, U0, ts, p, method=pde.ETDRK1(dt=20.0)).ys)
    with pytest.raises(Exception, match="largest safe dt"):
        run({"rate": jnp.asarray(50.0)})


def test_model_arguments_are_checked():
    with pytest.raises(ValueError, match="not both"):
        pde.SemilinearPDE(GRID, lambda k, p: 0.0, lambda t, u, p, g: u, nonlinear_spectral=lambda t, u, p, g: u)
    with pytest.raises(ValueError, match="dealias must be True, False or a fraction"):
        pde.SemilinearPDE(GRID, lambda k, p: 0.0, dealias=1.5)
    with pytest.raises(TypeError, match="fields must be"):
        pde.SemilinearPDE(GRID, lambda k, p: 0.0, fields="uv")
    with pytest.raises(ValueError, match=r"allen_cahn\(\): params is missing 'epsilon'; params has unexpected 'eps'"):
        sciax.simulate(spectral.allen_cahn(GRID), U0, TS, {"eps": 0.1}, method=pde.ETDRK4(dt=0.05))


@pytest.mark.parametrize(
    "model, params, error, match",
    [
        (spectral.burgers(GRID), None, TypeError, r"burgers\(\) expects params = a dict of scalars 'nu', got None"),
        (spectral.heat(GRID), {"nu": jnp.ones(3)}, ValueError, r"params\['nu'\] has shape \(3,\), expected \(\)"),
        (spectral.kdv(GRID), {"nu": 1.0}, TypeError, r"kdv\(\) takes no params \(pass params=None\)"),
        (
            spectral.navier_stokes_2d(pde.Grid((8, 8), 2 * np.pi), forcing_mode=1),
            {"nu": 0.1},
            ValueError,
            r"navier_stokes_2d\(\): params is missing 'forcing'",
        ),
    ],
    ids=["none", "shape", "no-params", "ns2d-forcing"],
)
def test_catalogue_params_are_checked_at_trace_time(model, params, error, match):
    u0 = jnp.zeros(model.state_shape)
    with pytest.raises(error, match=match):
        sciax.simulate(model, u0, TS, params, method=pde.ETDRK4(dt=0.05))
