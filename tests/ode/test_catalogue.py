"""Lorenz, SIR and SEIR against scipy's integrators and exact invariants; the 2-D Brusselator against a
point-by-point NumPy evaluation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import sciax

TIGHT = dict(rtol=1e-11, atol=1e-12, max_steps=100_000)
LORENZ = {"sigma": 10.0, "rho": 28.0, "beta": 8.0 / 3.0}


def _scipy(f, y0, ts):
    ref = solve_ivp(f, (ts[0], ts[-1]), y0, method="DOP853", t_eval=ts, rtol=1e-13, atol=1e-13)
    assert ref.success
    return ref.y.T


def test_lorenz_vs_scipy_before_chaos_amplifies_errors():
    # Up to t = 2 the separation of nearby trajectories grows by ~exp(0.9 * 2) = 6 only.
    s, r, b = LORENZ["sigma"], LORENZ["rho"], LORENZ["beta"]
    ts = np.linspace(0.0, 2.0, 21)
    y0 = np.array([1.0, 1.0, 1.0])
    ref = _scipy(lambda t, y: [s * (y[1] - y[0]), y[0] * (r - y[2]) - y[1], y[0] * y[1] - b * y[2]], y0, ts)
    sol = sciax.simulate(sciax.ode.lorenz(), jnp.asarray(y0), jnp.asarray(ts), LORENZ, **TIGHT)
    np.testing.assert_allclose(np.asarray(sol.ys), ref, rtol=1e-8, atol=1e-8)
    assert list(sol.to_xarray().data_vars) == ["x", "y", "z"]


def test_lorenz_fixed_points_are_steady():
    # C± = (±sqrt(b (r - 1)), ±sqrt(b (r - 1)), r - 1) are equilibria.
    b, r = LORENZ["beta"], LORENZ["rho"]
    c = np.sqrt(b * (r - 1.0))
    for point in ([c, c, r - 1.0], [-c, -c, r - 1.0], [0.0, 0.0, 0.0]):
        du = sciax.ode.lorenz().rhs(0.0, jnp.asarray(point), LORENZ)
        np.testing.assert_allclose(np.asarray(du), 0.0, atol=1e-12)


def _sir_numpy(beta, gamma):
    def f(t, y):
        s, i, r = y
        n = s + i + r
        return [-beta * s * i / n, beta * s * i / n - gamma * i, gamma * i]

    return f


@pytest.mark.parametrize("population", [1.0, 1e6], ids=["fractions", "counts"])
def test_sir_vs_scipy_and_conservation(population):
    beta, gamma = 0.5, 0.2
    ts = np.linspace(0.0, 100.0, 51)
    y0 = population * np.array([0.99, 0.01, 0.0])
    ref = _scipy(_sir_numpy(beta, gamma), y0, ts)
    sol = sciax.simulate(sciax.ode.sir(), jnp.asarray(y0), jnp.asarray(ts), {"beta": beta, "gamma": gamma}, **TIGHT)
    ys = np.asarray(sol.ys)
    np.testing.assert_allclose(ys, ref, rtol=1e-8, atol=1e-9 * population)
    np.testing.assert_allclose(ys.sum(axis=1), population, rtol=1e-12)


@pytest.mark.parametrize("r0", [1.5, 2.5, 4.0])
def test_sir_final_size_relation(r0):
    # Kermack–McKendrick: with N = 1 and R(0) = 0 the final size solves R = 1 - S0 exp(-R0 R).
    gamma = 0.2
    s0 = 1.0 - 1e-6
    r_inf = brentq(lambda r: r - (1.0 - s0 * np.exp(-r0 * r)), 1e-3, 1.0)
    sol = sciax.simulate(
        sciax.ode.sir(),
        jnp.array([s0, 1e-6, 0.0]),
        jnp.array([0.0, 2000.0]),
        {"beta": r0 * gamma, "gamma": gamma},
        **TIGHT,
    )
    s, i, r = np.asarray(sol.ys[-1])
    assert i < 1e-12  # the epidemic is over
    np.testing.assert_allclose(r, r_inf, rtol=1e-8)


def test_sir_cumulative_incidence_counts_entries_into_i():
    beta, gamma = 0.5, 0.2
    ts = np.linspace(0.0, 60.0, 61)
    params = {"beta": beta, "gamma": gamma}
    y0 = jnp.array([0.99, 0.01, 0.0, 0.0])
    sol = sciax.simulate(sciax.ode.sir(incidence=True), y0, jnp.asarray(ts), params, **TIGHT)
    s, i, r, c = np.asarray(sol.ys).T
    # every infection leaves S: C(t) = S(0) - S(t), and new infections = dI + dR
    np.testing.assert_allclose(c, 0.99 - s, atol=1e-12)
    np.testing.assert_allclose(np.diff(c), np.diff(i) + np.diff(r), atol=1e-12)
    # C does not feed back, but it enters the error norm, so the step sequence (and the
    # round-off-level answer) differs: agreement is to the solver tolerance.
    plain = sciax.simulate(sciax.ode.sir(), y0[:3], jnp.asarray(ts), params, **TIGHT)
    np.testing.assert_allclose(np.asarray(plain.ys), np.asarray(sol.ys)[:, :3], rtol=1e-9, atol=1e-11)
    assert list(sol.to_xarray().data_vars) == ["S", "I", "R", "C"]


def test_seir_vs_scipy_and_incidence():
    beta, sigma, gamma = 0.6, 0.25, 0.2
    ts = np.linspace(0.0, 120.0, 61)
    y0 = np.array([990.0, 5.0, 5.0, 0.0])

    def f(t, y):
        s, e, i, r = y
        n = y.sum()
        return [-beta * s * i / n, beta * s * i / n - sigma * e, sigma * e - gamma * i, gamma * i]

    ref = _scipy(f, y0, ts)
    params = {"beta": beta, "sigma": sigma, "gamma": gamma}
    sol = sciax.simulate(
        sciax.ode.seir(incidence=True), jnp.asarray(np.append(y0, 0.0)), jnp.asarray(ts), params, **TIGHT
    )
    ys = np.asarray(sol.ys)
    np.testing.assert_allclose(ys[:, :4], ref, rtol=1e-8, atol=1e-7)
    np.testing.assert_allclose(ys[:, :4].sum(axis=1), 1000.0, rtol=1e-12)
    # C counts entries into I: C(t) = I(t) + R(t) - I(0) - R(0)
    np.testing.assert_allclose(ys[:, 4], ys[:, 2] + ys[:, 3] - 5.0, atol=1e-8)


def test_epidemic_models_differentiate_and_check_their_arguments():
    # dR(T)/dbeta by reverse mode against a central difference of scipy solutions.
    ts = jnp.array([0.0, 30.0])
    y0 = jnp.array([0.99, 0.01, 0.0])

    def r_end(beta):
        return sciax.simulate(sciax.ode.sir(), y0, ts, {"beta": beta, "gamma": 0.2}, **TIGHT).ys[-1, 2]

    def r_scipy(beta):
        return _scipy(_sir_numpy(beta, 0.2), np.asarray(y0), np.asarray(ts))[-1, 2]

    h = 1e-5
    np.testing.assert_allclose(float(jax.grad(r_end)(0.5)), (r_scipy(0.5 + h) - r_scipy(0.5 - h)) / (2 * h), rtol=1e-6)
    with pytest.raises(TypeError, match="incidence must be True or False"):
        sciax.ode.seir(incidence="yes")


def test_sir_vmaps_over_initial_states_and_params_like_single_solves():
    ts = jnp.linspace(0.0, 40.0, 5)
    y0s = jnp.array([[0.99, 0.01, 0.0], [0.9, 0.1, 0.0]])
    betas = jnp.array([0.4, 0.7])

    def run(y0, beta):
        return sciax.simulate(sciax.ode.sir(), y0, ts, {"beta": beta, "gamma": 0.2}, **TIGHT).ys

    batched = jax.jit(jax.vmap(run))(y0s, betas)
    for k in range(2):
        ref = _scipy(_sir_numpy(float(betas[k]), 0.2), np.asarray(y0s[k]), np.asarray(ts))
        np.testing.assert_allclose(np.asarray(batched[k]), ref, rtol=1e-8, atol=1e-10)


def _brusselator_pointwise(n, t, z, alpha):
    """The 2-D Brusselator's right-hand side point by point, written from its definition (Hairer &
    Wanner II, §IV.1, with SciMLBenchmarks' forcing disc): spacing 1/(n-1), periodic wrap."""
    u, v = z.reshape(2, n, n)
    out = np.zeros((2, n, n))
    h2 = 1.0 / (n - 1) ** 2
    for i in range(n):
        for j in range(n):
            x, y = i / (n - 1), j / (n - 1)
            near = [((i + a) % n, (j + b) % n) for a, b in ((1, 0), (-1, 0), (0, 1), (0, -1))]
            lap_u = (sum(u[p] for p in near) - 4 * u[i, j]) / h2
            lap_v = (sum(v[p] for p in near) - 4 * v[i, j]) / h2
            force = 5.0 if t >= 1.1 and (x - 0.3) ** 2 + (y - 0.6) ** 2 <= 0.01 else 0.0
            out[0, i, j] = 1 + u[i, j] ** 2 * v[i, j] - 4.4 * u[i, j] + alpha * lap_u + force
            out[1, i, j] = 3.4 * u[i, j] - u[i, j] ** 2 * v[i, j] + alpha * lap_v
    return out.ravel()


