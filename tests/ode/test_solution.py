"""Solution features: dense output, events, statistics, xarray conversion, progress."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

DECAY = sciax.ode.ODE(lambda t, y, p: -p * y, names=("u",), units={"u": "mol/L"}, time_units="s")


def test_dense_output_matches_exact_solution():
    sol = sciax.simulate(DECAY, jnp.array([1.0]), jnp.array([0.0, 3.0]), 0.7, dense=True, rtol=1e-10, atol=1e-12)
    for t in [0.1, 1.234, 2.9]:
        np.testing.assert_allclose(float(sol.evaluate(t)[0]), np.exp(-0.7 * t), rtol=1e-8)


def test_evaluate_without_dense_is_a_clear_error():
    sol = sciax.simulate(DECAY, jnp.array([1.0]), jnp.array([0.0, 1.0]), 0.7)
    with pytest.raises(ValueError, match="dense=True"):
        sol.evaluate(0.5)


def test_terminating_event_time_matches_exact_root():
    # u = exp(-p t) reaches 0.25 at t = ln 4 / p.
    ts = jnp.linspace(0.0, 10.0, 11)
    sol = sciax.simulate(DECAY, jnp.array([1.0]), ts, 0.5, event=lambda t, y, p: y[0] - 0.25, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(sol.event_time), np.log(4.0) / 0.5, rtol=1e-8)
    reached = np.asarray(ts) < np.log(4.0) / 0.5
    np.testing.assert_allclose(np.asarray(sol.ys[reached, 0]), np.exp(-0.5 * np.asarray(ts)[reached]), rtol=1e-8)
    assert np.all(np.isinf(np.asarray(sol.ys[~reached])))
    assert bool(sol.success)


def test_event_that_never_fires_gives_nan_time():
    sol = sciax.simulate(DECAY, jnp.array([1.0]), jnp.linspace(0.0, 1.0, 3), 0.5, event=lambda t, y, p: y[0] + 1.0)
    assert np.isnan(float(sol.event_time))
    assert np.all(np.isfinite(np.asarray(sol.ys)))


def test_event_time_is_differentiable():
    # d/dp (ln 4 / p) = -ln 4 / p^2
    def event_time(p):
        return sciax.simulate(
            DECAY,
            jnp.array([1.0]),
            jnp.linspace(0.0, 10.0, 3),
            p,
            event=lambda t, y, q: y[0] - 0.25,
            rtol=1e-10,
            atol=1e-12,
        ).event_time

    np.testing.assert_allclose(float(jax.grad(event_time)(0.5)), -np.log(4.0) / 0.25, rtol=1e-6)


@pytest.mark.parametrize(
    "method, dt0",
    [
        (sciax.ode.Euler(), 0.1),
        (sciax.ode.Heun(), 0.1),
        (sciax.ode.RK4(), 0.1),
        (sciax.ode.Tsit5(), None),
        (sciax.ode.Dopri5(), 0.1),
        (sciax.ode.Dopri8(), None),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, (float, type(None))) else str(v),
)
def test_rhs_eval_count_matches_a_runtime_counter(method, dt0):
    calls = []

    def counted(t, y, p):
        jax.debug.callback(lambda: calls.append(1))
        return -p * y

    sol = sciax.simulate(
        sciax.ode.ODE(counted), jnp.array([1.0]), jnp.linspace(0.0, 5.0, 6), 0.7, method=method, dt0=dt0
    )
    jax.block_until_ready(sol.ys)
    jax.effects_barrier()
    assert int(sol.stats["num_rhs_evals"]) == len(calls)
    assert int(sol.stats["num_steps"]) == int(sol.stats["num_accepted_steps"]) + int(sol.stats["num_rejected_steps"])


def test_to_xarray_names_units_and_member_dim():
    ts = jnp.linspace(0.0, 1.0, 5)
    sol = sciax.simulate(DECAY, jnp.array([1.0]), ts, 0.5)
    ds = sol.to_xarray()
    assert ds["u"].dims == ("time",)
    assert ds["u"].attrs["units"] == "mol/L"
    assert ds["time"].attrs["units"] == "s"
    np.testing.assert_allclose(ds["time"].values, np.asarray(ts))

    batch = jax.vmap(lambda p: sciax.simulate(DECAY, jnp.array([1.0]), ts, p))(jnp.array([0.1, 0.2, 0.3]))
    ds = batch.to_xarray()
    assert ds["u"].dims == ("member", "time") and ds.sizes["member"] == 3
    np.testing.assert_allclose(ds["u"].sel(member=2).values, np.asarray(batch.ys[2, :, 0]))


def test_to_xarray_of_a_dict_state_and_an_unnamed_array():
    model = sciax.ode.ODE(lambda t, y, p: {"a": -y["a"], "b": y["a"] - y["b"]})
    sol = sciax.simulate(model, {"a": jnp.ones(3), "b": jnp.zeros(3)}, jnp.linspace(0.0, 1.0, 4))
    ds = sol.to_xarray()
    assert set(ds.data_vars) == {"a", "b"} and ds["a"].dims == ("time", "state")
    unnamed = sciax.simulate(sciax.ode.ODE(lambda t, y, p: -y), jnp.ones((2, 3)), jnp.linspace(0.0, 1.0, 4))
    assert unnamed.to_xarray()["y"].dims == ("time", "dim_0", "dim_1")


def test_progress_bar_runs(capsys):
    sol = sciax.simulate(DECAY, jnp.array([1.0]), jnp.linspace(0.0, 1.0, 3), 0.5, progress=True)
    assert bool(sol.success)
    assert "100.00%" in capsys.readouterr().err


def test_imex_method_without_split_is_a_clear_error():
    with pytest.raises(ValueError, match="explicit=.*implicit="):
        sciax.simulate(DECAY, jnp.array([1.0]), jnp.linspace(0.0, 1.0, 3), 0.5, method=sciax.ode.KenCarp4())


def test_kencarp_on_a_stiff_split_matches_exact():
    # u' = cos t (explicit) - 1000 (u - sin t) (implicit): u = sin t for u0 = 0.
    model = sciax.ode.ODE(
        explicit=lambda t, y, p: jnp.cos(t) * jnp.ones_like(y), implicit=lambda t, y, p: -1000.0 * (y - jnp.sin(t))
    )
    ts = jnp.linspace(0.0, 5.0, 6)
    sol = sciax.simulate(model, jnp.array([0.0]), ts, method=sciax.ode.KenCarp4(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(sol.ys[:, 0]), np.sin(np.asarray(ts)), atol=5e-5)
    explicit = sciax.simulate(model, jnp.array([0.0]), ts, method=sciax.ode.Tsit5(), rtol=1e-6, atol=1e-6)
    # Stability, not accuracy, limits the explicit method: |h * 1000| must stay below ~3.5.
    assert int(explicit.stats["num_steps"]) > 1_400
    assert int(sol.stats["num_steps"]) < int(explicit.stats["num_steps"]) / 2


def test_evaluate_outside_the_solved_span_raises_or_gives_nan():
    model = sciax.ode.ODE(lambda t, y, p: -y)
    sol = sciax.simulate(model, jnp.ones(1), jnp.array([0.0, 1.0]), dense=True)
    with pytest.raises(ValueError, match=r"t = 1.5 is outside the solved span \[0, 1\]"):
        sol.evaluate(1.5)
    assert bool(jnp.isnan(sol.evaluate(-0.1, throw=False)[0]))
    np.testing.assert_allclose(float(sol.evaluate(1.0)[0]), np.exp(-1.0), rtol=1e-5)
    with pytest.raises(Exception, match="outside the solved span"):
        jax.block_until_ready(jax.jit(lambda s, t: s.evaluate(t))(sol, 2.0))
