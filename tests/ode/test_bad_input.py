"""Bad input: a clear exception at trace time naming the argument, the expectation and the value."""

import re

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


# --- non-finite initial states and right-hand sides ---


@pytest.mark.parametrize(
    "y0, match",
    [
        (jnp.array([1.0, jnp.nan]), r"y0\[1\] is nan; the initial state must be finite"),
        (np.array([[1.0, 2.0], [np.inf, 0.0]]), r"y0\[1, 0\] is inf"),
        ({"a": jnp.ones(2), "b": jnp.array([0.0, -jnp.inf])}, r"y0\['b'\]\[1\] is -inf"),
        (float("nan"), r"y0 is nan"),
    ],
    ids=["vector", "matrix", "dict", "scalar"],
)
def test_non_finite_y0_is_refused_naming_the_component(y0, match):
    model = sciax.ode.ODE(lambda t, y, p: jax.tree_util.tree_map(lambda v: -v, y))
    with pytest.raises(ValueError, match=match):
        sciax.simulate(model, y0, TS)
    with pytest.raises(ValueError, match=match):  # bad input, whatever throw= says
        sciax.simulate(model, y0, TS, throw=False)


def test_non_finite_y0_under_jit_and_vmap():
    run = jax.jit(lambda y0: sciax.simulate(MODEL, y0, TS).ys)
    with pytest.raises(Exception, match=r"y0 contains NaN or inf"):
        jax.block_until_ready(run(jnp.array([jnp.nan])))
    # with throw=False only the bad member fails
    y0s = jnp.array([[1.0], [jnp.nan], [2.0]])
    sol = jax.vmap(lambda y0: sciax.simulate(MODEL, y0, TS, throw=False))(y0s)
    np.testing.assert_array_equal(np.asarray(sol.success), [True, False, True])
    np.testing.assert_allclose(np.asarray(sol.ys[[0, 2], -1, 0]), [np.exp(-1.0), 2 * np.exp(-1.0)], rtol=1e-5)


NAN_AFTER_HALF = sciax.ode.ODE(lambda t, y, p: jnp.where(t > 0.5, jnp.nan, -y))


@pytest.mark.parametrize("method", [sciax.ode.Tsit5(), sciax.ode.Kvaerno5(), sciax.ode.Rodas5P()], ids=str)
def test_nan_right_hand_side_is_reported_as_such_not_as_max_steps(method):
    # The adaptive controller rejects NaN steps and shrinks the step: without the
    # diagnosis this read "reached max_steps ... raise max_steps".
    ts = jnp.array([0.0, 2.0])
    with pytest.raises(eqx.EquinoxRuntimeError) as err:
        sciax.simulate(NAN_AFTER_HALF, jnp.array([1.0]), ts, method=method)
    line = str(err.value).splitlines()[0]
    assert re.search(r"right-hand side returned NaN or inf \(first at y\[0\]\) at t = 0\.5", line), line
    assert "Raising max_steps will not help" in line and "raise max_steps=" not in line
    sol = sciax.simulate(NAN_AFTER_HALF, jnp.array([1.0]), ts, method=method, throw=False)
    assert not bool(sol.success)
    # Without throw nothing is re-run: t_reached is the last output time reached (0),
    # except for Rosenbrock methods, which always save where they stopped.
    expected = 0.5 if isinstance(method, sciax.ode.Rodas5P) else 0.0
    np.testing.assert_allclose(float(sol.stats["t_reached"]), expected, atol=1e-8)


def test_nan_from_the_state_names_the_component_and_time():
    # u' = -sqrt(u) - 1, u(0) = 1 reaches u = 0 at t = 2 - 2 ln 2; beyond, sqrt(u < 0) is NaN.
    model = sciax.ode.ODE(
        lambda t, y, p: {"a": -y["a"], "u": -jnp.sqrt(y["u"]) - 1.0},
    )
    y0 = {"a": jnp.ones(2), "u": jnp.array([5.0, 1.0])}
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"NaN or inf \(first at y\['u'\]\[1\]\) at t = (\S+),") as err:
        sciax.simulate(model, y0, jnp.array([0.0, 2.0]))
    t_bad = float(re.search(r"at t = (\S+),", str(err.value)).group(1))
    np.testing.assert_allclose(t_bad, 2 - 2 * np.log(2.0), rtol=1e-6)


def test_nan_right_hand_side_under_jit_gets_the_static_message():
    # NumPy output times stay concrete under jit, so the message can name t_end. Locating
    # the NaN would cost every traced solve a saved final state: the message says how.
    run = jax.jit(lambda y0: sciax.simulate(NAN_AFTER_HALF, y0, np.array([0.0, 2.0])).ys)
    with pytest.raises(Exception, match=r"max_steps=4096 before t_end = 2.*NaN/inf.*outside jax.jit/vmap/grad"):
        jax.block_until_ready(run(jnp.array([1.0])))


# --- complex states ---


def test_complex_y0_is_refused():
    # Solving it silently as a complex ODE was the old behaviour; diffrax's complex support is experimental.
    with pytest.raises(TypeError, match=r"y0 has complex dtype complex128, but states must be real"):
        sciax.simulate(MODEL, jnp.array([1.0 + 1.0j]), TS)
    with pytest.raises(TypeError, match=r"y0\['b'\] has complex dtype"):
        sciax.simulate(sciax.ode.ODE(lambda t, y, p: y), {"a": jnp.ones(1), "b": jnp.ones(1, complex)}, TS)


# --- declared params (catalogue models and ODE(param_shapes=...)) ---

LV_P = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}


