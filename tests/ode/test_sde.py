"""SDEs: Ornstein–Uhlenbeck moments, GBM strong orders, reproducibility, ensembles, bad input.

References are closed forms: OU mean/variance, and the exact GBM solution on the
very Brownian path the solver used (recorded by a second state component dZ = dW).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax

OU_P = {"theta": 1.0, "mu": 0.5, "sigma": 0.3}
OU = sciax.ode.SDE(
    lambda t, y, p: p["theta"] * (p["mu"] - y),
    lambda t, y, p: p["sigma"] * jnp.ones_like(y),
    additive=True,
)
TS = jnp.linspace(0.0, 2.0, 5)
Y0 = jnp.array([2.0])
N_PATHS = 2000


@pytest.fixture(scope="module")
def ou_ensemble():
    keys = jax.random.split(jax.random.key(0), N_PATHS)
    return jax.vmap(lambda k: sciax.simulate(OU, Y0, TS, OU_P, key=k, dt0=0.01))(keys)


def test_ornstein_uhlenbeck_mean_and_variance(ou_ensemble):
    t = np.asarray(TS)
    th, mu, sig = OU_P["theta"], OU_P["mu"], OU_P["sigma"]
    mean = mu + (2.0 - mu) * np.exp(-th * t)
    var = sig**2 / (2 * th) * (1 - np.exp(-2 * th * t))
    ys = np.asarray(ou_ensemble.ys[:, :, 0])
    # 4 standard errors of the Monte Carlo estimates (plus the O(dt) bias of Euler–Maruyama).
    se_mean = np.sqrt(var / N_PATHS)
    assert np.all(np.abs(ys.mean(0) - mean) <= 4 * se_mean + 2e-3)
    se_var = var * np.sqrt(2 / (N_PATHS - 1))
    assert np.all(np.abs(ys.var(0, ddof=1) - var) <= 4 * se_var + 2e-3)


def test_ensemble_stats_to_xarray(ou_ensemble):
    stats = sciax.ode.ensemble_stats(ou_ensemble, quantiles=(0.1, 0.5, 0.9))
    assert stats.attrs["num_members"] == N_PATHS
    assert stats["y_quantile"].dims == ("quantile", "time", "state")
    np.testing.assert_allclose(stats["y_mean"].values[:, 0], np.asarray(ou_ensemble.ys[:, :, 0]).mean(0))
    q = stats["y_quantile"].sel(time=2.0).values[:, 0]
    assert q[0] < q[1] < q[2]
    with pytest.raises(ValueError, match="member"):
        sciax.ode.ensemble_stats(sciax.simulate(OU, Y0, TS, OU_P, key=jax.random.key(0), dt0=0.01))


def test_same_key_same_path_and_different_keys_differ():
    run = lambda k: sciax.simulate(OU, Y0, TS, OU_P, key=k, dt0=0.01).ys  # noqa: E731
    a, b, c = run(jax.random.key(7)), run(jax.random.key(7)), run(jax.random.key(8))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert not np.allclose(np.asarray(a), np.asarray(c))
    # Old-style uint32 keys work too.
    run(jax.random.PRNGKey(7))


# Geometric Brownian motion dX = mu X dt + s X dW, with Z = W recorded alongside on the same (scalar) noise.
GBM_MU, GBM_S, GBM_T = 1.0, 0.8, 1.0
GBM = sciax.ode.SDE(
    lambda t, y, p: jnp.stack([GBM_MU * y[0], jnp.zeros_like(y[1])]),
    lambda t, y, p: jnp.stack([GBM_S * y[0], jnp.ones_like(y[1])]),
    noise="scalar",
)


@pytest.mark.parametrize("method, order", [("EulerMaruyama", 0.5), ("Milstein", 1.0)])
def test_gbm_strong_order(method, order):
    keys = jax.random.split(jax.random.key(1), 400)
    y0 = jnp.array([1.0, 0.0])
    m = getattr(sciax.ode, method)()

    @jax.jit
    def errors(dt, keys):
        def one(k):
            y = sciax.simulate(GBM, y0, jnp.array([0.0, GBM_T]), key=k, dt0=dt, method=m, max_steps=300).ys[-1]
            exact = jnp.exp((GBM_MU - GBM_S**2 / 2) * GBM_T + GBM_S * y[1])
            return jnp.abs(y[0] - exact)

        return jnp.mean(jax.vmap(one)(keys))

    dts = GBM_T / np.array([16, 32, 64, 128, 256])
    errs = np.array([float(errors(dt, keys)) for dt in dts])
    slope = np.polyfit(np.log(dts), np.log(errs), 1)[0]
    assert abs(slope - order) < 0.15, (errs, slope)


def test_general_and_diagonal_noise_shapes():
    # General noise: 2 states, 3 Brownian motions.
    sde = sciax.ode.SDE(lambda t, y, p: -y, lambda t, y, p: 0.1 * jnp.ones((2, 3)), noise="general", noise_shape=(3,))
    sol = sciax.simulate(sde, jnp.ones(2), TS, key=jax.random.key(0), dt0=0.05)
    assert sol.ys.shape == (5, 2)
    # Diagonal noise on a 2-D state: independent paths per entry.
    diag = sciax.ode.SDE(lambda t, y, p: 0.0 * y, lambda t, y, p: jnp.ones_like(y))
    ys = sciax.simulate(diag, jnp.zeros((2, 2)), TS, key=jax.random.key(0), dt0=0.05).ys
    assert len(np.unique(np.round(np.asarray(ys[-1]), 12))) == 4


def test_stratonovich_heun_and_adaptive_shark():
    # Stratonovich GBM: X = exp(mu t + s W), the same path recorded in Z.
    strat = sciax.ode.SDE(GBM.drift, GBM.diffusion, noise="scalar", calculus="stratonovich")
    y = sciax.simulate(
        strat,
        jnp.array([1.0, 0.0]),
        jnp.array([0.0, 1.0]),
        key=jax.random.key(3),
        dt0=1e-3,
        method=sciax.ode.StratonovichHeun(),
    ).ys[-1]
    np.testing.assert_allclose(float(y[0]), float(jnp.exp(GBM_MU + GBM_S * y[1])), rtol=2e-2)
    sol = sciax.simulate(
        OU, Y0, TS, OU_P, key=jax.random.key(0), method=sciax.ode.ShARK(), adaptive=True, rtol=1e-3, atol=1e-3
    )
    assert bool(sol.success)


def test_bad_input():
    with pytest.raises(ValueError, match="key=jax.random.key"):
        sciax.simulate(OU, Y0, TS, OU_P, dt0=0.01)
    wrong = sciax.ode.SDE(lambda t, y, p: -y, lambda t, y, p: jnp.ones((3,)))
    with pytest.raises(ValueError, match=r"diffusion returned shape \(3,\) for y0 of shape \(2,\); expected \(2,\)"):
        sciax.simulate(wrong, jnp.ones(2), TS, key=jax.random.key(0), dt0=0.1)
    general = sciax.ode.SDE(lambda t, y, p: -y, lambda t, y, p: jnp.ones((2, 2)), noise="general", noise_shape=(3,))
    with pytest.raises(ValueError, match=r"\(2, 2\).*expected \(2, 3\)"):
        sciax.simulate(general, jnp.ones(2), TS, key=jax.random.key(0), dt0=0.1)
    with pytest.raises(ValueError, match="noise_shape"):
        sciax.ode.SDE(lambda t, y, p: y, lambda t, y, p: y, noise="general")
    with pytest.raises(ValueError, match="additive"):
        sciax.simulate(GBM, jnp.ones(2), TS, key=jax.random.key(0), dt0=0.1, method=sciax.ode.SRA1())
    with pytest.raises(ValueError, match="calculus='ito'"):
        sciax.simulate(GBM, jnp.ones(2), TS, key=jax.random.key(0), dt0=0.1, method=sciax.ode.StratonovichHeun())
    with pytest.raises(ValueError, match="commutative"):
        sciax.simulate(general, jnp.ones(2), TS, key=jax.random.key(0), dt0=0.1, method=sciax.ode.Milstein())
    with pytest.raises(TypeError, match="SDE"):
        sciax.simulate(sciax.ode.ODE(lambda t, y, p: -y), Y0, TS, method=sciax.ode.EulerMaruyama(), dt0=0.1)
