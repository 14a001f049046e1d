"""Newton–Krylov (Bratu, reaction–diffusion steady state) and implicit heat stepping."""

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize

import sciax
from sciax import linalg as la
from sciax.pde import Dirichlet, Grid, fd


def test_bratu_1d_fold_matches_known_critical_lambda():
    # u'' + lam e^u = 0 on (0, 1), u = 0 at both ends; the branch folds at lam_c = 3.51383
    # (Bratu problem; e.g. Boyd, Appl. Math. Comput. 142 (2003) 189). Amplitude continuation:
    # unknowns (u, lam) with mean(u) = mu prescribed, so Newton passes the fold regularly.
    n = 64
    grid = Grid(n, 1.0, origin=0.5 / n)
    op = la.laplacian_operator(grid, Dirichlet())
    x = grid.coords()[0]

    def residual(y, mu):
        u, lam = y
        return op.mv(u) + lam * jnp.exp(u), jnp.mean(u) - mu

    def lam_of(mu):
        y0 = (mu * 6 * x * (1 - x), jnp.asarray(3.0))
        return la.newton_krylov(residual, y0, mu, restart=n + 1).value[1]

    mus = jnp.linspace(0.55, 0.95, 9)
    lams = np.asarray(jax.jit(jax.vmap(lam_of))(mus))
    k = int(np.argmax(lams))
    assert 0 < k < len(mus) - 1  # an interior maximum: the fold
    coef = np.polyfit(np.asarray(mus[k - 1 : k + 2]), lams[k - 1 : k + 2], 2)
    lam_c = np.polyval(coef, -coef[1] / (2 * coef[0]))
    assert abs(lam_c - 3.513830719) < 3e-3, lam_c


def _dense_lap(n):
    a = np.diag(-2.0 * np.ones(n)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
    a[0, 0] = a[-1, -1] = -3.0
    a *= n**2
    return np.kron(a, np.eye(n)) + np.kron(np.eye(n), a)


def test_bratu_2d_multigrid_preconditioned_against_dense_newton():
    n, lam = 16, 6.0
    grid = Grid((n, n), 1.0, origin=(0.5 / n,) * 2)
    op = la.laplacian_operator(grid, Dirichlet())
    sol = la.newton_krylov(
        lambda u, p: op.mv(u) + p * jnp.exp(u), jnp.zeros(grid.shape), lam, preconditioner=la.Multigrid(op)
    )
    lap = _dense_lap(n)
    u = np.zeros(n * n)
    for _ in range(20):  # independent dense Newton
        u -= np.linalg.solve(lap + lam * np.diag(np.exp(u)), lap @ u + lam * np.exp(u))
    np.testing.assert_allclose(np.asarray(sol.value).reshape(-1), u, atol=1e-8)
    assert int(sol.stats["num_steps"]) <= 8


def test_reaction_diffusion_steady_state_against_scipy():
    # u_t = lap u - u + v^2 + 1, v_t = 0.5 lap v - v + u/2, Dirichlet 0 (a dict state).
    n = 12
    grid = Grid(n, 1.0, origin=0.5 / n)
    tend = lambda t, y, p, m: {  # noqa: E731
        "u": fd.laplacian(y["u"], m.grid, bc=m.halo) - y["u"] + y["v"] ** 2 + p,
        "v": 0.5 * fd.laplacian(y["v"], m.grid, bc=m.halo) - y["v"] + y["u"] / 2,
    }
    model = sciax.pde.FDModel(grid, tend, bc=Dirichlet())
    y0 = {"u": jnp.zeros(n), "v": jnp.zeros(n)}
    sol = la.steady_state(model, y0, jnp.asarray(1.0))
    f = lambda z: np.concatenate([np.asarray(a) for a in model.rhs(0.0, {"u": z[:n], "v": z[n:]}, 1.0).values()])  # noqa: E731
    ref = scipy.optimize.fsolve(f, np.zeros(2 * n), xtol=1e-12)
    np.testing.assert_allclose(np.concatenate([sol.value["u"], sol.value["v"]]), ref, atol=1e-8)


def test_implicit_heat_far_above_explicit_limit():
    n, d, t_end = 32, 1.0, 0.1
    grid = Grid(n, 1.0, origin=0.5 / n)
    model = fd.heat(grid, bc=Dirichlet())
    x = grid.coords()[0]
    u0 = jnp.sin(np.pi * x)
    # Exact decay rate of the discrete sine mode, so only the time error remains.
    rate = 4 * n**2 * np.sin(np.pi / (2 * n)) ** 2
    exact = np.exp(-rate * t_end) * np.sin(np.pi * x)
    explicit_limit = 2.785 / (4 * n**2)
    pc = lambda m, p, g: la.Multigrid(la.diffusion_operator(m.grid, p["D"], m.halo.sides, scale=-g, shift=1.0))  # noqa: E731
    errs = {}
    for dt in (0.02, 0.01):
        assert dt > 10 * explicit_limit
        ts = np.linspace(0.0, t_end, 2)
        be = sciax.simulate(model, u0, ts, {"D": d}, method=sciax.pde.BackwardEuler(dt))
        cn = sciax.simulate(
            model, u0, ts, {"D": d}, method=sciax.pde.CrankNicolson(dt, method="cg", symmetric=True, preconditioner=pc)
        )
        errs[dt] = (float(np.abs(be.ys[-1] - exact).max()), float(np.abs(cn.ys[-1] - exact).max()))
    assert 1.7 < errs[0.02][0] / errs[0.01][0] < 2.3  # first order
    assert 3.5 < errs[0.02][1] / errs[0.01][1] < 4.5  # second order
    assert errs[0.01][1] < 1e-3
