"""Mass-matrix DAEs `M y' = f` with the Rosenbrock methods, against exact solutions, scipy and the ODE form."""

import functools

import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest
import scipy.sparse
from scipy.integrate import solve_ivp

import sciax

TS = jnp.linspace(0.0, 3.0, 7)


def _linear(t, y, p):
    # y1' = -y1 + y2, 0 = y2 - a sin t: y2 = a sin t, y1 = a (sin t - cos t + e^-t) / 2 from y1(0) = 0.
    return jnp.stack([-y[0] + y[1], y[1] - p["a"] * jnp.sin(t)])


LINEAR = sciax.ode.ODE(_linear, mass_matrix=[1.0, 0.0])


def _linear_exact(t, a=1.0):
    t = np.asarray(t)
    return a * np.stack([(np.sin(t) - np.cos(t) + np.exp(-t)) / 2, np.sin(t)], -1)


@functools.partial(jax.jit, static_argnames="method")
def _fixed_steps(dt, method):
    # The step size traced: one compilation (consistent initialisation included) serves every dt.
    return sciax.simulate(
        LINEAR, jnp.array([0.0, 0.3]), TS, {"a": 1.0}, method=getattr(sciax.ode, method)(), dt0=dt, adaptive=False
    ).ys


@pytest.mark.parametrize(("method", "order"), [("Rodas5P", 5), ("Rodas4", 4), ("Ros3P", 3), ("Ros34PW2", 3)])
def test_order_on_a_dae_with_exact_solution(method, order):
    errors = []
    for dt in (0.1, 0.05, 0.025):
        ys = _fixed_steps(jnp.asarray(dt), method)
        errors.append(np.max(np.abs(np.asarray(ys) - _linear_exact(TS))))
    slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(slopes > order - 0.2), slopes


def _rober_dae(t, y, p):
    a, b, c = y
    return jnp.stack([-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b * b, a + b + c - 1.0])


def _rober_np(t, y):
    a, b, c = y
    return [-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b * b, 3e7 * b * b]


@pytest.mark.parametrize("method", ["Rodas5P", "Rodas4", "BDF"])
def test_robertson_dae_against_scipy_radau_on_the_ode_form(method):
    ts = np.array([0.0, 1.0, 10.0, 100.0, 1e3, 1e4])
    dae = sciax.ode.ODE(_rober_dae, mass_matrix=[1.0, 1.0, 0.0])
    sol = sciax.simulate(
        dae, jnp.array([1.0, 0.0, 0.0]), ts, None, method=getattr(sciax.ode, method)(), rtol=1e-8, atol=1e-10
    )
    ref = solve_ivp(_rober_np, (0, 1e4), [1.0, 0.0, 0.0], method="Radau", t_eval=ts, rtol=1e-11, atol=1e-14).y.T
    np.testing.assert_allclose(sol.ys, ref, rtol=1e-5, atol=1e-11)
    np.testing.assert_allclose(np.sum(sol.ys, -1), 1.0, atol=1e-14)  # the algebraic row holds exactly


G = 9.81


def _pendulum(t, s, p):
    """Index-1 pendulum (unit length, unit mass): the constraint differentiated twice gives λ."""
    x, y, u, v, lam = s
    return jnp.stack([u, v, -lam * x, -lam * y - G, u * u + v * v - G * y - lam * (x * x + y * y)])


def test_index1_pendulum_against_the_angle_form_and_keeps_its_constraint():
    theta0 = 0.6
    x0, y0 = np.sin(theta0), -np.cos(theta0)
    start = jnp.array([x0, y0, 0.0, 0.0, 0.0])  # λ inconsistent: solved first (λ = -g y0 at rest)
    model = sciax.ode.ODE(_pendulum, mass_matrix=[1.0, 1.0, 1.0, 1.0, 0.0])
    ts = np.linspace(0.0, 2.0, 9)
    sol = sciax.simulate(model, start, ts, None, method=sciax.ode.Rodas5P(), rtol=1e-10, atol=1e-10)
    ref = solve_ivp(lambda t, w: [w[1], -G * np.sin(w[0])], (0, 2), [theta0, 0.0], t_eval=ts, rtol=1e-12, atol=1e-12).y
    np.testing.assert_allclose(sol.ys[:, 0], np.sin(ref[0]), atol=1e-7)
    np.testing.assert_allclose(sol.ys[:, 1], -np.cos(ref[0]), atol=1e-7)
    np.testing.assert_allclose(sol.ys[:, 0] ** 2 + sol.ys[:, 1] ** 2, 1.0, atol=1e-7)
    np.testing.assert_allclose(sol.ys[0, 4], -G * y0, rtol=1e-12)


