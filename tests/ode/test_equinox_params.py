"""params may hold equinox modules (a neural network inside the vector field): a UDE's setup."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import sciax

NET = eqx.nn.MLP(2, 2, 8, 1, activation=jnp.tanh, key=jax.random.PRNGKey(0))
MODEL = sciax.ode.ODE(lambda t, y, p: -p["rate"] * y + p["net"](y))
TS = jnp.linspace(0.0, 1.0, 5)
Y0 = jnp.array([1.0, -0.5])


def _loss(net, rate=0.3):
    sol = sciax.simulate(MODEL, Y0, TS, {"net": net, "rate": rate}, rtol=1e-10, atol=1e-10)
    return jnp.sum(sol.ys[-1] ** 2)


def test_module_params_simulate_and_match_hand_written_rhs():
    # The network (weights plus its activation function) goes in as params unchanged.
    plain = sciax.ode.ODE(lambda t, y, p: -0.3 * y + NET(y))
    a = sciax.simulate(MODEL, Y0, TS, {"net": NET, "rate": 0.3}, rtol=1e-10, atol=1e-10).ys
    b = sciax.simulate(plain, Y0, TS, None, rtol=1e-10, atol=1e-10).ys
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-14)


def test_grad_wrt_network_weights_matches_finite_differences():
    grads = eqx.filter_grad(_loss)(NET)
    weight = NET.layers[0].weight
    h = 1e-6
    for index in [(0, 0), (3, 1), (7, 0)]:

        def bump(d, index=index):
            return eqx.tree_at(lambda n: n.layers[0].weight, NET, weight.at[index].add(d))

        fd = (_loss(bump(h)) - _loss(bump(-h))) / (2 * h)
        np.testing.assert_allclose(float(grads.layers[0].weight[index]), float(fd), rtol=1e-6, atol=1e-9)