def test_brusselator_2d_against_its_definition():
    n = 12  # spacing 1/11: the forcing disc holds 4 points and no point lies on its rim
    problem = sciax.ode.brusselator_2d(n)
    grid = np.linspace(0.0, 1.0, n)
    u0 = 22 * (grid * (1 - grid)) ** 1.5
    np.testing.assert_allclose(np.asarray(problem.y0).reshape(2, n, n)[0], np.tile(u0, (n, 1)), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(problem.y0).reshape(2, n, n)[1], 27 / 22 * np.tile(u0, (n, 1)).T)
    z = np.random.default_rng(0).uniform(0.5, 3.0, 2 * n * n)
    for t in (0.0, 2.0):
        expected = _brusselator_pointwise(n, t, z, 7.0)
        np.testing.assert_allclose(np.asarray(problem.model.rhs(t, jnp.asarray(z), 7.0)), expected, rtol=1e-12)
    assert not np.allclose(_brusselator_pointwise(n, 2.0, z, 7.0), _brusselator_pointwise(n, 0.0, z, 7.0))
    unforced = sciax.ode.brusselator_2d(n, forcing=False).model.rhs(2.0, jnp.asarray(z), 7.0)
    np.testing.assert_allclose(np.asarray(unforced), _brusselator_pointwise(n, 0.0, z, 7.0), rtol=1e-12)
    # the stated pattern covers the Jacobian (it couples both species at the neighbours too), and the
    # reactions are the point-local part
    jac = np.asarray(jax.jacfwd(lambda w: problem.model.rhs(0.0, w, 7.0))(jnp.asarray(z)))
    assert not np.any((jac != 0) & (problem.pattern.toarray() == 0))
    local = np.asarray(jax.jacfwd(lambda w: problem.reactions(0.0, w, 7.0))(jnp.asarray(z)))
    np.testing.assert_array_equal(local != 0, np.kron(np.ones((2, 2)), np.eye(n * n)) != 0)
    # the preconditioner inverts I - c alpha lap on each species
    c, r = 1e-2, jnp.asarray(z)
    x = problem.diffusion(0.0, r, c, 7.0).apply(r)
    diffusion_only = problem.model.rhs(0.0, x, 7.0) - problem.reactions(0.0, x, 7.0)
    np.testing.assert_allclose(np.asarray(x - c * diffusion_only), z, rtol=1e-12)
    with pytest.raises(ValueError, match="n must be an integer >= 3"):
        sciax.ode.brusselator_2d(2)
