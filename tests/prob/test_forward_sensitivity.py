"""SimulationModel gradients by forward sensitivities equal reverse mode and finite differences."""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from numpyro.infer.util import log_density

import sciax

OBS = np.stack([sciax.prob.load_lynx_hare()["hare"].values, sciax.prob.load_lynx_hare()["lynx"].values], -1)
VALUES = {
    "alpha": 0.55,
    "beta": 0.028,
    "gamma": 0.8,
    "delta": 0.024,
    "y0": jnp.array([30.0, 4.0]),
    "sigma": jnp.array([0.25, 0.25]),
}


def _model(**kwargs):
    return sciax.prob.SimulationModel(
        sciax.ode.lotka_volterra(),
        jnp.arange(21.0),
        priors={k: dist.LogNormal(0.0, 1.0) for k in ("alpha", "beta", "gamma", "delta")},
        y0=dist.LogNormal(jnp.log(10.0), 1.0).expand([2]).to_event(1),
        likelihood=sciax.prob.LogNormalLikelihood(dist.LogNormal(-1.0, 1.0)),
        rtol=1e-10,
        atol=1e-10,
        **kwargs,
    )


def _value_and_grad(model, values):
    return jax.jit(jax.value_and_grad(lambda v: log_density(model, (OBS,), {}, v)[0]))(values)


def test_auto_picks_forward_for_few_parameters_and_reverse_with_an_adjoint():
    assert _model().sensitivity == "forward"
    assert _model(adjoint=sciax.ode.BacksolveAdjoint()).sensitivity == "reverse"


def test_forward_gradient_equals_reverse_and_finite_differences():
    value_f, grad_f = _value_and_grad(_model(sensitivity="forward"), VALUES)
    value_r, grad_r = _value_and_grad(_model(sensitivity="reverse"), VALUES)
    assert float(value_f) == pytest.approx(float(value_r), rel=1e-14)
    for name in VALUES:
        np.testing.assert_allclose(np.asarray(grad_f[name]), np.asarray(grad_r[name]), rtol=1e-7)
    model = _model(sensitivity="forward")
    h = 1e-7
    f = lambda v: float(log_density(model, (OBS,), {}, v)[0])  # noqa: E731
    fd = (f(dict(VALUES, beta=VALUES["beta"] + h)) - f(dict(VALUES, beta=VALUES["beta"] - h))) / (2 * h)
    assert float(grad_f["beta"]) == pytest.approx(fd, rel=1e-5)


def test_forward_gradient_under_vmap_over_chains():
    model = _model(sensitivity="forward")
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([jnp.asarray(x), 1.1 * jnp.asarray(x)]), VALUES)
    grads = jax.vmap(jax.grad(lambda v: log_density(model, (OBS,), {}, v)[0]))(batch)
    second = jax.tree_util.tree_map(lambda x: x[1], batch)
    _, expected = _value_and_grad(_model(sensitivity="reverse"), second)
    np.testing.assert_allclose(np.asarray(grads["alpha"][1]), np.asarray(expected["alpha"]), rtol=1e-7)


def test_bad_sensitivity_options():
    with pytest.raises(ValueError, match="sensitivity must be"):
        _model(sensitivity="adjoint")
    with pytest.raises(ValueError, match="drop adjoint="):
        _model(sensitivity="forward", adjoint=sciax.ode.BacksolveAdjoint())
