"""Bad input: a clear exception at trace time naming the argument, the expectation and the value."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

MODEL = sciax.ode.ODE(lambda t, y, p: -y)
TS = jnp.linspace(0.0, 1.0, 3)
Y0 = jnp.array([1.0])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(y0=jnp.array([1, 2])), TypeError, r"y0 must be floating point .* got dtype int"),
        (dict(y0={"a": jnp.array([1.0]), "b": "x"}), TypeError, r"y0\['b'\] must be an array, got str"),
        (dict(ts=jnp.zeros((2, 2))), ValueError, r"ts must be 1-D, got shape \(2, 2\)"),
        (dict(ts=jnp.array([0.0])), ValueError, r"ts needs at least 2 points"),
        (dict(ts=jnp.array([0.0, 1.0, 1.0])), ValueError, r"strictly increasing, but ts\[1\]=1.0 >= ts\[2\]=1.0"),
        (dict(ts=jnp.array([0.0, 2.0, 1.0])), ValueError, r"strictly increasing"),
        (dict(params={"k": "fast"}), TypeError, r"params\['k'\] must be an array or a number.*got str"),
        (dict(method="tsit5"), TypeError, r"unknown method 'tsit5'.*sciax.ode.Tsit5\(\)"),
        (dict(method=sciax.ode.Tsit5), TypeError, r"method=Tsit5\(\)"),
        (dict(rtol=0.0), ValueError, r"rtol must be > 0, got 0.0"),
        (dict(atol=-1e-6), ValueError, r"atol must be > 0"),
        (dict(dt0=-0.1), ValueError, r"dt0 must be > 0"),
        (dict(rtoll=1e-6), TypeError, r"unknown option\(s\) 'rtoll' for method Tsit5; it accepts: rtol"),
        (dict(method=sciax.ode.Euler()), ValueError, r"Euler takes fixed steps; pass the step size as dt0="),
        (dict(method=sciax.ode.RK4(), adaptive=True), ValueError, r"RK4 has no error estimate"),
        (dict(max_steps=0), ValueError, r"max_steps must be a positive integer, got 0"),
        (dict(event="y<0"), TypeError, r"event must be a function"),
        (dict(model=lambda t, y, p: -y), TypeError, r"model must be a sciax.AbstractModel"),
    ],
)
def test_bad_input(kwargs, error, match):
    args = dict(model=MODEL, y0=Y0, ts=TS, params=None)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        sciax.simulate(args.pop("model"), args.pop("y0"), args.pop("ts"), args.pop("params"), **args)


def test_vector_field_with_wrong_shape_names_the_leaf():
    model = sciax.ode.ODE(lambda t, y, p: {"a": -y["a"], "b": jnp.zeros(3)})
    y0 = {"a": jnp.ones(2), "b": jnp.ones(2)}
    with pytest.raises(ValueError, match=r"returned shape \(3,\) for y0\['b'\], which has shape \(2,\)"):
        sciax.simulate(model, y0, TS)


def test_vector_field_with_wrong_structure():
    model = sciax.ode.ODE(lambda t, y, p: (-y[0],))
    with pytest.raises(ValueError, match="returned a pytree of structure"):
        sciax.simulate(model, (jnp.ones(2), jnp.ones(2)), TS)


def test_ode_constructor_errors():
    with pytest.raises(ValueError, match="explicit= and implicit="):
        sciax.ode.ODE(explicit=lambda t, y, p: y)
    with pytest.raises(TypeError, match="vector_field must be callable"):
        sciax.ode.ODE(3.0)
    with pytest.raises(ValueError, match="names must be distinct"):
        sciax.ode.ODE(lambda t, y, p: y, names=("a", "a"))


def test_numpy_inputs_and_python_floats_are_accepted():
    sol = sciax.simulate(MODEL, np.array([1.0]), np.linspace(0.0, 1.0, 3), 1.0)
    np.testing.assert_allclose(float(sol.ys[-1, 0]), np.exp(-1.0), rtol=1e-5)


def test_traced_ts_is_checked_at_run_time():
    run = jax.jit(lambda ts: sciax.simulate(MODEL, Y0, ts).ys)
    np.testing.assert_allclose(float(run(TS)[-1, 0]), np.exp(-1.0), rtol=1e-5)
    # Raised inside compiled code: JAX may wrap equinox's error in a ValueError.
    with pytest.raises((eqx.EquinoxRuntimeError, ValueError), match="ts must be strictly increasing"):
        run(jnp.array([0.0, 1.0, 0.5]))
