"""`sciax.ode.simulate_ensemble`: the per-member kernel path against scipy, the vmapped path and itself.

On CPU the kernel path is the lane program compiled by XLA; the Pallas (GPU)
program runs here through Pallas' interpreter on a few members and must give
the same numbers. On a GPU the same tests run the Triton kernel.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import sciax
import sciax.ode._simulate_ensemble as ensemble_module
from sciax.ode import simulate_ensemble
from sciax.ode._ensemble_rosenbrock import lu_factor, lu_solve
from sciax.ode._lanes import LaneError, LaneProgram, join, split

LORENZ = sciax.ode.lorenz()
ROBER = sciax.ode.robertson()
TS = jnp.linspace(0.0, 1.0, 6)


def _lorenz_members(m, seed=0):
    rng = np.random.default_rng(seed)
    y0 = jnp.asarray(rng.uniform(-1, 1, (m, 3)) + np.array([1.0, 1.0, 20.0]))
    p = {
        "sigma": jnp.asarray(rng.uniform(9, 11, m)),
        "rho": jnp.asarray(rng.uniform(20, 30, m)),
        "beta": jnp.asarray(rng.uniform(2, 3, m)),
    }
    return y0, p


def _rober_members(m, seed=1):
    rng = np.random.default_rng(seed)
    p = {
        "k1": jnp.asarray(rng.uniform(0.02, 0.06, m)),
        "k2": jnp.asarray(rng.uniform(2e7, 4e7, m)),
        "k3": jnp.asarray(rng.uniform(0.5e4, 2e4, m)),
    }
    return jnp.tile(jnp.array([1.0, 0.0, 0.0]), (m, 1)), p


def _lorenz_np(t, y, p):
    x, v, z = y
    return [p["sigma"] * (v - x), x * (p["rho"] - z) - v, x * v - p["beta"] * z]


def _rober_np(t, y, p):
    a, b, c = y
    return [-p["k1"] * a + p["k3"] * b * c, p["k1"] * a - p["k3"] * b * c - p["k2"] * b * b, p["k2"] * b * b]


def _scipy(fun, y0, ts, p, method, rtol):
    """Independent reference: scipy's solve_ivp on a NumPy right-hand side, member by member."""
    out = []
    for i in range(y0.shape[0]):
        pi = {k: float(v[i]) for k, v in p.items()}
        sol = solve_ivp(
            lambda t, y, pi=pi: fun(t, y, pi),
            (float(ts[0]), float(ts[-1])),
            np.asarray(y0[i]),
            method=method,
            t_eval=np.asarray(ts),
            rtol=rtol,
            atol=rtol * 1e-2,
        )
        out.append(sol.y.T)
    return np.stack(out)


@functools.cache
def _run(model_name, method_name, path, rtol, atol, m, **kw):
    model = {"lorenz": LORENZ, "rober": ROBER}[model_name]
    y0, p = (_lorenz_members if model_name == "lorenz" else _rober_members)(m)
    ts = TS if model_name == "lorenz" else jnp.array([0.0, 0.1, 1.0, 10.0, 100.0])
    method = getattr(sciax.ode, method_name)()
    return simulate_ensemble(model, y0, ts, p, method=method, path=path, rtol=rtol, atol=atol, **kw)


@pytest.mark.parametrize("method", ["Tsit5", "Dopri5"])
def test_explicit_kernel_matches_scipy_and_vmap(method):
    kernel = _run("lorenz", method, "kernel", 1e-8, 1e-8, 16)
    vmapped = _run("lorenz", method, "vmap", 1e-8, 1e-8, 16)
    y0, p = _lorenz_members(16)
    ref = _scipy(_lorenz_np, y0, TS, p, "DOP853", 1e-12)
    scale = np.max(np.abs(ref))
    assert np.max(np.abs(kernel.ys - ref)) / scale < 1e-6
    # Same tableau, controller and first step as the vmapped solve: equal to well within the tolerance.
    assert np.max(np.abs(kernel.ys - vmapped.ys)) / scale < 1e-7
    assert kernel.ys.shape == vmapped.ys.shape == (16, 6, 3)
    assert bool(jnp.all(kernel.success))
    steps = np.asarray(kernel.stats["num_steps"])
    assert np.all(np.abs(steps - np.asarray(vmapped.stats["num_steps"])) <= 0.1 * steps + 3)
    assert len(set(steps.tolist())) > 1  # each member its own steps, not the slowest's


