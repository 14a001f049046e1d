"""Which method for a diffusion-dominated finite-difference model? Explicit vs stiff.

`sciax.pde.fd` models default to the explicit, adaptive `Tsit5`. This script measures
that choice against the stiff alternatives on the heat equation over one diffusion
time, where the explicit step is bounded by stability (`dt ≲ 3.3 / ρ(J)`, `ρ ≈ 4 D d / dx²`):

- 1-D, 200 and 800 cells: Tsit5, Kvaerno5 and Ros34PW2 with dense Jacobians, Ros34PW2 with
  matrix-free GMRES, and a CFL-limited fixed-step RK4;
- 2-D, 64² cells (4,096 states): Tsit5, Ros34PW2 + GMRES, fixed-step RK4 (dense
  Jacobians of 4,096 states are 134 MB and an LU per step: not run);
- the same 1-D problem against scipy's `solve_ivp(method="BDF")` with a sparse
  (tridiagonal) Jacobian, the user's alternative.

Run: python benchmarks/fd_stiff_default.py [--quick]
Prints `name: value` lines (time of one solve after compilation, median of repeats;
max error against the exact Fourier-mode solution). Asserts nothing.
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import lineax as lx  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import sciax  # noqa: E402

RTOL = ATOL = 1e-6
D = 1.0


def _laplacian_1d(n):
    # second-order Dirichlet closure: the ghost cell is the odd reflection -u_edge
    main = -2.0 * np.ones(n)
    main[0] = main[-1] = -3.0
    return sp.diags([np.ones(n - 1), main, np.ones(n - 1)], [-1, 0, 1], format="csr") * (D * n**2)


def _problem(n, ndim):
    # Cell-centred points, homogeneous Dirichlet walls at 0 and 1; a top-hat start excites every
    # mode, so stiffness shows as it does in practice (a single smooth mode would hide it).
    grid = sciax.pde.Grid((n,) * ndim, 1.0, points="centre")
    bc = tuple((sciax.pde.Dirichlet(0.0), sciax.pde.Dirichlet(0.0)) for _ in range(ndim))
    model = sciax.pde.fd.heat(grid, bc=bc)
    u0 = np.prod([(np.abs(x - 0.5) < 0.2).astype(float) for x in grid.meshgrid()], axis=0)
    ts = np.linspace(0.0, 0.1, 3)
    # the exact semi-discrete solution: exp(t A) along each axis (A is a Kronecker sum)
    propagator = scipy.linalg.expm(ts[-1] * _laplacian_1d(n).toarray())
    exact = u0
    for axis in range(ndim):
        exact = np.moveaxis(np.tensordot(propagator, exact, axes=([1], [axis])), 0, axis)
    return model, jnp.asarray(u0), ts, exact


def _fixed_dt(radius, ts):
    # 90 % of RK4's real-axis limit 2.785 / radius, rounded down so whole steps fill each interval
    interval = float(ts[1] - ts[0])
    return interval / np.ceil(interval / (0.9 * 2.785 / radius))


def _time(fn, repeats):
    out = jax.block_until_ready(fn())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _run(label, model, u0, ts, exact, method, repeats, **options):
    solve = jax.jit(lambda u: sciax.simulate(model, u, ts, {"D": D}, method=method, **options))
    seconds, sol = _time(lambda: solve(u0), repeats)
    err = float(np.max(np.abs(np.asarray(sol.ys[-1]) - exact)))
    steps = int(sol.stats["num_steps"]) if "num_steps" in sol.stats else -1
    print(f"{label}_time_s: {seconds:.4g}")
    print(f"{label}_steps: {steps}")
    print(f"{label}_max_error: {err:.2e}")
    return seconds


def _scipy_bdf(n, u0, ts, exact, repeats, label="scipy_bdf_sparse"):
    lap = _laplacian_1d(n)

    def solve():
        return solve_ivp(
            lambda t, u: lap @ u, (ts[0], ts[-1]), np.asarray(u0), method="BDF", rtol=RTOL, atol=ATOL, jac=lap
        )

    seconds, out = _time(solve, repeats)
    err = float(np.max(np.abs(out.y[:, -1] - exact)))
    print(f"{label}_time_s: {seconds:.4g}")
    print(f"{label}_steps: {out.t.size - 1}")
    print(f"{label}_max_error: {err:.2e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 1 if args.quick else 5
    gmres = sciax.ode.Ros34PW2(linear_solver=lx.GMRES(rtol=1e-8, atol=1e-8, restart=30))
    opts = {"rtol": RTOL, "atol": ATOL, "max_steps": 200_000}

    n1 = 50 if args.quick else 200
    model, u0, ts, exact = _problem(n1, 1)
    print(f"# heat 1-D, {n1} cells, t = 0.1 (rho(J) T = {0.1 * 4 * D * n1**2:.3g}), rtol = atol = {RTOL}")
    tsit5 = _run("heat1d_tsit5", model, u0, ts, exact, sciax.ode.Tsit5(), repeats, **opts)
    _run("heat1d_kvaerno5", model, u0, ts, exact, sciax.ode.Kvaerno5(), repeats, **opts)
    ros = _run("heat1d_ros34pw2_dense", model, u0, ts, exact, sciax.ode.Ros34PW2(), repeats, **opts)
    _run("heat1d_ros34pw2_gmres", model, u0, ts, exact, gmres, repeats, **opts)
    dt = _fixed_dt(4 * D * n1**2, ts)
    _run("heat1d_rk4_fixed", model, u0, ts, exact, sciax.pde.RK4(dt=dt), repeats)
    _scipy_bdf(n1, u0, ts, exact, repeats)
    print(f"heat1d_tsit5_over_ros34pw2_dense: {tsit5 / ros:.3g}")

    n_fine = 100 if args.quick else 800
    model, u0, ts, exact = _problem(n_fine, 1)
    print(f"# heat 1-D, {n_fine} cells (rho(J) T = {0.1 * 4 * D * n_fine**2:.3g})")
    tsit5 = _run("heat1d_fine_tsit5", model, u0, ts, exact, sciax.ode.Tsit5(), repeats, **opts)
    ros = _run("heat1d_fine_ros34pw2_dense", model, u0, ts, exact, sciax.ode.Ros34PW2(), repeats, **opts)
    _scipy_bdf(n_fine, u0, ts, exact, repeats, "scipy_bdf_sparse_fine")
    print(f"heat1d_fine_tsit5_over_ros34pw2_dense: {tsit5 / ros:.3g}")

    n2 = 16 if args.quick else 64
    model, u0, ts, exact = _problem(n2, 2)
    print(f"# heat 2-D, {n2}^2 cells, t = 0.1 (rho(J) T = {0.1 * 8 * D * n2**2:.3g})")
    tsit5 = _run("heat2d_tsit5", model, u0, ts, exact, sciax.ode.Tsit5(), repeats, **opts)
    ros = _run("heat2d_ros34pw2_gmres", model, u0, ts, exact, gmres, repeats, **opts)
    dt = _fixed_dt(8 * D * n2**2, ts)
    _run("heat2d_rk4_fixed", model, u0, ts, exact, sciax.pde.RK4(dt=dt), repeats)
    print(f"heat2d_tsit5_over_ros34pw2_gmres: {tsit5 / ros:.3g}")


if __name__ == "__main__":
    main()
