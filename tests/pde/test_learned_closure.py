"""`learned.SpectralCorrected`: a learned correction inside a spectral model, stepped by ETDRK4/CNAB2.

References: the same right-hand side integrated by the method of lines (`Corrected` under
Tsit5 at tight tolerance: a different integrator and a different code path for the correction),
the exact solution of the heat equation with a linear damping closure, a known closure recovered
by training, and finite differences for the gradients (float64).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import sciax
from sciax import pde
from sciax.pde import learned, spectral

from ._exact import burgers_cole_hopf

NU = 0.1
GRID = pde.Grid(32, 2 * np.pi)
(X,) = GRID.coords()
BURGERS = spectral.burgers(GRID)
U0 = jnp.asarray(burgers_cole_hopf(X, 0.0, NU))
TS = jnp.array([0.0, 1.0])


class _Closure(eqx.Module):
    """A damping, a centred difference and a quadratic term: a small nonlinear, periodic closure."""

    w: jax.Array

    def __call__(self, u):
        return self.w[0] * u + self.w[1] * (jnp.roll(u, -1) - jnp.roll(u, 1)) + self.w[2] * u**2


NET = _Closure(jnp.array([-0.2, 0.3, 0.1]))
HYBRID = learned.SpectralCorrected(BURGERS, NET)


def _method_of_lines():
    model = learned.Corrected(BURGERS, NET)
    return sciax.simulate(model, U0, TS, {"nu": NU}, method=sciax.ode.Tsit5(), rtol=1e-12, atol=1e-12).ys[-1]


REFERENCE = _method_of_lines()


@pytest.mark.parametrize("cls, order, dts", [(pde.ETDRK4, 4, (0.1, 0.05, 0.025)), (pde.CNAB2, 2, (0.02, 0.01, 0.005))])
def test_spectral_steppers_converge_to_the_method_of_lines_run(cls, order, dts):
    errors = []
    for dt in dts:
        ys = sciax.simulate(HYBRID, U0, TS, {"nu": NU}, method=cls(dt=dt)).ys
        errors.append(float(jnp.max(jnp.abs(ys[-1] - REFERENCE))))
    errors = np.array(errors)
    observed = np.log2(errors[:-1] / errors[1:])
    assert np.all(np.abs(observed - order) < 0.3), (errors, observed)
    # the correction is really there: without it the run ends far from the reference
    plain = sciax.simulate(BURGERS, U0, TS, {"nu": NU}, method=cls(dt=dts[-1])).ys[-1]
    assert float(jnp.max(jnp.abs(plain - REFERENCE))) > 1e3 * errors[-1]


def test_rhs_equals_corrected_rhs():
    # the base class's method-of-lines rhs goes through the spectral nonlinear term
    spectral_rhs = HYBRID.rhs(0.3, U0, {"nu": NU})
    physical_rhs = learned.Corrected(BURGERS, NET).rhs(0.3, U0, {"nu": NU})
    np.testing.assert_allclose(np.asarray(spectral_rhs), np.asarray(physical_rhs), rtol=0, atol=1e-14)


def test_linear_damping_closure_matches_the_exact_solution():
    # u_t = nu u_xx - a u from cos(3x): exp(-(9 nu + a) t) cos(3x). The damping is in N, stepped
    # explicitly by ETDRK4; at dt = 0.05 its error is a few 1e-9 (it is O(dt^4)).
    model = learned.SpectralCorrected(spectral.heat(GRID), _Closure(jnp.array([-0.7, 0.0, 0.0])))
    u0 = jnp.asarray(np.cos(3 * X))
    exact = np.exp(-(9 * NU + 0.7)) * np.cos(3 * X)
    errors = [
        np.abs(np.asarray(sciax.simulate(model, u0, TS, {"nu": NU}, method=pde.ETDRK4(dt=dt)).ys[-1]) - exact).max()
        for dt in (0.1, 0.05)
    ]
    assert errors[1] < 1e-8 and abs(np.log2(errors[0] / errors[1]) - 4) < 0.3, errors


def _final(w, nu, u0=U0):
    model = learned.SpectralCorrected(BURGERS, _Closure(w))
    return sciax.simulate(model, u0, np.array([0.0, 0.5]), {"nu": nu}, method=pde.ETDRK4(dt=0.05)).ys[-1]


def test_gradient_in_weights_and_params_vs_finite_differences():
    target = jnp.asarray(np.sin(X))

    def loss(w, nu):
        return jnp.sum((_final(w, nu) - target) ** 2)

    w, nu = NET.w, jnp.asarray(NU)
    gw, gnu = jax.grad(loss, argnums=(0, 1))(w, nu)
    dw, dnu, h = jnp.array([0.3, -0.5, 0.8]), 0.4, 1e-6
    fd = (loss(w + h * dw, nu + h * dnu) - loss(w - h * dw, nu - h * dnu)) / (2 * h)
    np.testing.assert_allclose(float(gw @ dw + gnu * dnu), float(fd), rtol=1e-6)
    tangent = jax.jvp(loss, (w, nu), (dw, jnp.asarray(dnu)))[1]
    np.testing.assert_allclose(float(tangent), float(fd), rtol=1e-6)


def test_jit_and_vmap_over_initial_conditions_and_params():
    u0s = jnp.stack([U0, 0.5 * U0, jnp.asarray(np.sin(2 * X))])
    nus = jnp.array([0.05, 0.1, 0.2])
    run = jax.jit(lambda u0, nu: _final(NET.w, nu, u0))
    batched = jax.vmap(run)(u0s, nus)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(_final(NET.w, nus[i], u0s[i])), atol=1e-13)


def test_training_recovers_a_known_closure():
    # Data from the heat equation with damping 0.5 in its linear symbol (stepped exactly); the model
    # is the undamped heat equation plus a learned damping w u, trained through ETDRK4 from w = 0.
    heat = spectral.heat(GRID)
    truth = pde.SemilinearPDE(GRID, lambda k, p: -p["nu"] * k[0] ** 2 - 0.5)
    ts = jnp.linspace(0.0, 0.5, 6)
    u0s = jnp.stack([jnp.asarray(np.cos(m * X) + 0.3 * np.sin((m + 1) * X)) for m in (1, 2)])
    references = jax.vmap(lambda u0: sciax.simulate(truth, u0, ts, {"nu": NU}, method=pde.ETDRK4(dt=0.1)).ys)(u0s)
    model = learned.SpectralCorrected(heat, _Closure(jnp.zeros(3)))
    params = {"nu": jnp.full(2, NU)}

    def loss(model):
        return learned.unrolled_loss(model, references, ts, params, method=pde.ETDRK4(dt=0.05))

    spec = learned.corrected_spec(model)
    assert not any(jax.tree_util.tree_leaves(spec.model)) and spec.net.w is True
    before = float(loss(model))
    trained, losses = learned.train(model, loss, optax.adam(0.05), 300, filter_spec=spec, progress=False)
    assert float(loss(trained)) < 1e-6 * before, (before, losses[-5:])
    np.testing.assert_allclose(np.asarray(trained.net.w), [-0.5, 0.0, 0.0], atol=2e-3)


def test_bad_input():
    with pytest.raises(TypeError, match="ETDRK4 integrates a sciax.pde.SemilinearPDE.*SpectralCorrected"):
        sciax.simulate(learned.Corrected(BURGERS, NET), U0, TS, {"nu": NU}, method=pde.ETDRK4(dt=0.1))
    ode = sciax.ode.ODE(lambda t, y, p: -y)
    with pytest.raises(TypeError, match="SpectralCorrected: model must be a sciax.pde.SemilinearPDE.*got ODE"):
        learned.SpectralCorrected(ode, NET)
    with pytest.raises(TypeError, match="net must be a callable module"):
        learned.SpectralCorrected(BURGERS, 3.0)
    with pytest.raises(ValueError, match=r"SpectralCorrected: net must return the state's shape \(32,\), got \(16,\)"):
        sciax.simulate(
            learned.SpectralCorrected(BURGERS, lambda u: u[:16]), U0, TS, {"nu": NU}, method=pde.ETDRK4(dt=0.1)
        )
    references = jnp.zeros((1, 2, 32))
    with pytest.raises(ValueError, match="give dt or method, not both"):
        learned.unrolled_loss(HYBRID, references, TS, None, dt=0.1, method=pde.ETDRK4(dt=0.1))
    with pytest.raises(ValueError, match="give dt .* or method"):
        learned.unrolled_loss(HYBRID, references, TS, None)
