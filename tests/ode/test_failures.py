"""Failed solves: clear errors with throw=True, success=False with throw=False (also under vmap)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

# y' = p y^2, y(0) = 1 blows up at t = 1/p.
BLOWUP = sciax.ode.ODE(lambda t, y, p: p * y**2)
TS = jnp.linspace(0.0, 2.0, 5)


def test_max_steps_raises_with_a_suggestion():
    with pytest.raises(eqx.EquinoxRuntimeError, match="max_steps.*stiff method"):
        sciax.simulate(BLOWUP, jnp.array([1.0]), TS, 1.0)


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


def test_nan_state_with_fixed_steps_is_reported():
    model = sciax.ode.ODE(lambda t, y, p: jnp.where(t > 0.5, jnp.nan, -y))
    with pytest.raises(eqx.EquinoxRuntimeError, match="NaN or inf"):
        sciax.simulate(model, jnp.array([1.0]), TS, method=sciax.ode.Euler(), dt0=0.1)
    sol = sciax.simulate(model, jnp.array([1.0]), TS, method=sciax.ode.Euler(), dt0=0.1, throw=False)
    assert not bool(sol.success)


def test_stiff_problem_with_explicit_method_reports_and_stiff_method_succeeds():
    k = {"k1": 0.04, "k2": 3e7, "k3": 1e4}
    y0 = jnp.array([1.0, 0.0, 0.0])
    ts = jnp.array([0.0, 100.0])
    explicit = sciax.simulate(sciax.ode.robertson(), y0, ts, k, max_steps=2000, throw=False)
    assert not bool(explicit.success)
    stiff = sciax.simulate(sciax.ode.robertson(), y0, ts, k, method=sciax.ode.Kvaerno5(), rtol=1e-6, atol=1e-10)
    assert bool(stiff.success)
