"""Failed solves: clear errors with throw=True, success=False with throw=False (also under vmap)."""

import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

# y' = p y^2, y(0) = 1 blows up at t = 1/p.
BLOWUP = sciax.ode.ODE(lambda t, y, p: p * y**2)
TS = jnp.linspace(0.0, 2.0, 5)


def _first_line(err) -> str:
    return str(err.value).splitlines()[0]


def test_max_steps_reports_budget_time_reached_and_remedy_in_the_first_line():
    decay = sciax.ode.ODE(lambda t, y, p: -y)
    ts = jnp.array([0.0, 10.0])
    with pytest.raises(eqx.EquinoxRuntimeError) as err:
        sciax.simulate(decay, jnp.array([1.0]), ts, max_steps=5, rtol=1e-10, atol=1e-10)
    line = _first_line(err)
    match = re.match(r"sciax\.simulate: reached max_steps=5 at t = (\S+), before t_end = 10: raise max_steps=", line)
    assert match, line
    assert "stiff method" in line
    # throw=False returns the same numbers in stats
    sol = sciax.simulate(decay, jnp.array([1.0]), ts, max_steps=5, rtol=1e-10, atol=1e-10, throw=False)
    assert not bool(sol.success)
    assert int(sol.stats["max_steps"]) == 5 and int(sol.stats["num_steps"]) == 5
    assert 0.0 < float(match.group(1)) < 10.0
    # nothing is re-run without throw: t_reached is the last output time reached
    assert float(sol.stats["t_reached"]) == 0.0
    # the rows reached are the exact solution; the rest are inf
    assert np.isinf(float(sol.ys[-1, 0]))


def test_finite_time_blow_up_is_named_with_its_time():
    # y' = y^2, y(0) = 1 blows up at t = 1: steps shrink there until max_steps runs out.
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"max_steps=4096 at t = 1\.0000.*blow up") as err:
        sciax.simulate(BLOWUP, jnp.array([1.0]), TS, 1.0)
    assert "raising max_steps will not help" in _first_line(err)
    sol = sciax.simulate(BLOWUP, jnp.array([1.0]), TS, 1.0, throw=False)
    np.testing.assert_allclose(float(sol.stats["t_reached"]), 1.0, rtol=1e-4)


def test_success_reports_t_reached_as_the_end_time():
    sol = sciax.simulate(BLOWUP, jnp.array([1.0]), TS, 0.1)
    assert float(sol.stats["t_reached"]) == float(TS[-1])


def test_throw_false_returns_success_false_and_partial_result():
    sol = sciax.simulate(BLOWUP, jnp.array([1.0]), TS, 1.0, throw=False)
    assert not bool(sol.success)
    np.testing.assert_allclose(float(sol.ys[1, 0]), 1.0 / (1.0 - 0.5), rtol=1e-4)  # t = 0.5, before the blow-up
    assert np.all(np.isinf(np.asarray(sol.ys[3:])))


def test_only_failing_members_are_flagged_under_vmap():
    ps = jnp.array([0.1, 1.0, 0.2, 2.0])  # blow-up times 10, 1, 5, 0.5: members 1 and 3 fail before t = 2
    sol = jax.vmap(lambda p: sciax.simulate(BLOWUP, jnp.array([1.0]), TS, p, throw=False))(ps)
    np.testing.assert_array_equal(np.asarray(sol.success), [True, False, True, False])
    np.testing.assert_allclose(np.asarray(sol.ys[0, :, 0]), 1.0 / (1.0 - 0.1 * np.asarray(TS)), rtol=1e-4)
    ds = sol.to_xarray()
    assert ds.attrs["num_failed_members"] == 2
    # each failing member stopped at its own blow-up time 1/p
    np.testing.assert_allclose(np.asarray(sol.stats["t_reached"])[[1, 3]], [1.0, 0.5], rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(sol.stats["t_reached"])[[0, 2]], [2.0, 2.0])


def test_traced_failure_names_the_budget_and_end_time():
    # Under vmap the message is fixed at trace time: it carries what is static and
    # points to stats["t_reached"] for the time reached.
    run = jax.vmap(lambda p: sciax.simulate(BLOWUP, jnp.array([1.0]), TS, p, max_steps=300).ys)
    with pytest.raises(Exception, match=r"max_steps=300 before t_end = 2 \(sol\.stats\['t_reached'\]"):
        jax.block_until_ready(run(jnp.array([0.1, 2.0])))


def test_nan_state_with_fixed_steps_is_reported():
    model = sciax.ode.ODE(lambda t, y, p: jnp.where(t > 0.5, jnp.nan, -y))
    # the first output time after the state turned NaN (t > 0.5) is t = 1
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"state became NaN or inf \(first at y\[0\]\) by t = 1 "):
        sciax.simulate(model, jnp.array([1.0]), TS, method=sciax.ode.Euler(), dt0=0.1)
    sol = sciax.simulate(model, jnp.array([1.0]), TS, method=sciax.ode.Euler(), dt0=0.1, throw=False)
    assert not bool(sol.success)


def test_stiff_problem_with_explicit_method_reports_and_stiff_method_succeeds():
    k = {"k1": 0.04, "k2": 3e7, "k3": 1e4}
    y0 = jnp.array([1.0, 0.0, 0.0])
    ts = jnp.array([0.0, 100.0])
    explicit = sciax.simulate(sciax.ode.robertson(), y0, ts, k, max_steps=2000, throw=False)
    assert not bool(explicit.success)
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"^sciax.simulate: reached max_steps=2000 at t = .*stiff method"):
        sciax.simulate(sciax.ode.robertson(), y0, ts, k, max_steps=2000)
    stiff = sciax.simulate(sciax.ode.robertson(), y0, ts, k, method=sciax.ode.Kvaerno5(), rtol=1e-6, atol=1e-10)
    assert bool(stiff.success)
