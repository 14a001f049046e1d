"""FD equation catalogue: exact solutions, manufactured boundary problems, CFL, bad input (float64)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax.pde import fd

P = sciax.pde.Periodic()


@pytest.mark.parametrize("order", (2, 4))
def test_heat_fourier_mode_decay(order):
    g = sciax.pde.Grid(32, 2 * np.pi)
    (x,) = g.coords()
    k, D, T = 3, 0.1, 0.5
    ts = jnp.linspace(0, T, 6)
    sol = sciax.simulate(
        fd.heat(g, bc=P, order=order), jnp.asarray(np.sin(k * x)), ts, {"D": D}, method=sciax.pde.RK4(1e-3)
    )
    # The semi-discrete decay rate is D times the stencil's symbol at k h; the continuum one D k^2.
    exact = np.exp(-D * k**2 * T) * np.sin(k * x)
    assert np.max(np.abs(sol.ys[-1] - exact)) < (1e-2 if order == 2 else 5e-4)
    if order == 2:  # the exact semi-discrete rate of the 3-point stencil: D (2 sin(k h / 2) / h)^2
        h = g.spacing[0]
        semi = np.exp(-D * (2 * np.sin(k * h / 2) / h) ** 2 * T) * np.sin(k * x)
        assert np.max(np.abs(sol.ys[-1] - semi)) < 1e-10


def _quadratic_problem(n, bc_kind):
    # u = x^2 + 2 D t solves u_t = D u_xx on [0, 1]; cell-centred points, faces at 0 and 1.
    D, h = 0.5, 1.0 / n
    g = sciax.pde.Grid(n, 1.0, origin=h / 2)
    (x,) = g.coords()
    if bc_kind == "dirichlet":
        bc = ((sciax.pde.Dirichlet(lambda t: 2 * D * t), sciax.pde.Dirichlet(lambda t: 1 + 2 * D * t)),)
    else:  # outward normal derivatives -u_x(0) = 0 and u_x(1) = 2
        bc = ((sciax.pde.Neumann(0.0), sciax.pde.Neumann(2.0)),)
    ts = jnp.array([0.0, 0.1])
    sol = sciax.simulate(fd.heat(g, bc=bc), jnp.asarray(x**2), ts, {"D": D}, method=sciax.pde.RK4(0.2 * h**2))
    return np.max(np.abs(sol.ys[-1] - (x**2 + 2 * D * 0.1)))


@pytest.mark.parametrize("bc_kind", ("dirichlet", "neumann"))
def test_dirichlet_neumann_manufactured(bc_kind):
    errs = [_quadratic_problem(n, bc_kind) for n in (10, 20)]
    assert errs[1] < 1e-2
    if errs[0] > 1e-12:  # exact for quadratics where the closure is; otherwise second order
        assert -np.log2(errs[1] / errs[0]) > 1.7, errs


def test_heat_dirichlet_sine_with_tsit5_and_implicit():
    n, D = 24, 0.2
    h = 1.0 / n
    g = sciax.pde.Grid(n, 1.0, origin=h / 2)
    (x,) = g.coords()
    model = fd.heat(g, bc=sciax.pde.Dirichlet(0.0))
    ts = jnp.linspace(0, 0.3, 4)
    exact = np.exp(-D * np.pi**2 * 0.3) * np.sin(np.pi * x)
    for method in (sciax.ode.Tsit5(), sciax.ode.Kvaerno5()):
        sol = sciax.simulate(model, jnp.asarray(np.sin(np.pi * x)), ts, {"D": D}, method=method, rtol=1e-8, atol=1e-10)
        assert np.max(np.abs(sol.ys[-1] - exact)) < 2e-3
    ds = sol.to_xarray()
    assert ds["u"].dims == ("time", "x")


def test_rk4_cfl_error_states_limit():
    g = sciax.pde.Grid(32, 1.0)
    model = fd.heat(g, bc=P)
    limit = 2.785293563405282 / (4 * 1.0 / g.spacing[0] ** 2)
    with pytest.raises(ValueError, match=f"largest stable dt is {limit:.6g}"):
        sciax.simulate(model, jnp.zeros(32), jnp.array([0.0, 0.1]), {"D": 1.0}, method=sciax.pde.RK4(0.1))
    # Under jit (traced params) the check runs at run time.
    check = jax.jit(lambda p: sciax.pde.RK4(0.1).check_stable_step(model, p, jnp.zeros(32)))
    with pytest.raises(Exception, match="CFL"):
        jax.block_until_ready(check({"D": 1.0}))


def test_advection_diffusion_schemes_and_sponge():
    g = sciax.pde.Grid(64, 1.0)
    (x,) = g.coords()
    u0 = jnp.asarray(np.exp(-100 * (x - 0.5) ** 2))
    ts = jnp.array([0.0, 0.25])
    p = {"velocity": (1.0,), "D": 1e-3}
    for scheme in ("central", "upwind", "weno5"):
        sol = sciax.simulate(fd.advection_diffusion(g, bc=P, scheme=scheme), u0, ts, p, method=sciax.pde.RK4(2e-3))
        shifted = np.exp(-100 * (((x - 0.75) + 0.5) % 1 - 0.5) ** 2)
        tol = {"upwind": 0.3, "central": 0.1, "weno5": 0.05}[scheme]
        assert np.max(np.abs(sol.ys[-1] - shifted)) < tol, scheme
    # A sponge on both sides damps what reaches it (mass decreases); Neumann alone conserves it.
    sponge = fd.advection_diffusion(g, bc=sciax.pde.Sponge(12, 200.0), scheme="weno5")
    sol = sciax.simulate(sponge, u0, jnp.array([0.0, 0.6]), p, method=sciax.pde.RK4(2e-3))
    assert float(jnp.sum(sol.ys[-1])) < 0.1 * float(jnp.sum(u0))


def test_burgers_gray_scott_fitzhugh_nagumo_run():
    g = sciax.pde.Grid(64, 2 * np.pi)
    (x,) = g.coords()
    sol = sciax.simulate(
        fd.burgers(g, bc=P), jnp.asarray(np.sin(x)), jnp.array([0.0, 1.5]), {"nu": 1e-3}, method=sciax.pde.RK4(0.01)
    )
    u = sol.ys[-1]
    assert bool(jnp.all(jnp.isfinite(u))) and float(jnp.max(jnp.abs(u))) <= 1.0 + 1e-2  # shock, no overshoot
    g2 = sciax.pde.Grid((16, 16), 16.0)
    y0 = {"u": jnp.ones((16, 16)), "v": jnp.zeros((16, 16)).at[6:10, 6:10].set(0.5)}
    gs = sciax.simulate(
        fd.gray_scott(g2, bc=P),
        y0,
        jnp.array([0.0, 2.0]),
        {"Du": 0.2, "Dv": 0.1, "F": 0.04, "k": 0.06},
        method=sciax.pde.RK4(0.1),
    )
    assert set(gs.to_xarray().data_vars) == {"u", "v"}
    fhn = sciax.simulate(
        fd.fitzhugh_nagumo(g2, bc=sciax.pde.Neumann()),
        y0,
        jnp.array([0.0, 1.0]),
        {"Du": 0.1, "Dv": 1.0, "epsilon": 0.1, "a": 1.0, "b": 0.0},
        method=sciax.pde.RK4(0.05),
    )
    assert bool(jnp.all(jnp.isfinite(fhn.ys["u"])))


def test_grad_through_heat():
    g = sciax.pde.Grid(16, 1.0)
    (x,) = g.coords()
    model = fd.heat(g, bc=P)

    def loss(d):
        sol = sciax.simulate(
            model,
            jnp.asarray(np.sin(2 * np.pi * x)),
            jnp.array([0.0, 0.05]),
            {"D": d},
            method=sciax.pde.RK4(1e-3, checkpoint=8),
        )
        return jnp.sum(sol.ys[-1] ** 2)

    eps = 1e-6
    fd_grad = (loss(0.1 + eps) - loss(0.1 - eps)) / (2 * eps)
    np.testing.assert_allclose(jax.grad(loss)(0.1), fd_grad, rtol=1e-6)


def test_bad_input():
    g = sciax.pde.Grid(16, 1.0)
    with pytest.raises(ValueError, match=r"shape \(15,\).*grid has shape \(16,\)"):
        fd.laplacian(jnp.zeros(15), g, bc=P)
    with pytest.raises(ValueError, match="order must be one of"):
        fd.laplacian(jnp.zeros(16), g, bc=P, order=3)
    with pytest.raises(ValueError, match="order must be one of"):
        fd.heat(g, bc=P, order=10)
    with pytest.raises(ValueError, match="CPML"):
        fd.heat(g, bc=sciax.pde.CPML(4))
    with pytest.raises(ValueError, match="both sides"):
        fd.heat(g, bc=((sciax.pde.Periodic(), sciax.pde.Neumann()),))
    with pytest.raises(ValueError, match=r'params\["D"\] must be > 0'):
        sciax.simulate(fd.heat(g, bc=P), jnp.zeros(16), jnp.array([0.0, 1e-4]), {"D": -1.0}, method=sciax.pde.RK4(1e-5))
    with pytest.raises(ValueError, match=r"has shape \(8,\), but the grid has shape \(16,\)"):
        sciax.simulate(fd.heat(g, bc=P), jnp.zeros(8), jnp.array([0.0, 1e-4]), {"D": 1.0}, method=sciax.pde.RK4(1e-5))
    with pytest.raises(ValueError, match="scheme must be one of"):
        fd.advection_diffusion(g, bc=P, scheme="lax")


def _heat_on_a_rod():
    """Heat on [0, 1] with zero ends: model, a sine start, output times and the eager RK4 solution."""
    g = sciax.pde.Grid((32,), (1.0,), origin=(1 / 64,))
    model = sciax.pde.fd.heat(g, bc=sciax.pde.Dirichlet(0.0))
    u0 = jnp.sin(jnp.pi * jnp.asarray(g.coords()[0]))
    ts = np.linspace(0.0, 0.01, 3)
    return model, u0, ts, sciax.simulate(model, u0, ts, {"D": 1.0}, method=sciax.pde.RK4(1e-4)).ys


def test_fixed_step_under_jit_with_python_number_params():
    # Under jax.jit the CFL limit is traced even for plain-number params; the run-time
    # check must thread onto the state, not onto params (which hold no arrays).
    model, u0, ts, eager = _heat_on_a_rod()
    jitted = jax.jit(lambda u: sciax.simulate(model, u, ts, {"D": 1.0}, method=sciax.pde.RK4(1e-4)).ys)(u0)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-12)
    with pytest.raises(Exception, match="CFL"):
        jax.jit(lambda u: sciax.simulate(model, u, ts, {"D": 1.0}, method=sciax.pde.RK4(5e-3)).ys)(
            u0
        ).block_until_ready()


def test_array_params_closed_over_by_jit():
    # A concrete jax array closed over by a jitted function is known at trace time: the positivity
    # check reads it (and refuses a bad one then) instead of staging a test it cannot decide.
    model, u0, ts, eager = _heat_on_a_rod()
    good, bad = {"D": jnp.asarray(1.0)}, {"D": jnp.asarray(-1.0)}
    jitted = jax.jit(lambda u: sciax.simulate(model, u, ts, good, method=sciax.pde.RK4(1e-4)).ys)(u0)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-12)
    with pytest.raises(ValueError, match=r'params\["D"\] must be > 0 everywhere, got minimum -1.0'):
        jax.jit(lambda u: sciax.simulate(model, u, ts, bad, method=sciax.pde.RK4(1e-4)).ys)(u0)
    # BDF's sparsity check runs the right-hand side under jit with the caller's params closed over.
    sparse = sciax.simulate(model, u0, ts, good, method=sciax.ode.BDF(jacobian="sparse"), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(sparse.ys), np.asarray(eager), atol=1e-6)
