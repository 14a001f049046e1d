"""DETEST class A (Hull, Enright, Fellen & Sedgwick 1972) against the closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

TS = jnp.linspace(0.0, 20.0, 41)

DETEST_A = {
    "A1": (lambda t, y, p: -y, lambda t: np.exp(-t)),
    "A2": (lambda t, y, p: -0.5 * y**3, lambda t: 1.0 / np.sqrt(t + 1.0)),
    "A3": (lambda t, y, p: y * jnp.cos(t), lambda t: np.exp(np.sin(t))),
    "A4": (lambda t, y, p: 0.25 * y * (1.0 - y / 20.0), lambda t: 20.0 / (1.0 + 19.0 * np.exp(-t / 4.0))),
}


@pytest.mark.parametrize("problem", sorted(DETEST_A))
@pytest.mark.parametrize("method", [sciax.ode.Tsit5(), sciax.ode.Dopri8(), sciax.ode.Kvaerno5()], ids=type)
def test_detest_a(problem, method):
    f, exact = DETEST_A[problem]
    sol = sciax.simulate(
        sciax.ode.ODE(f), jnp.array([1.0]), TS, method=method, rtol=1e-10, atol=1e-12, max_steps=20_000
    )
    assert bool(sol.success)
    reference = exact(np.asarray(TS))
    np.testing.assert_allclose(np.asarray(sol.ys[:, 0]), reference, rtol=1e-7, atol=1e-9)
    assert int(sol.stats["num_accepted_steps"]) > 5  # the tolerance was honoured by real steps


def test_default_method_is_tsit5_and_jittable():
    f, exact = DETEST_A["A1"]
    model = sciax.ode.ODE(f)
    assert isinstance(model.default_method(), sciax.ode.Tsit5)
    ys = jax.jit(lambda y0: sciax.simulate(model, y0, TS, rtol=1e-10, atol=1e-12).ys)(jnp.array([1.0]))
    np.testing.assert_allclose(np.asarray(ys[:, 0]), exact(np.asarray(TS)), rtol=1e-7, atol=1e-12)
