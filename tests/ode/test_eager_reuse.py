"""An un-jitted `simulate` compiles a solver's loop once: calling it again with the same model,
method, options and shapes, but new values of `y0` and `params` (a parameter sweep in a Python
loop), runs the compiled program again, as diffrax's `diffeqsolve` does. Checked for the methods
that run their own loops: `BDF`, `MethodOfSteps` and `simulate_ensemble`'s kernel and shared-step
paths, by counting XLA backend compilations; and Python floats in `params` (`Tsit5`, `BDF`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import ode

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_events = []


def _record(event, *args, **kwargs):
    if event == _COMPILE_EVENT:
        _events.append(event)


jax.monitoring.register_event_duration_secs_listener(_record)

_VDP = ode.van_der_pol()
_TS = jnp.linspace(0.0, 1.0, 4)
_DDE = ode.DDE(
    lambda t, y, yd, p: -p["a"] * yd[0],
    lambda t, y, p: jnp.array([1.0]),
    lambda t, p: jnp.ones(1),
)


def _bdf(mu):
    return sciax.simulate(_VDP, jnp.array([2.0, 0.0]), _TS, {"mu": mu}, method=ode.BDF())


def _python_numbers(method):
    # Python floats in params are inputs of the compiled solve too, not constants baked into it.
    def run(mu):
        return sciax.simulate(_VDP, jnp.array([2.0, 0.0]), _TS, {"mu": float(mu)}, method=method)

    return run


def _delay(a):
    return sciax.simulate(_DDE, jnp.ones(1), _TS, {"a": a}, method=ode.MethodOfSteps())


def _ensemble(path, method):
    def run(mu):
        y0 = jnp.tile(jnp.array([2.0, 0.0]), (3, 1))
        return ode.simulate_ensemble(_VDP, y0, _TS, {"mu": mu * jnp.arange(1.0, 4.0)}, method=method, path=path)

    return run


_CASES = {
    "BDF": _bdf,
    "MethodOfSteps": _delay,
    "kernel": _ensemble("kernel", ode.Tsit5()),
    "shared_step": _ensemble("shared_step", ode.BDF()),
    "Tsit5 with a Python float": _python_numbers(ode.Tsit5()),
    "BDF with a Python float": _python_numbers(ode.BDF()),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_second_eager_call_compiles_nothing(case):
    run = _CASES[case]
    first = run(jnp.asarray(1.0))
    _events.clear()
    second = run(jnp.asarray(1.5))
    jax.block_until_ready(second.ys)
    assert _events == [], f"{case}: the second call compiled {len(_events)} programs"
    # The same compiled program on new values: a new solution, not the first one again.
    assert not np.allclose(np.asarray(first.ys), np.asarray(second.ys))
    np.testing.assert_allclose(np.asarray(second.ys)[..., 0, :], np.asarray(first.ys)[..., 0, :])


def test_the_compile_counter_sees_a_compilation():
    # Without this, a renamed monitoring event would leave the test above passing vacuously.
    _events.clear()
    jax.block_until_ready(jax.jit(lambda x: 3.0 * x + 1.0)(jnp.ones(7)))
    assert len(_events) >= 1