@pytest.mark.parametrize(
    "params, error, match",
    [
        (
            None,
            TypeError,
            r"lotka_volterra\(\) expects params = a dict of scalars 'alpha', 'beta', 'gamma', 'delta', got None",
        ),
        ({k: v for k, v in LV_P.items() if k != "delta"}, ValueError, r"lotka_volterra\(\): params is missing 'delta'"),
        ({**LV_P, "gama": 0.8}, ValueError, r"params has unexpected 'gama', which the model would ignore"),
        ({**LV_P, "alpha": jnp.ones(2)}, ValueError, r"params\['alpha'\] has shape \(2,\), expected \(\) \(a scalar\)"),
        ({**LV_P, "beta": {"x": 1.0}}, ValueError, r"params\['beta'\] is not an array but a dict"),
        (jnp.ones(4), TypeError, r"expects params = a dict of scalars .* got ArrayImpl"),
    ],
    ids=["none", "missing", "extra", "shape", "nested", "array"],
)
def test_catalogue_params_are_checked_by_name_and_shape(params, error, match):
    with pytest.raises(error, match=match):
        sciax.simulate(sciax.ode.lotka_volterra(), jnp.array([30.0, 4.0]), TS, params)


@pytest.mark.parametrize(
    "model, params, match",
    [
        (sciax.ode.robertson(), {"k1": 0.04, "k2": 3e7}, r"robertson\(\): params is missing 'k3'"),
        (sciax.ode.van_der_pol(), None, r"van_der_pol\(\) expects params = a dict of scalars 'mu'"),
        (sciax.ode.lorenz(), {"sigma": 10.0, "rho": 28.0}, r"lorenz\(\): params is missing 'beta'"),
        (
            sciax.ode.sir(),
            {"beta": 0.5, "gama": 0.2},
            r"sir\(\): params is missing 'gamma'; params has unexpected 'gama'",
        ),
        (sciax.ode.seir(), {"beta": 0.5, "gamma": 0.2}, r"seir\(\): params is missing 'sigma'"),
        (sciax.ode.hires(), {"k": 1.0}, r"hires\(\) takes no params \(pass params=None\)"),
        (sciax.ode.pollu(), jnp.ones(24), r"pollu\(\) expects params = one array of shape \(25,\), got shape \(24,\)"),
        (sciax.ode.pollu(), {"k": jnp.ones(25)}, r"pollu\(\) expects params = one array of shape \(25,\), got \{'k'"),
    ],
    ids=["robertson", "van_der_pol", "lorenz", "sir", "seir", "hires", "pollu-shape", "pollu-dict"],
)
def test_every_catalogue_model_declares_its_params(model, params, match):
    y0 = jnp.ones(len(model.labels().names))
    with pytest.raises((TypeError, ValueError), match=match):
        sciax.simulate(model, y0, TS, params)


def test_declared_params_still_batch_under_vmap():
    alphas = jnp.array([0.5, 0.6])
    sol = jax.vmap(
        lambda a: sciax.simulate(sciax.ode.lotka_volterra(), jnp.array([30.0, 4.0]), TS, {**LV_P, "alpha": a})
    )(alphas)
    assert sol.ys.shape == (2, 3, 2) and bool(jnp.all(sol.success))


def test_user_ode_declares_params():
    model = sciax.ode.ODE(lambda t, y, p: -p["k"] * y + p["b"], param_shapes={"k": (), "b": (None,)})
    sol = sciax.simulate(model, jnp.ones(3), TS, {"k": 1.0, "b": jnp.zeros(3)})
    np.testing.assert_allclose(np.asarray(sol.ys[-1]), np.exp(-1.0), rtol=1e-5)
    with pytest.raises(ValueError, match=r"ODE: params\['b'\] has shape \(\), expected \(any,\)"):
        sciax.simulate(model, jnp.ones(3), TS, {"k": 1.0, "b": 0.0})
    no_params = sciax.ode.ODE(lambda t, y, p: -y, param_shapes={})
    sciax.simulate(no_params, jnp.ones(1), TS, {})
    with pytest.raises(TypeError, match=r"ODE takes no params"):
        sciax.simulate(no_params, jnp.ones(1), TS, 1.0)
    with pytest.raises(TypeError, match=r"param_shapes\['k'\] must be a shape"):
        sciax.ode.ODE(lambda t, y, p: y, param_shapes={"k": "scalar"})
    with pytest.raises(TypeError, match=r"param_shapes must map parameter names"):
        sciax.ode.ODE(lambda t, y, p: y, param_shapes={1: ()})


def test_vector_field_is_checked_once_per_model_and_input_shapes():
    """`simulate` traces the vector field for its structure check once per model object and shapes of
    `(t0, y0, params)`, not at every call (18 of the 23 ms of a short ElasticWave run); a new shape is
    checked again."""
    traced = []

    def f(t, y, p):
        traced.append(jnp.shape(y))
        return -p * jnp.zeros(2)

    model = sciax.ode.ODE(f)
    sciax.simulate(model, jnp.ones(2), TS, 1.0)
    before = len(traced)
    sol = sciax.simulate(model, jnp.array([3.0, 3.0]), TS, 2.0)
    assert len(traced) == before  # neither the check nor the compiled run traced it again
    np.testing.assert_allclose(np.asarray(sol.ys[-1]), [3.0, 3.0])
    with pytest.raises(ValueError, match=r"returned shape \(2,\) for y0, which has shape \(3,\)"):
        sciax.simulate(model, jnp.ones(3), TS, 1.0)


def test_vector_field_checks_are_forgotten_with_their_model():
    import gc

    from sciax import _checks

    sciax.simulate(sciax.ode.ODE(lambda t, y, p: -y), Y0, TS)
    gc.collect()
    held = len(_checks._RHS_PASSED)
    for _ in range(5):
        sciax.simulate(sciax.ode.ODE(lambda t, y, p: -y), Y0, TS)
    gc.collect()
    assert len(_checks._RHS_PASSED) <= held