def test_consistent_initialisation_solves_or_refuses():
    t0 = 0.7
    ts = jnp.array([t0, 1.0])
    y = sciax.ode.consistent_initial_state(LINEAR, jnp.array([0.2, 5.0]), t0, {"a": 2.0})
    np.testing.assert_allclose(y, [0.2, 2.0 * np.sin(t0)], rtol=1e-12)  # the known algebraic value
    strict = sciax.ode.ODE(_linear, mass_matrix=[1.0, 0.0], consistent_init=False)
    with pytest.raises(ValueError, match="row 1"):
        sciax.simulate(strict, jnp.array([0.2, 5.0]), ts, {"a": 2.0}, method=sciax.ode.Rodas5P())
    ok = sciax.simulate(strict, jnp.array([0.2, 2.0 * np.sin(t0)]), ts, {"a": 2.0}, method=sciax.ode.Rodas5P())
    assert bool(ok.success)


def test_dae_under_jit_vmap_and_grad():
    run = jax.jit(
        lambda a: (
            sciax.simulate(
                LINEAR, jnp.array([0.0, 0.0]), TS, {"a": a}, method=sciax.ode.Rodas5P(), rtol=1e-10, atol=1e-10
            ).ys
        )
    )
    # The finite-difference solves ride in the same batch: one compiled program for all five.
    many = np.asarray(jax.vmap(run)(jnp.array([0.5, 1.0, 2.0, 1.0 + 1e-6, 1.0 - 1e-6])))
    for i, a in enumerate((0.5, 1.0, 2.0)):
        np.testing.assert_allclose(many[i], _linear_exact(TS, a), atol=1e-8)
    loss = lambda a: jnp.sum(run(a)[-1])  # noqa: E731
    fd = (np.sum(many[3, -1]) - np.sum(many[4, -1])) / 2e-6  # loss(1 + 1e-6) - loss(1 - 1e-6)
    gradient = jax.jit(jax.grad(loss))(1.0)  # one compiled program for the forward and backward pass
    np.testing.assert_allclose(gradient, fd, rtol=1e-6)
    np.testing.assert_allclose(gradient, np.sum(_linear_exact(TS[-1])), rtol=1e-6)  # linear in a


