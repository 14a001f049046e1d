"""The SDE steppers of the ensemble kernel and their counter-based normal generator.

References: Random123's Threefry-2x32-20 known answers (as used by JAX's and
TensorFlow's own tests) and JAX's Threefry primitive; the exact moments of the
Euler–Maruyama recursion for geometric Brownian motion; the exact Stratonovich
GBM solution on the very path the solver used (recorded by `dZ = dW`); an
Euler–Maruyama recursion in NumPy fed from JAX's Threefry (path by path).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import sciax
from sciax.ode._ensemble_kernel import integrate_pallas, integrate_xla
from sciax.ode._ensemble_sde import lane_normals, sde_stepper_factory, threefry2x32

try:  # the primitive behind jax.random (private; its module moved between JAX versions)
    from jax._src.random.threefry2x32 import threefry_2x32 as jax_threefry
except ImportError:  # pragma: no cover
    from jax._src.prng import threefry_2x32 as jax_threefry

U32 = 0xFFFFFFFF
# Random123 kat_vectors, threefry2x32_20: (key, counter) -> output.
KAT = [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((U32, U32), (U32, U32), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def _u32(values):
    return jnp.asarray(np.asarray(values, dtype=np.uint32))


@pytest.mark.parametrize("key, ctr, want", KAT)
def test_threefry_known_answers(key, ctr, want):
    out = threefry2x32(*[_u32([v]) for v in (*key, *ctr)])
    assert [int(o[0]) for o in out] == list(want)


def test_threefry_matches_jax_primitive():
    rng = np.random.default_rng(0)
    for _ in range(3):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        ctr = rng.integers(0, 2**32, (2, 512), dtype=np.uint64).astype(np.uint32)
        ours = threefry2x32(np.uint32(key[0]), np.uint32(key[1]), _u32(ctr[0]), _u32(ctr[1]))
        theirs = np.asarray(jax_threefry(_u32(key), _u32(ctr.reshape(-1)))).reshape(2, -1)
        np.testing.assert_array_equal(np.stack([np.asarray(o) for o in ours]), theirs)


def _reference_normals(key, step, count):
    """Box–Muller in NumPy on JAX's Threefry: normal `j` of a step uses counter `(step, j // 2)`."""
    pairs = (count + 1) // 2
    ctr = np.concatenate([np.full(pairs, step, np.uint32), np.arange(pairs, dtype=np.uint32)])
    bits = np.asarray(jax_threefry(_u32(key), _u32(ctr)), dtype=np.float64).reshape(2, pairs)
    u0, u1 = (bits + 0.5) * 2.0**-32
    r, theta = np.sqrt(-2 * np.log(u0)), 2 * np.pi * u1
    return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)[:count]


def test_normals_are_standard_normal():
    steps = 25_000
    key = np.asarray(jax.random.key_data(jax.random.key(7)))
    z = np.stack([np.asarray(v) for v in lane_normals(key[0], key[1], _u32(np.arange(steps)), 4, jnp.float64)])
    np.testing.assert_allclose(z[:, 123], _reference_normals(key, 123, 4), rtol=1e-12, atol=1e-12)
    flat, n = z.reshape(-1), z.size
    assert abs(flat.mean()) < 5 / np.sqrt(n)
    assert abs(flat.var() - 1) < 5 * np.sqrt(2 / n)
    assert scipy.stats.kstest(flat, scipy.stats.norm.cdf).pvalue > 1e-3
    corr = np.corrcoef(z)  # components (the Box–Muller pair and across pairs) are uncorrelated
    assert np.max(np.abs(corr - np.eye(4))) < 5 / np.sqrt(steps)
    lag = np.corrcoef(z[0, :-1], z[0, 1:])[0, 1]  # consecutive steps too
    assert abs(lag) < 5 / np.sqrt(steps)


GBM = sciax.ode.SDE(lambda t, y, p: p["mu"] * y, lambda t, y, p: p["sigma"] * y)