@pytest.mark.parametrize("method", ["Rodas5P", "Rodas4"])
def test_stiff_kernel_matches_scipy_and_vmap(method):
    kernel = _run("rober", method, "kernel", 1e-7, 1e-10, 8)
    vmapped = _run("rober", method, "vmap", 1e-7, 1e-10, 8)
    y0, p = _rober_members(8)
    ts = np.array([0.0, 0.1, 1.0, 10.0, 100.0])
    ref = _scipy(_rober_np, y0, ts, p, "Radau", 1e-11)
    assert np.max(np.abs(kernel.ys - ref)) < 2e-6
    assert np.max(np.abs(kernel.ys - vmapped.ys)) < 1e-6
    np.testing.assert_allclose(np.sum(kernel.ys, axis=-1), 1.0, atol=1e-9)  # y1 + y2 + y3 is conserved


def test_pallas_program_equals_xla_program(monkeypatch):
    """The GPU (Pallas) program, run by Pallas' interpreter, gives the XLA lane program's numbers."""
    y0, p = _lorenz_members(6)
    xla = simulate_ensemble(LORENZ, y0, TS, p, path="kernel", block_size=4)
    monkeypatch.setattr(ensemble_module, "_backend", lambda: "interpret")
    interp = simulate_ensemble(LORENZ, y0, TS, p, path="kernel", block_size=4)  # 6 members: one padded block
    np.testing.assert_allclose(interp.ys, xla.ys, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(interp.stats["num_steps"], xla.stats["num_steps"])


def test_pallas_rosenbrock_equals_xla(monkeypatch):
    y0, p = _rober_members(4)
    ts = jnp.array([0.0, 1.0, 10.0])
    xla = simulate_ensemble(ROBER, y0, ts, p, method=sciax.ode.Rodas5P(), path="kernel", rtol=1e-6, atol=1e-9)
    monkeypatch.setattr(ensemble_module, "_backend", lambda: "interpret")
    interp = simulate_ensemble(
        ROBER, y0, ts, p, method=sciax.ode.Rodas5P(), path="kernel", rtol=1e-6, atol=1e-9, block_size=4
    )
    np.testing.assert_allclose(interp.ys, xla.ys, rtol=1e-12, atol=1e-15)


def test_a_failing_member_does_not_stop_the_others():
    """Van der Pol with mu = 1 and mu = 1e4 under Tsit5: the stiff member runs out of steps alone."""
    model = sciax.ode.van_der_pol()
    mu = jnp.array([1.0, 1e4, 2.0, 3.0])
    y0 = jnp.tile(jnp.array([2.0, 0.0]), (4, 1))
    ts = jnp.linspace(0.0, 3.0, 4)
    sol = simulate_ensemble(model, y0, ts, {"mu": mu}, path="kernel", max_steps=3000, throw=False)
    np.testing.assert_array_equal(sol.success, [True, False, True, True])
    ys = np.asarray(sol.ys)
    assert np.all(np.isinf(ys[1, -1])) and np.all(np.isfinite(ys[[0, 2, 3]]))
    assert int(sol.stats["num_steps"][1]) == 3000 and int(sol.stats["num_steps"][0]) < 200
    easy = jnp.array([0, 2, 3])
    alone = simulate_ensemble(model, y0[easy], ts, {"mu": mu[easy]}, path="kernel")
    # Unaffected by the failing member (XLA may vectorise 4 and 3 lanes differently: round-off only).
    np.testing.assert_allclose(sol.ys[easy], alone.ys, rtol=1e-12, atol=1e-12)
    with pytest.raises(Exception, match="a member failed"):
        jax.block_until_ready(simulate_ensemble(model, y0, ts, {"mu": mu}, path="kernel", max_steps=3000).ys)


def test_under_jit_and_shared_params():
    y0, p = _lorenz_members(4)
    shared = {k: v[0] for k, v in p.items()}
    run = jax.jit(lambda y: simulate_ensemble(LORENZ, y, TS, shared, in_axes=(0, None), path="kernel").ys)
    vmapped = simulate_ensemble(LORENZ, y0, TS, shared, in_axes=(0, None), path="vmap").ys
    np.testing.assert_allclose(run(y0), vmapped, rtol=1e-5, atol=1e-5)


def _fd(fun, x, eps=1e-6):
    return (fun(x + eps) - fun(x - eps)) / (2 * eps)


def test_forward_mode_sensitivities_vs_finite_differences():
    y0, p = _lorenz_members(3)
    opts = dict(path="kernel", rtol=1e-10, atol=1e-10, adjoint=sciax.ode.ForwardMode())

    def ys_of(rho):
        sol = simulate_ensemble(LORENZ, y0, TS, {**p, "rho": rho}, **opts)
        return sol.ys, (sol.stats["num_steps"], sol.stats["num_rejected_steps"])

    primal, tangent, steps = jax.jvp(ys_of, (p["rho"],), (jnp.ones(3),), has_aux=True)
    fd = _fd(lambda r: ys_of(r)[0], p["rho"])
    np.testing.assert_allclose(tangent, fd, rtol=1e-5, atol=1e-6)
    plain = simulate_ensemble(LORENZ, y0, TS, p, path="kernel", rtol=1e-10, atol=1e-10)
    # Error control on y only: the plain run's steps, accepted and rejected, so the same states up to
    # the rounding of two differently fused programs (another step sequence would differ by ~rtol).
    np.testing.assert_array_equal(steps[0], plain.stats["num_steps"])
    np.testing.assert_array_equal(steps[1], plain.stats["num_rejected_steps"])
    np.testing.assert_allclose(primal, plain.ys, rtol=1e-12, atol=0)


def test_forward_mode_stiff():
    y0, p = _rober_members(2)
    ts = jnp.array([0.0, 1.0, 10.0])
    opts = dict(path="kernel", method=sciax.ode.Rodas5P(), rtol=1e-9, atol=1e-12, adjoint=sciax.ode.ForwardMode())

    def ys_of(k1):
        return simulate_ensemble(ROBER, y0, ts, {**p, "k1": k1}, **opts).ys

    # Compiled once each (not op by op around the solver): the jvp, and the solve for the differences.
    _, tangent = jax.jit(lambda k: jax.jvp(ys_of, (k,), (jnp.ones(2),)))(p["k1"])
    np.testing.assert_allclose(tangent, _fd(jax.jit(ys_of), p["k1"], 1e-7), rtol=1e-4, atol=1e-8)


def test_reverse_mode_vs_finite_differences():
    y0, p = _lorenz_members(3)

    def loss(sigma, y0):
        sol = simulate_ensemble(LORENZ, y0, TS, {**p, "sigma": sigma}, path="kernel", rtol=1e-10, atol=1e-10)
        return jnp.sum(sol.ys[:, -1] ** 2)

    g_sigma, g_y0 = jax.jit(jax.grad(loss, argnums=(0, 1)))(p["sigma"], y0)
    value = jax.jit(loss)  # one compilation for the eight values of the differences
    fd = np.array([_fd(lambda s, i=i: value(p["sigma"].at[i].add(s), y0), 0.0) for i in range(3)])
    np.testing.assert_allclose(g_sigma, fd, rtol=1e-5)
    fd_y = _fd(lambda s: value(p["sigma"], y0.at[1, 2].add(s)), 0.0)
    np.testing.assert_allclose(g_y0[1, 2], fd_y, rtol=1e-5)


def test_auto_path_and_fallback():
    y0, p = _lorenz_members(4)
    auto = simulate_ensemble(LORENZ, y0, TS, p)
    kernel = simulate_ensemble(LORENZ, y0, TS, p, path="kernel")
    np.testing.assert_array_equal(auto.ys, kernel.ys)  # CPU and GPU: the kernel path

    def looped(t, y, params):
        # -a y, by a loop whose trip count depends on the state: no lane program for it
        _, v = jax.lax.while_loop(lambda c: c[0] < 1.0, lambda c: (c[0] + 0.5, c[1] + 0.5 * c[1]), (0.0 * y[0], y))
        return -params["a"] * v / 2.25

    model = sciax.ode.ODE(looped)
    y = jnp.ones((3, 2))
    a = {"a": jnp.array([1.0, 0.5, 0.25])}
    fallback = simulate_ensemble(model, y, TS, a)  # a loop per member: vmapped
    np.testing.assert_allclose(fallback.ys[:, -1], y * np.exp(-a["a"][:, None]), rtol=1e-5)
    with pytest.raises(ValueError, match="'while'"):
        simulate_ensemble(model, y, TS, a, path="kernel")


def test_bad_input():
    y0, p = _lorenz_members(4)
    with pytest.raises(ValueError, match="same leading member size"):
        simulate_ensemble(LORENZ, y0, TS, {**p, "rho": p["rho"][:3]})
    with pytest.raises(ValueError, match="at most 64"):
        big = sciax.ode.ODE(lambda t, y, q: -y)
        simulate_ensemble(big, jnp.ones((2, 65)), TS, None, in_axes=(0, None), path="kernel")
    with pytest.raises(ValueError, match="Tsit5, Dopri5"):
        simulate_ensemble(LORENZ, y0, TS, p, method=sciax.ode.Kvaerno5(), path="kernel")
    with pytest.raises(ValueError, match="path must be one of"):
        simulate_ensemble(LORENZ, y0, TS, p, path="gpu")
    with pytest.raises(ValueError, match="in_axes"):
        simulate_ensemble(LORENZ, y0, TS, p, in_axes=(1, 0))
    with pytest.raises(ValueError, match="power of two"):
        simulate_ensemble(LORENZ, y0, TS, p, path="kernel", block_size=48)
    with pytest.raises(TypeError, match="sciax.ode.ODE or SDE"):
        simulate_ensemble(object(), y0, TS, p)
    sde = sciax.ode.SDE(lambda t, y, q: -y, lambda t, y, q: 0.1 * y)
    with pytest.raises(ValueError, match="needs key="):
        simulate_ensemble(sde, y0, TS, None, in_axes=(0, None), dt0=0.1)
    with pytest.raises(ValueError, match="one key per member"):
        simulate_ensemble(sde, y0, TS, None, in_axes=(0, None), dt0=0.1, key=jax.random.split(jax.random.key(0), 3))
    with pytest.raises(ValueError, match="key= is for SDE"):
        simulate_ensemble(LORENZ, y0, TS, p, key=jax.random.split(jax.random.key(0), 4))


def test_lane_program_matches_vmap():
    """The jaxpr-to-lanes evaluation against jax.vmap on a function using many primitive kinds."""

    def f(t, y, q):
        a = jnp.array([[1.0, 2.0, 0.0], [0.0, 3.0, 1.0], [1.0, 0.0, 0.0]])
        v = a @ y + jnp.sum(y**2) * jnp.where(y > 0, jnp.sin(y), jnp.exp(-y)) + y[::-1] * q["s"]
        v = v.at[1].set(jnp.max(y) * t)
        return jnp.concatenate([v[:2], jnp.tanh(v[2:]) + jnp.linalg.norm(y)])

    rng = np.random.default_rng(0)
    ts, ys, qs = rng.normal(size=5), rng.normal(size=(5, 3)), {"s": rng.normal(size=5)}
    for fn in (f, jax.jacfwd(f, argnums=1)):
        program = LaneProgram(fn, 0.0, jnp.zeros(3), {"s": 0.0})
        lanes = program((5,), jnp.asarray(ts), split(jnp.asarray(ys).T), {"s": jnp.asarray(qs["s"])})
        got = np.moveaxis(np.asarray(join(lanes, (5,), jnp.float64)), -1, 0)
        np.testing.assert_allclose(got, jax.vmap(fn)(ts, ys, qs), rtol=1e-14, atol=1e-14)
    with pytest.raises(LaneError, match="'while'"):
        LaneProgram(lambda t, y: jax.lax.while_loop(lambda v: v[0] < t, lambda v: v * 2, y), 0.0, jnp.ones(2))(
            (5,), jnp.asarray(ts), split(jnp.ones((2, 5)))
        )


def test_lane_lu_with_pivoting_vs_numpy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(4, 4, 7))
    a[0, 0] = 0.0  # needs a row swap
    b = rng.normal(size=(4, 7))
    lu, piv = lu_factor([[jnp.asarray(a[i, j]) for j in range(4)] for i in range(4)])
    x = np.stack(lu_solve(lu, piv, [jnp.asarray(v) for v in b]))
    for m in range(7):
        np.testing.assert_allclose(x[:, m], np.linalg.solve(a[:, :, m], b[:, m]), rtol=1e-10)