def test_dense_output_events_and_ensemble_fall_back():
    sol = sciax.simulate(
        LINEAR, jnp.array([0.0, 0.0]), TS, {"a": 1.0}, method=sciax.ode.Rodas5P(), rtol=1e-10, atol=1e-10, dense=True
    )
    np.testing.assert_allclose(sol.evaluate(1.3), _linear_exact(1.3), atol=1e-6)
    hit = sciax.simulate(
        LINEAR,
        jnp.array([0.0, 0.0]),
        TS,
        {"a": 1.0},
        method=sciax.ode.Rodas5P(),
        rtol=1e-10,
        atol=1e-10,
        event=lambda t, y, p, **kw: y[1] - 0.5,
    )
    np.testing.assert_allclose(hit.event_time, np.pi / 6, rtol=1e-7)  # the algebraic variable sin t reaches 1/2
    ens = sciax.ode.simulate_ensemble(
        LINEAR, jnp.zeros((2, 2)), TS, {"a": jnp.array([1.0, 2.0])}, method=sciax.ode.Rodas5P(), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(ens.ys[1], _linear_exact(TS, 2.0), atol=1e-8)


def test_bad_input():
    y0 = jnp.array([0.0, 0.0])
    with pytest.raises(TypeError, match="cannot solve M dy/dt = f"):
        sciax.simulate(LINEAR, y0, TS, {"a": 1.0}, method=sciax.ode.Tsit5())
    with pytest.raises(ValueError, match="state has 3 entries"):
        sciax.simulate(
            sciax.ode.ODE(lambda t, y, p: -y, mass_matrix=[1.0, 0.0]), jnp.ones(3), TS, None, method=sciax.ode.Rodas5P()
        )
    lopsided = sciax.ode.ODE(_linear, mass_matrix=[[1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="zero rows"):
        sciax.simulate(lopsided, y0, TS, {"a": 1.0}, method=sciax.ode.Rodas5P())
    index3 = sciax.ode.ODE(  # the pendulum with its position constraint: index 3
        lambda t, s, p: jnp.stack([s[2], s[3], -s[4] * s[0], -s[4] * s[1] - G, s[0] ** 2 + s[1] ** 2 - 1.0]),
        mass_matrix=[1.0, 1.0, 1.0, 1.0, 0.0],
    )
    with pytest.raises(ValueError, match="index > 1"):
        sciax.simulate(index3, jnp.array([0.6, -0.8, 0.0, 0.0, 0.0]), TS, None, method=sciax.ode.Rodas5P())
    with pytest.raises(ValueError, match="mass_matrix must be"):
        sciax.ode.ODE(_linear, mass_matrix=[[1.0, 0.0]])


@jax.jit
def _bdf_at_tolerance(tol):
    # The tolerance traced: one compilation serves both.
    return sciax.simulate(LINEAR, jnp.array([0.0, 0.3]), TS, {"a": 1.0}, method=sciax.ode.BDF(), rtol=tol, atol=tol).ys


def test_bdf_error_follows_the_tolerance_on_a_dae_with_exact_solution():
    # Variable order, so no single order: the error is proportional to rtol (Shampine's tolerance proportionality).
    errors = []
    for rtol in (1e-5, 1e-9):
        ys = _bdf_at_tolerance(jnp.asarray(rtol))
        errors.append(np.max(np.abs(np.asarray(ys) - _linear_exact(TS))))
        assert errors[-1] < 30 * rtol, (rtol, errors[-1])
    assert errors[0] / errors[-1] > 1e3, errors


def _heat_with_boundary_rows(t, u, p):
    """Method-of-lines heat equation; the boundary values are algebraic variables (zero mass rows)."""
    dx = 1.0 / (u.size - 1)
    inner = (u[:-2] - 2 * u[1:-1] + u[2:]) / dx**2
    return jnp.concatenate([jnp.stack([u[0] - p["g"] * jnp.sin(3 * t)]), inner, jnp.stack([u[-1]])])


def test_sparse_bdf_on_a_method_of_lines_dae_against_scipy_on_the_reduced_ode():
    n, g = 33, 0.2
    x = np.linspace(0.0, 1.0, n)
    dx = x[1]
    mass = np.ones(n)
    mass[[0, -1]] = 0.0
    model = sciax.ode.ODE(_heat_with_boundary_rows, mass_matrix=mass)
    pattern = scipy.sparse.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    start = jnp.asarray(np.sin(np.pi * x)).at[0].set(0.7)  # inconsistent boundary value: solved to g sin(0) = 0
    ts = np.linspace(0.0, 0.5, 6)

    def reduced(t, w):
        u = np.concatenate([[g * np.sin(3 * t)], w, [0.0]])
        return (u[:-2] - 2 * u[1:-1] + u[2:]) / dx**2

    ref = solve_ivp(reduced, (0, 0.5), np.sin(np.pi * x[1:-1]), method="Radau", t_eval=ts, rtol=1e-12, atol=1e-12).y.T
    methods = (
        sciax.ode.BDF(jacobian=pattern),
        sciax.ode.BDF(jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-10, atol=1e-14)),
        sciax.ode.Rodas5P(jacobian=pattern),
        sciax.ode.Rodas5P(jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-12, atol=1e-12)),
    )
    for method in methods:
        sol = sciax.simulate(model, start, ts, {"g": g}, method=method, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(sol.ys[:, 1:-1], ref, atol=2e-7)
        np.testing.assert_allclose(sol.ys[:, 0], g * np.sin(3 * ts), atol=1e-12)


def test_bdf_dae_under_jit_vmap_and_grad():
    run = jax.jit(
        lambda a: (
            sciax.simulate(
                LINEAR, jnp.array([0.0, 0.0]), TS, {"a": a}, method=sciax.ode.BDF(), rtol=1e-10, atol=1e-10
            ).ys
        )
    )
    # The finite-difference solves ride in the same batch: one compiled program for all four.
    many = np.asarray(jax.vmap(run)(jnp.array([0.5, 2.0, 1.0 + 1e-6, 1.0 - 1e-6])))
    for i, a in enumerate((0.5, 2.0)):
        np.testing.assert_allclose(many[i], _linear_exact(TS, a), atol=2e-8)
    loss = lambda a: jnp.sum(run(a)[-1])  # noqa: E731
    fd = (np.sum(many[2, -1]) - np.sum(many[3, -1])) / 2e-6  # loss(1 + 1e-6) - loss(1 - 1e-6)
    gradient = jax.jit(jax.grad(loss))(1.0)  # one compiled program for the forward and backward pass
    np.testing.assert_allclose(gradient, fd, rtol=1e-6)
    np.testing.assert_allclose(gradient, np.sum(_linear_exact(TS[-1])), rtol=1e-6)  # linear in a


@pytest.mark.parametrize("method", ["BDF", "Rodas5P"])
def test_a_mass_matrix_outside_the_sparsity_pattern_is_refused(method):
    mass = [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    model = sciax.ode.ODE(lambda t, y, p: jnp.stack([-y[0], -y[1], y[2] - 1.0]), mass_matrix=mass)
    pattern = scipy.sparse.identity(3, format="csr")
    with pytest.raises(ValueError, match=r"nonzero at \(0, 1\) outside"):
        sciax.simulate(model, jnp.ones(3), TS, None, method=getattr(sciax.ode, method)(jacobian=pattern))