def _run(model, y0, p, keys, ts, dt0, method=None, backend="xla"):
    """The kernel driver on members `(M, n)` / params leaves `(M, ...)` / keys `(M,)`; ys `(M, T, n)`."""
    method = sciax.ode.EulerMaruyama() if method is None else method
    ts = jnp.asarray(ts, jnp.float64)
    example = (ts[0], y0[0], jax.tree_util.tree_map(lambda x: x[0], p))
    make = sde_stepper_factory(model, method, example, dt0)
    params = (jax.tree_util.tree_map(lambda x: jnp.moveaxis(x, 0, -1), p), jax.random.key_data(keys).T)
    cfg = dict(rtol=1e-3, atol=1e-3, dt0=dt0, max_steps=100_000)
    if backend == "xla":
        ys, stats, t_end = integrate_xla(make, y0.T, params, ts, cfg)
    else:
        ys, stats, t_end = integrate_pallas(make, y0.T, params, ts, cfg, block=8, interpret=True, num_warps=1)
    return np.moveaxis(np.asarray(ys), -1, 0), np.asarray(stats), np.asarray(t_end)


def test_gbm_matches_exact_euler_maruyama_moments():
    """E[y_N] = y0 (1 + mu h)^N and E[y_N^2] = y0^2 ((1 + mu h)^2 + sigma^2 h)^N hold exactly for EM."""
    members, h, steps = 4000, 0.05, 20
    mu = jnp.tile(jnp.array([0.5, -0.3]), members // 2)
    sigma = jnp.repeat(jnp.array([0.3, 0.6]), members // 2)
    y0 = jnp.ones((members, 1))
    keys = jax.random.split(jax.random.key(1), members)
    ys, stats, t_end = _run(GBM, y0, {"mu": mu, "sigma": sigma}, keys, [0.0, 0.4, 1.0], h)
    assert np.all(stats[0] == steps) and np.all(stats[2] == 0) and np.all(t_end == 1.0)
    y, mu, sigma = ys[:, -1, 0], np.asarray(mu), np.asarray(sigma)
    a, b2 = 1 + mu * h, sigma**2 * h
    m1, m2 = a**steps, (a**2 + b2) ** steps
    m4 = (a**4 + 6 * a**2 * b2 + 3 * b2**2) ** steps  # E[(a + b z)^4] per step
    for stat, var in ((y / m1, m2 / m1**2 - 1), (y**2 / m2, m4 / m2**2 - 1)):
        assert abs(stat.mean() - 1) < 5 * np.sqrt(var.sum()) / members
    # and the EM moments are within O(h) of the exact GBM ones
    exact = np.exp(mu)
    assert np.max(np.abs(m1 / exact - 1)) < h


@pytest.mark.parametrize("noise", ["diagonal", "scalar", "general"])
def test_euler_maruyama_path_by_path(noise):
    """Clipped steps (dt0 0.15 against outputs 0.4, 1.0) and every noise type against a NumPy recursion."""
    mix = np.array([[0.3, -0.2, 0.1], [0.0, 0.4, 0.25]])
    if noise == "general":
        model = sciax.ode.SDE(
            lambda t, y, p: -p * y, lambda t, y, p: jnp.asarray(mix) * y[:, None], noise="general", noise_shape=(3,)
        )
    else:
        model = sciax.ode.SDE(lambda t, y, p: -p * y, lambda t, y, p: 0.3 * y + 0.1 * t, noise=noise)
    members, ts, dt0 = 5, [0.0, 0.4, 1.0], 0.15
    y0 = jnp.stack([jnp.linspace(1.0, 2.0, members), jnp.linspace(-1.0, 0.5, members)], axis=1)
    lam = jnp.linspace(0.5, 1.5, members)
    keys = jax.random.split(jax.random.key(3), members)
    ys, stats, _ = _run(model, y0, lam, keys, ts, dt0)
    m = {"diagonal": 2, "scalar": 1, "general": 3}[noise]
    for i in range(members):
        key, y, t, k, lam_i = np.asarray(jax.random.key_data(keys[i])), np.array(y0[i]), 0.0, 0, float(lam[i])
        for j, t_out in enumerate(ts[1:], start=1):
            while t < t_out:
                land = t_out - t <= dt0 + 100 * np.finfo(float).eps * max(abs(t_out), 1.0)
                h = t_out - t if land else dt0
                dw = np.sqrt(h) * _reference_normals(key, k, m)
                g = mix * y[:, None] if noise == "general" else 0.3 * y + 0.1 * t
                y = y - lam_i * y * h + (g @ dw if noise == "general" else g * (dw if noise == "diagonal" else dw[0]))
                t, k = (t_out if land else t + h), k + 1
            np.testing.assert_allclose(ys[i, j], y, rtol=1e-12, atol=1e-12)
        assert stats[0, i] == k


def test_xla_and_pallas_interpret_agree():
    members = 16
    y0 = jnp.ones((members, 2)) * jnp.array([1.0, 2.0])
    p = {"mu": jnp.linspace(-0.5, 0.5, members), "sigma": jnp.linspace(0.1, 0.8, members)}
    keys = jax.random.split(jax.random.key(5), members)
    args = (GBM, y0, p, keys, [0.0, 0.3, 1.0], 0.1)
    ys_x, st_x, t_x = _run(*args)
    ys_p, st_p, t_p = _run(*args, backend="interpret")
    np.testing.assert_allclose(ys_p, ys_x, rtol=1e-13, atol=1e-14)
    np.testing.assert_array_equal(st_p, st_x)
    np.testing.assert_array_equal(t_p, t_x)


def test_same_key_same_path_other_key_other_path():
    members = 6
    y0, p = jnp.ones((members, 2)), {"mu": jnp.full(members, 0.1), "sigma": jnp.full(members, 0.5)}
    keys = jax.random.split(jax.random.key(0), members)
    ys1 = _run(GBM, y0, p, keys, [0.0, 1.0], 0.1)[0]
    ys2 = _run(GBM, y0, p, keys, [0.0, 1.0], 0.1)[0]
    np.testing.assert_array_equal(ys1, ys2)
    other = keys.at[2].set(jax.random.key(99))
    ys3 = _run(GBM, y0, p, other, [0.0, 1.0], 0.1)[0]
    changed = np.any(ys3 != ys1, axis=(1, 2))
    assert changed.tolist() == [False, False, True, False, False, False]  # members do not share numbers
    assert np.all(ys1[:, -1, 0] != ys1[:, -1, 1])  # diagonal noise: independent components
    assert len(np.unique(ys1[:, -1, 0])) == members


def test_stratonovich_heun_strong_order_one():
    """Stratonovich GBM with the path recorded as a second component: y = y0 exp(mu t + sigma Z)."""
    model = sciax.ode.SDE(
        lambda t, y, p: jnp.stack([p[0] * y[0], 0.0 * y[1]]),
        lambda t, y, p: jnp.stack([p[1] * y[0], jnp.ones_like(y[1])]),
        noise="scalar",
        calculus="stratonovich",
    )
    members = 200
    y0 = jnp.tile(jnp.array([1.0, 0.0]), (members, 1))
    p = jnp.tile(jnp.array([0.2, 0.7]), (members, 1))
    keys = jax.random.split(jax.random.key(2), members)
    errors = []
    for dt0 in (0.04, 0.02):
        ys = _run(model, y0, p, keys, [0.0, 1.0], dt0, method=sciax.ode.StratonovichHeun())[0]
        exact = np.exp(0.2 + 0.7 * ys[:, -1, 1])
        errors.append(np.mean(np.abs(ys[:, -1, 0] - exact)))
    assert errors[1] < 0.02
    assert 1.6 < errors[0] / errors[1] < 2.5


def test_factory_refuses_unsupported_methods_and_calculus():
    example = (jnp.zeros(()), jnp.ones(2), {"mu": jnp.zeros(()), "sigma": jnp.zeros(())})
    with pytest.raises(TypeError, match="EulerMaruyama"):
        sde_stepper_factory(GBM, sciax.ode.ItoMilstein(), example, 0.1)
    strat = sciax.ode.SDE(GBM.drift, GBM.diffusion, calculus="stratonovich")
    with pytest.raises(ValueError, match="stratonovich"):
        sde_stepper_factory(strat, sciax.ode.EulerMaruyama(), example, 0.1)
    with pytest.raises(ValueError, match="1-D"):
        sde_stepper_factory(GBM, sciax.ode.EulerMaruyama(), (example[0], jnp.ones((2, 2)), example[2]), 0.1)
