"""Rosenbrock methods (Rodas5P, Rodas4, Ros3P, Ros34PW2): order, stiff test problems, transforms, failures.

References: exact solutions (convergence, dense output), the IVP test set's published
HIRES solution, and scipy Radau at rtol 1e-12 for ROBER and POLLU.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import sciax

A3 = sciax.ode.ODE(lambda t, y, p: y * jnp.cos(t))  # exact exp(sin t); non-autonomous, so ∂f/∂t matters


@pytest.mark.parametrize(
    "name, order, steps",
    [
        ("Ros3P", 3, [10, 20, 40, 80]),
        ("Ros34PW2", 3, [40, 80, 160, 320]),
        ("Rodas4", 4, [40, 80, 160, 320]),
        ("Rodas5P", 5, [5, 10, 20, 40]),
        ("Ros34PW2-W", 3, [40, 80, 160, 320]),
        ("Ros3P-W", 1, [10, 20, 40, 80]),
    ],
)
def test_convergence_order(name, order, steps):
    # "-W": with half the true Jacobian. A W-method (Ros34PW2) keeps its order with any
    # approximation; ROS3P, whose order conditions assume the exact Jacobian, drops to 1.
    base, _, w = name.partition("-")
    method = getattr(sciax.ode, base)(**({"jacobian": lambda t, y, p: 0.5 * jnp.cos(t) * jnp.eye(1)} if w else {}))

    @jax.jit
    def final(dt):
        sol = sciax.simulate(
            A3, jnp.array([1.0]), jnp.array([0.0, 2.0]), method=method, dt0=dt, adaptive=False, max_steps=400
        )
        return sol.ys[-1, 0]

    dts = 2.0 / np.array(steps)
    errors = [abs(float(final(dt)) - np.exp(np.sin(2.0))) for dt in dts]
    slopes = np.diff(np.log(errors)) / np.diff(np.log(dts))
    assert abs(slopes[-1] - order) < 0.2, (errors, slopes)


@pytest.mark.parametrize(
    "name, tol, check",
    [("Rodas5P", 1e-8, 2e-6), ("Rodas4", 1e-8, 2e-6), ("Ros3P", 1e-5, 2e-3), ("Ros34PW2", 1e-5, 2e-3)],
)
def test_dense_output_between_steps(name, tol, check):
    # Output times fall between steps, so they come from the dense output.
    ts = jnp.linspace(0.0, 3.0, 301)
    sol = sciax.simulate(A3, jnp.array([1.0]), ts, method=getattr(sciax.ode, name)(), rtol=tol, atol=tol)
    assert int(sol.stats["num_accepted_steps"]) < 150
    np.testing.assert_allclose(np.asarray(sol.ys[:, 0]), np.exp(np.sin(np.asarray(ts))), rtol=check)


# HIRES at t = 321.8122: Mazzia & Magherini, Test Set for IVP Solvers (release 2.4), HIRES reference solution.
HIRES_REFERENCE = np.array(
    [
        0.7371312573325668e-3,
        0.1442485726316185e-3,
        0.5888729740967575e-4,
        0.1175651343283149e-2,
        0.2386356198831331e-2,
        0.6238968252742796e-2,
        0.2849998395185769e-2,
        0.2850001604814231e-2,
    ]
)


@functools.cache
def _radau_reference(name):
    model, y0, t1, p = sciax.ode.stiff_problem(name)
    f = jax.jit(lambda t, y: model.rhs(t, y, p))
    jac = jax.jit(jax.jacfwd(lambda t, y: model.rhs(t, y, p), argnums=1))
    ref = solve_ivp(
        lambda t, y: np.asarray(f(t, y)),
        (0.0, t1),
        np.asarray(y0),
        method="Radau",
        rtol=1e-12,
        atol=1e-14,
        jac=lambda t, y: np.asarray(jac(t, y)),
    )
    assert ref.success
    return ref.y[:, -1]


@pytest.mark.parametrize(
    "name, method, rtol, atol, rtol_check, max_steps",
    [
        ("hires", "Rodas5P", 1e-8, 1e-10, 1e-5, 1000),
        ("hires", "Rodas4", 1e-8, 1e-10, 1e-5, 1000),
        ("rober", "Rodas5P", 1e-8, 1e-14, 1e-5, 1000),
        ("pollu", "Rodas5P", 1e-8, 1e-10, 1e-5, 1000),
        # A third-order method at a tolerance that suits it.
        ("rober", "Ros34PW2", 1e-6, 1e-12, 1e-4, 2000),
    ],
)
def test_stiff_test_set(name, method, rtol, atol, rtol_check, max_steps):
    model, y0, t1, p = sciax.ode.stiff_problem(name)
    sol = sciax.simulate(
        model, y0, jnp.array([0.0, t1]), p, method=getattr(sciax.ode, method)(), rtol=rtol, atol=atol, max_steps=10_000
    )
    ref = HIRES_REFERENCE if name == "hires" else _radau_reference(name)
    got = np.asarray(sol.ys[-1])
    # Relative error on components above the absolute-tolerance floor.
    big = np.abs(ref) > 1e-9
    np.testing.assert_allclose(got[big], ref[big], rtol=rtol_check)
    assert int(sol.stats["num_steps"]) < max_steps


def test_hires_reference_agrees_with_scipy():
    np.testing.assert_allclose(_radau_reference("hires"), HIRES_REFERENCE, rtol=1e-8)


ROBER_TS = jnp.array([0.0, 1e-3, 1.0, 40.0])
ROBER_K = {"k1": 0.04, "k2": 3e7, "k3": 1e4}


def _rober(y0, k, method=None, **kw):
    return sciax.simulate(
        sciax.ode.robertson(), y0, ROBER_TS, k, method=method or sciax.ode.Rodas5P(), rtol=1e-8, atol=1e-10, **kw
    ).ys


def test_vmap_and_grad_through_rodas5p():
    y0 = jnp.array([1.0, 0.0, 0.0])
    scales = jnp.array([0.9, 1.0, 1.1])
    batch = jax.vmap(lambda s: _rober(y0, {**ROBER_K, "k1": 0.04 * s})[-1])(scales)
    single = _rober(y0, {**ROBER_K, "k1": 0.04 * 1.1})[-1]
    np.testing.assert_allclose(np.asarray(batch[2]), np.asarray(single), rtol=1e-10)

    # Gradient through the cheaper Ros3P (same engine), to keep the compile short.
    # Both compiled: op by op, the backward pass dispatches each primitive of the adjoint on its own.
    loss = jax.jit(lambda k1: _rober(y0, {**ROBER_K, "k1": k1}, sciax.ode.Ros3P())[2, 0])
    grad = jax.jit(jax.grad(loss))(0.04)
    eps = 1e-6
    fd = (loss(0.04 + eps) - loss(0.04 - eps)) / (2 * eps)
    np.testing.assert_allclose(float(grad), float(fd), rtol=1e-4)


def test_user_jacobian_matches_jacfwd():
    y0 = jnp.array([1.0, 0.0, 0.0])
    jac = jax.jacfwd(lambda t, y, p: sciax.ode.robertson().rhs(t, y, p), argnums=1)
    a = _rober(y0, ROBER_K, sciax.ode.Ros3P(jacobian=jac))
    b = _rober(y0, ROBER_K, sciax.ode.Ros3P())
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-16)


def _heat(n):
    """Method-of-lines heat equation u_t = D u_xx on (0, 1), u = 0 at both ends."""
    dx = 1.0 / (n + 1)

    def rhs(t, u, d):
        padded = jnp.pad(u, 1)
        return d * (padded[2:] - 2 * u + padded[:-2]) / dx**2

    x = jnp.linspace(dx, 1 - dx, n)
    return sciax.ode.ODE(rhs), jnp.sin(jnp.pi * x)


def test_matrix_free_large_system_never_forms_the_jacobian():
    n = 10_000
    model, u0 = _heat(n)
    d = 1e-5  # stiff (hγ·4D/dx² up to ~1e3) yet GMRES converges without a preconditioner
    method = sciax.ode.Ros34PW2(linear_solver=lx.GMRES(rtol=1e-10, atol=1e-12, restart=30, max_steps=300))
    ts = jnp.array([0.0, 1.0])

    def run(u0):
        return sciax.simulate(model, u0, ts, d, method=method, rtol=1e-5, atol=1e-8).ys

    traced = jax.jit(run).trace(u0)  # one trace, inspected and then compiled
    jaxpr = traced.jaxpr.jaxpr
    sizes = [np.prod(v.aval.shape) for eqn in _all_eqns(jaxpr) for v in eqn.outvars if hasattr(v.aval, "shape")]
    assert max(sizes) < n * n / 100  # nothing close to a dense n x n matrix is ever built
    ys = traced.lower().compile()(u0)
    # Exact decay of the lowest mode, up to the spatial discretisation error.
    lam = 4 * d * (n + 1) ** 2 * np.sin(np.pi / (2 * (n + 1))) ** 2
    np.testing.assert_allclose(np.asarray(ys[-1]), np.exp(-lam) * np.asarray(u0), atol=1e-6)


def _all_eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jax.core.subjaxprs(eqn.params) if hasattr(jax.core, "subjaxprs") else _subjaxprs(eqn):
            yield from _all_eqns(sub)


def _subjaxprs(eqn):
    for value in eqn.params.values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if hasattr(item, "jaxpr") and hasattr(item.jaxpr, "eqns"):
                yield item.jaxpr
            elif hasattr(item, "eqns"):
                yield item


def test_auto_picks_by_stiffness():
    auto = sciax.ode.Auto()
    lv = sciax.ode.lotka_volterra()
    lv_p = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}
    ts = jnp.linspace(0.0, 40.0, 5)
    assert isinstance(auto.choose(lv, jnp.array([30.0, 4.0]), ts, lv_p), sciax.ode.Tsit5)
    y0 = jnp.array([1.0, 0.0, 0.0])
    assert isinstance(auto.choose(sciax.ode.robertson(), y0, ROBER_TS, ROBER_K), sciax.ode.Rodas5P)
    sol = sciax.simulate(sciax.ode.robertson(), y0, ROBER_TS, ROBER_K, method=auto, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(sol.ys), np.asarray(_rober(y0, ROBER_K)), rtol=1e-12)


# y' = -y / (1 - t): the Jacobian is infinite at t = 1 and the stages are NaN beyond it.
SINGULAR = sciax.ode.ODE(lambda t, y, p: -y / (1.0 - t) ** 2 * jnp.where(t < 1.0, 1.0, jnp.nan))


def test_singular_stage_rejects_step_and_retries_smaller():
    # A step that crosses the pole fails; it is rejected and retried, and the solve reaches t = 0.9.
    sol = sciax.simulate(
        SINGULAR, jnp.array([1.0]), jnp.array([0.0, 0.9]), method=sciax.ode.Rodas4(), dt0=0.5, rtol=1e-8, atol=1e-10
    )
    assert bool(sol.success)
    assert int(sol.stats["num_rejected_steps"]) >= 1
    np.testing.assert_allclose(float(sol.ys[-1, 0]), np.exp(1.0 - 1.0 / 0.1), rtol=1e-5)


def test_persistent_failure_names_time_and_step_size():
    model = sciax.ode.ODE(lambda t, y, p: jnp.where(t < 0.5, -y, jnp.nan))
    ts = jnp.array([0.0, 1.0])
    with pytest.raises(Exception, match=r"step size .* at t = 0\.5"):
        jax.block_until_ready(sciax.simulate(model, jnp.array([1.0]), ts, method=sciax.ode.Ros3P()).ys)
    sol = sciax.simulate(model, jnp.array([1.0]), ts, method=sciax.ode.Ros3P(), throw=False)
    assert not bool(sol.success)


def test_persistent_failure_of_one_vmapped_member_is_reported():
    # The report runs only when some member failed; it names the failing member's time.
    model = sciax.ode.ODE(lambda t, y, p: jnp.where(t < p, -(y**2), jnp.nan))  # y = 1 / (1 + t)
    ts = jnp.array([0.0, 1.0])
    solve = jax.vmap(lambda p: sciax.simulate(model, jnp.array([1.0]), ts, p, method=sciax.ode.Ros3P()).ys)
    with pytest.raises(Exception, match=r"step size .* at t = 0\.5"):
        jax.block_until_ready(solve(jnp.array([2.0, 0.5])))
    np.testing.assert_allclose(np.asarray(solve(jnp.array([2.0, 3.0])))[:, -1, 0], 0.5, rtol=1e-5)


def test_ros3p_error_estimate_is_blind_on_linear_autonomous_problems():
    # The documented caveat: stage 2 repeats stage 1 when f is linear, so the pair agrees.
    import diffrax

    a = jnp.array([[-2.0, 1.0], [0.5, -3.0]])
    linear, nonlinear = (lambda t, y, p: a @ y), (lambda t, y, p: a @ y - y**2)
    for method, f, blind in (("Ros3P", linear, True), ("Ros3P", nonlinear, False), ("Ros34PW2", linear, False)):
        solver = getattr(sciax.ode, method)().diffrax_solver(1e-6, 1e-6, True)
        _, err, *_ = solver.step(
            diffrax.ODETerm(f), jnp.asarray(0.0), jnp.asarray(0.2), jnp.array([1.0, 0.5]), None, jnp.asarray(1.0), False
        )
        assert (float(jnp.max(jnp.abs(err))) < 1e-15) == blind, method
    # So Ros34PW2 meets the tolerance on y' = -y, where Ros3P's steps grow unchecked.
    sol = sciax.simulate(
        sciax.ode.ODE(lambda t, y, p: -y),
        jnp.array([1.0]),
        jnp.array([0.0, 1.0]),
        method=sciax.ode.Ros34PW2(),
        rtol=1e-6,
        atol=1e-6,
    )
    np.testing.assert_allclose(float(sol.ys[-1, 0]), np.exp(-1.0), rtol=2e-5)


def test_bad_options_name_the_argument():
    with pytest.raises(ValueError, match="jacobian"):
        sciax.ode.Rodas5P(jacobian="finite-differences")
    with pytest.raises(TypeError, match="linear_solver"):
        sciax.ode.Rodas5P(linear_solver="lu")
    with pytest.raises(ValueError, match="iterative"):
        sciax.ode.Rodas5P(jacobian="jvp")
    bad_jac = sciax.ode.Rodas5P(jacobian=lambda t, y, p: jnp.eye(2))
    with pytest.raises(ValueError, match=r"jacobian.*\(2, 2\).*\(3, 3\)"):
        _rober(jnp.array([1.0, 0.0, 0.0]), ROBER_K, bad_jac)


def test_stats_count_evaluations():
    sol = sciax.simulate(
        A3, jnp.array([1.0]), jnp.array([0.0, 1.0]), method=sciax.ode.Rodas5P(), dt0=0.1, adaptive=False
    )
    assert int(sol.stats["num_steps"]) == 10
    assert int(sol.stats["num_rhs_evals"]) == 80
    assert int(sol.stats["num_jacobian_evals"]) == 10


def test_solver_is_a_diffrax_solver():
    # Usable directly with diffrax.diffeqsolve (users can reach the underlying object).
    import diffrax

    solver = sciax.ode.Rodas5P().diffrax_solver(1e-8, 1e-8, True)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, a: y * jnp.cos(t)),
        solver,
        0.0,
        2.0,
        None,
        jnp.array([1.0]),
        stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-8),
    )
    np.testing.assert_allclose(float(sol.ys[-1, 0]), np.exp(np.sin(2.0)), rtol=1e-6)
    assert eqx.is_array(sol.stats["num_steps"])
