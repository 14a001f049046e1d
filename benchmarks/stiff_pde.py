"""Large stiff systems: the 2-D Brusselator by the method of lines, scipy BDF vs sciax.

The problem of SciMLBenchmarks and of the "large stiff systems" issue: on an
N x N periodic grid of [0, 1]^2 (spacing 1/(N-1), 2 N^2 states),
u_t = 1 + u^2 v - 4.4 u + alpha lap u + f(x, y, t), v_t = 3.4 u - u^2 v + alpha lap v,
alpha = 10, f = 5 in the disc (x-0.3)^2 + (y-0.6)^2 <= 0.01 for t >= 1.1,
u0 = 22 (y(1-y))^1.5, v0 = 27 (x(1-x))^1.5, t in [0, 11.5], rtol 1e-6, atol 1e-8.

Baseline: scipy `solve_ivp(method="BDF", jac_sparsity=...)` with a vectorised numpy
right-hand side (what a scipy user writes). sciax: its recommended methods for
this size (sparse Jacobian by colouring, SuperLU stage solves). The error is the
relative max-norm difference at t = 11.5 from a reference solved at rtol 1e-10
(scipy Radau with the sparse Jacobian at N = 32; sciax Rodas5P above, where
Radau takes minutes), stated in the output.

Run: python benchmarks/stiff_pde.py [--sizes 32 64 128]
Prints `name: value` lines (seconds are wall time after compilation, best of 2).
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import time  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import sciax  # noqa: E402

ALPHA, T_END, RTOL, ATOL = 10.0, 11.5, 1e-6, 1e-8


def setup(n):
    x = np.linspace(0.0, 1.0, n)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    disc = ((xx - 0.3) ** 2 + (yy - 0.6) ** 2 <= 0.01).astype(float)
    u0 = 22.0 * (yy * (1 - yy)) ** 1.5
    v0 = 27.0 * (xx * (1 - xx)) ** 1.5
    return np.concatenate([u0.ravel(), v0.ravel()]), disc, (n - 1) ** 2


def numpy_rhs(n, disc, inv_dx2):
    def lap(w):
        return inv_dx2 * (np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1) - 4 * w)

    def f(t, z):
        u, v = z.reshape(2, n, n)
        force = 5.0 * disc if t >= 1.1 else 0.0
        du = 1.0 + u * u * v - 4.4 * u + ALPHA * lap(u) + force
        dv = 3.4 * u - u * u * v + ALPHA * lap(v)
        return np.concatenate([du.ravel(), dv.ravel()])

    return f


def sciax_model(n, disc, inv_dx2):
    disc = jnp.asarray(disc)

    def lap(w):
        return inv_dx2 * (jnp.roll(w, 1, 0) + jnp.roll(w, -1, 0) + jnp.roll(w, 1, 1) + jnp.roll(w, -1, 1) - 4 * w)

    def f(t, z, alpha):
        u, v = z.reshape(2, n, n)
        force = jnp.where(t >= 1.1, 5.0, 0.0) * disc
        du = 1.0 + u * u * v - 4.4 * u + alpha * lap(u) + force
        dv = 3.4 * u - u * u * v + alpha * lap(v)
        return jnp.concatenate([du.ravel(), dv.ravel()])

    return sciax.ode.ODE(f)


def pattern(n):
    return sciax.linalg.stencil_pattern(sciax.grid.Grid((n, n), 1.0), 1, True, fields=2)


def timed(fn, repeats=2):
    out = fn()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def run_scipy(n, method="BDF", rtol=RTOL, atol=ATOL, repeats=2):
    z0, disc, inv_dx2 = setup(n)
    f = numpy_rhs(n, disc, inv_dx2)
    jac_sparsity = sp.csr_matrix(pattern(n), dtype=float)

    def go():
        sol = scipy.integrate.solve_ivp(
            f, (0, T_END), z0, method=method, rtol=rtol, atol=atol, jac_sparsity=jac_sparsity
        )
        assert sol.success, sol.message
        return sol.y[:, -1], sol.nfev, sol.nlu

    return timed(go, repeats)


def sciax_solver(n, method, rtol=RTOL, atol=ATOL):
    z0, disc, inv_dx2 = setup(n)
    model = sciax_model(n, disc, inv_dx2)
    ts = jnp.asarray([0.0, T_END])

    @jax.jit
    def solve(z0, alpha):
        sol = sciax.simulate(model, z0, ts, alpha, method=method, rtol=rtol, atol=atol, max_steps=100_000)
        return sol.ys[-1], sol.stats["num_steps"]

    return solve, jnp.asarray(z0)


def run_sciax(n, method, rtol=RTOL, atol=ATOL, repeats=2):
    solve, z0 = sciax_solver(n, method, rtol, atol)
    (y, steps), seconds = timed(lambda: jax.block_until_ready(solve(z0, ALPHA)), repeats)
    return (np.asarray(y), int(steps)), seconds


def methods(n):
    p = pattern(n)
    return {
        "bdf_sparse": sciax.ode.BDF(jacobian=p),
        "rodas5p_sparse": sciax.ode.Rodas5P(jacobian=p),
    }


def reference(n):
    if n <= 32:
        (y, _, _), _ = run_scipy(n, "Radau", 1e-10, 1e-12, repeats=0)
        return y, "scipy Radau rtol 1e-10"
    (y, _), _ = run_sciax(n, sciax.ode.Rodas5P(jacobian=pattern(n)), 1e-10, 1e-12, repeats=0)
    return y, "sciax Rodas5P rtol 1e-10"


def rel_error(y, ref):
    return float(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128])
    args = parser.parse_args()
    print(f"# Brusselator 2-D, float64, jax {jax.__version__}, backend {jax.default_backend()}, rtol {RTOL}")
    for n in args.sizes:
        ref, what = reference(n)
        print(f"# N = {n}: {2 * n * n} states; reference: {what}")
        (y, nfev, nlu), t_scipy = run_scipy(n)
        print(f"brusselator_n{n}_scipy_bdf_s: {t_scipy:.3g}")
        print(f"brusselator_n{n}_scipy_bdf_error: {rel_error(y, ref):.2g}")
        print(f"brusselator_n{n}_scipy_bdf_lu: {nlu}")
        for name, method in methods(n).items():
            (y, steps), seconds = run_sciax(n, method)
            print(f"brusselator_n{n}_{name}_s: {seconds:.3g}")
            print(f"brusselator_n{n}_{name}_error: {rel_error(y, ref):.2g}")
            print(f"brusselator_n{n}_{name}_steps: {steps}")
            print(f"brusselator_n{n}_{name}_over_scipy_bdf: {seconds / t_scipy:.2f}")


if __name__ == "__main__":
    main()