def test_sde_ensemble_moments_keys_and_no_gradient():
    """GBM by Euler–Maruyama on the kernel path: the mean of y(1) against the EM recursion's exact
    mean y0 (1 + mu h)^N, within 5 standard errors; per-member keys; differentiation refused."""
    sde = sciax.ode.SDE(lambda t, y, q: q["mu"] * y, lambda t, y, q: q["sigma"] * y)
    m, h = 2000, 0.05
    q = {"mu": jnp.full(m, 0.5), "sigma": jnp.full(m, 0.4)}
    keys = jax.random.split(jax.random.key(7), m)
    ts = jnp.array([0.0, 0.5, 1.0])
    run = jax.jit(lambda q, k: simulate_ensemble(sde, jnp.ones((m, 1)), ts, q, key=k, dt0=h).ys)
    ys = np.asarray(run(q, keys))[:, -1, 0]
    mean, second = (1 + 0.5 * h) ** 20, ((1 + 0.5 * h) ** 2 + 0.16 * h) ** 20
    assert abs(ys.mean() - mean) < 5 * np.sqrt((second - mean**2) / m)
    np.testing.assert_array_equal(run(q, keys)[:, -1, 0], ys)  # the same keys, the same paths
    other = np.asarray(run(q, jax.random.split(jax.random.key(8), m)))[:, -1, 0]
    assert np.all(other != ys)
    with pytest.raises(TypeError, match="not differentiable"):
        jax.grad(lambda mu: jnp.sum(run({**q, "mu": mu}, keys)))(q["mu"])


def test_simulate_options_route_to_vmap():
    """Options the kernel path does not have (an event) run the vmapped solve, or are refused when forced."""
    y0, p = _lorenz_members(3)

    def event(t, y, params, **kwargs):
        return y[0] - 100.0  # never fires; the option alone decides the path

    sol = simulate_ensemble(LORENZ, y0, TS, p, event=event)
    plain = simulate_ensemble(LORENZ, y0, TS, p, path="vmap")
    np.testing.assert_allclose(sol.ys, plain.ys, rtol=1e-12)
    with pytest.raises(ValueError, match="no option 'event'"):
        simulate_ensemble(LORENZ, y0, TS, p, path="kernel", event=event)
