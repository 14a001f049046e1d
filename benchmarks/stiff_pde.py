"""Large stiff systems: the 2-D Brusselator by the method of lines, scipy BDF vs sciax.

The problem of SciMLBenchmarks and of the "large stiff systems" issue: on an
N x N periodic grid of [0, 1]^2 (spacing 1/(N-1), 2 N^2 states),
u_t = 1 + u^2 v - 4.4 u + alpha lap u + f(x, y, t), v_t = 3.4 u - u^2 v + alpha lap v,
alpha = 10, f = 5 in the disc (x-0.3)^2 + (y-0.6)^2 <= 0.01 for t >= 1.1,
u0 = 22 (y(1-y))^1.5, v0 = 27 (x(1-x))^1.5, t in [0, 11.5], rtol 1e-6, atol 1e-8.

Baseline: scipy `solve_ivp(method="BDF", jac_sparsity=...)` with a vectorised numpy
right-hand side (what a scipy user writes). sciax: `BDF` matrix-free (Newton–Krylov:
GMRES on Jacobian–vector products, preconditioned by the FFT inverse of
I - c alpha lap, `sciax.ode.DiffusionPreconditioner`), and the sparse-direct methods
(Jacobian by colouring, SuperLU stage solves). The error is the
relative max-norm difference at t = 11.5 from a reference solved at rtol 1e-10
(scipy Radau with the sparse Jacobian at N = 32; sciax Rodas5P at N = 64, where
Radau takes minutes; scipy BDF at rtol 1e-9 above, cross-checked against sciax's
Newton-Krylov BDF at rtol 1e-10), stated in the output. The recommended method
also runs at half the tolerances (`_half_tol` lines), where its error is below
scipy BDF's, so time is compared at no worse error.

A 1-D case with a banded (tridiagonal) Jacobian follows: Allen–Cahn
u_t = eps^2 u_xx + u - u^3 on [-1, 1] with Neumann ends (mirror ghost points),
10^4 points, eps = 0.02, u0 = 0.5 sin(2.5 pi x) + 0.1 x, t in [0, 10]. Its
right-hand side is ONE function, written against an array namespace and called
with numpy by scipy and with jax.numpy by sciax, so both integrate the same
problem; sciax's pattern is found by symbolic detection (a plain `ODE`,
`BDF(jacobian="sparse")`) and checked against scipy's tridiagonal one. The
reference is scipy Radau at rtol 1e-10, cross-checked against sciax BDF at
rtol 1e-10 (the `reference_agreement` line).

At N = 32 an ensemble of 100 members (initial values and alpha within +-10 %) runs
at once through `sciax.ode.simulate_ensemble` (shared step and order, one block
GMRES) and as a `jax.lax.map` of single Newton-Krylov solves in one program (with
`--routes` also `path="vmap"`), against scipy BDF member by member (timed on a few
members, per member).

Run: python benchmarks/stiff_pde.py [--sizes 32 64 128] [--members 100] [--routes] [--only-1d | --no-1d]
Prints `name: value` lines (seconds are wall time after compilation, best of 2).
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import time  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import lineax as lx  # noqa: E402
import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import sciax  # noqa: E402

ALPHA, T_END, RTOL, ATOL = 10.0, 11.5, 1e-6, 1e-8


def setup(n):
    # The scipy user's own copy of the problem (sciax's is `sciax.ode.brusselator_2d`): the two agree.

    x = np.linspace(0.0, 1.0, n)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    disc = ((xx - 0.3) ** 2 + (yy - 0.6) ** 2 <= 0.01).astype(float)
    u0 = 22.0 * (yy * (1 - yy)) ** 1.5
    v0 = 27.0 * (xx * (1 - xx)) ** 1.5
    return np.concatenate([u0.ravel(), v0.ravel()]), disc, (n - 1) ** 2


def numpy_rhs(n, disc, inv_dx2, alpha=ALPHA):
    def lap(w):
        return inv_dx2 * (np.roll(w, 1, 0) + np.roll(w, -1, 0) + np.roll(w, 1, 1) + np.roll(w, -1, 1) - 4 * w)

    def f(t, z):
        u, v = z.reshape(2, n, n)
        force = 5.0 * disc if t >= 1.1 else 0.0
        du = 1.0 + u * u * v - 4.4 * u + alpha * lap(u) + force
        dv = 3.4 * u - u * u * v + alpha * lap(v)
        return np.concatenate([du.ravel(), dv.ravel()])

    return f


def sciax_model(n):
    return sciax.ode.brusselator_2d(n).model


def pattern(n):
    return sciax.ode.brusselator_2d(n).pattern


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
    z0, _, _ = setup(n)
    model = sciax_model(n)
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
    # Newton-Krylov: GMRES on Jacobian-vector products, preconditioned by the exact FFT inverse
    # of I - c alpha lap on both species (the reactions left to GMRES); nothing factorised on the host.
    diffusion = sciax.ode.brusselator_2d(n).diffusion
    return {
        "bdf_krylov_fft": sciax.ode.BDF(
            jacobian="jvp", linear_solver=lx.GMRES(rtol=1e-4, atol=1e-12), preconditioner=diffusion
        ),
        "bdf_sparse": sciax.ode.BDF(jacobian=p),
        "rodas5p_sparse": sciax.ode.Rodas5P(jacobian=p),
    }


def ensemble_members(n, members, seed=0):
    """Member 0 is the nominal problem; the others scale y0 and alpha by up to +-10 %."""
    z0, _, _ = setup(n)
    rng = np.random.default_rng(seed)
    scale = np.concatenate([[1.0], 1 + 0.1 * rng.uniform(-1, 1, members - 1)])
    alpha = ALPHA * np.concatenate([[1.0], 1 + 0.1 * rng.uniform(-1, 1, members - 1)])
    return scale[:, None] * z0[None], alpha


def ensemble(n, members, ref, scipy_members=4, routes=False):
    """`members` members at once by `simulate_ensemble` (shared steps, block GMRES) vs scipy BDF member by member."""
    z0s, alphas = ensemble_members(n, members)
    _, disc, inv_dx2 = setup(n)
    jac_sparsity = sp.csr_matrix(pattern(n), dtype=float)
    start = time.perf_counter()
    for z0, alpha in zip(z0s[:scipy_members], alphas[:scipy_members]):
        f = numpy_rhs(n, disc, inv_dx2, alpha)
        sol = scipy.integrate.solve_ivp(
            f, (0, T_END), z0, method="BDF", rtol=RTOL, atol=ATOL, jac_sparsity=jac_sparsity
        )
        assert sol.success, sol.message
    t_scipy = (time.perf_counter() - start) / scipy_members
    model = sciax_model(n)
    # restart 5: the Krylov basis holds restart + 1 vectors of the whole ensemble (1.6 MB each here), and
    # with the FFT preconditioner a Newton system needs one to three iterations. rtol as the single solve's
    # (3e-3 measured ~10 % faster, with steps and the final state within 0.5 % and 2e-6 relative).
    gmres = lx.GMRES(rtol=1e-4, atol=1e-12, restart=5)
    method = sciax.ode.BDF(
        jacobian="jvp", linear_solver=gmres, preconditioner=methods(n)["bdf_krylov_fft"].preconditioner
    )
    ts = jnp.asarray([0.0, T_END])

    def run(z0s, alphas):
        sol = sciax.ode.simulate_ensemble(
            model, z0s, ts, alphas, method=method, rtol=RTOL, atol=ATOL, max_steps=100_000, path="shared_step"
        )
        return sol.ys[:, -1], sol.stats["num_steps"][0]

    args = (jnp.asarray(z0s), jnp.asarray(alphas))
    compiled = jax.jit(run).lower(*args).compile()
    start = time.perf_counter()
    ys, steps = jax.block_until_ready(compiled(*args))
    seconds = time.perf_counter() - start
    tag = f"brusselator_n{n}_ensemble{members}"
    print(f"# {members} members (y0, alpha within +-10 %), one timed run; scipy BDF timed on {scipy_members} of them")
    print(f"{tag}_scipy_bdf_per_member_s: {t_scipy:.3g}")
    print(f"{tag}_s: {seconds:.3g}")
    print(f"{tag}_steps: {int(steps)}")
    print(f"{tag}_member0_error: {rel_error(np.asarray(ys[0]), ref):.2g}")
    print(f"{tag}_per_member_over_scipy: {seconds / members / t_scipy:.3f}")
    ensemble_routes(model, method, ts, args, ref, tag, t_scipy, ("lax_map", "vmap") if routes else ("lax_map",))


def ensemble_routes(model, method, ts, args, ref, tag, t_scipy, names):
    """The same members by other routes: a `lax.map` of single solves (one program, one member at a time)
    and, with `--routes`, `path="vmap"` (members in lockstep, each with its own step control)."""
    options = dict(rtol=RTOL, atol=ATOL, max_steps=100_000)

    def single(z0, alpha):
        return sciax.simulate(model, z0, ts, alpha, method=method, **options).ys[-1]

    def mapped(z0s, alphas):
        return jax.lax.map(lambda pair: single(*pair), (z0s, alphas))

    def vmapped(z0s, alphas):
        return sciax.ode.simulate_ensemble(model, z0s, ts, alphas, method=method, path="vmap", **options).ys[:, -1]

    members = args[0].shape[0]
    for name in names:
        compiled = jax.jit(mapped if name == "lax_map" else vmapped).lower(*args).compile()
        start = time.perf_counter()
        ys = jax.block_until_ready(compiled(*args))
        seconds = time.perf_counter() - start
        print(f"{tag}_{name}_s: {seconds:.3g}")
        print(f"{tag}_{name}_member0_error: {rel_error(np.asarray(ys[0]), ref):.2g}")
        print(f"{tag}_{name}_per_member_over_scipy: {seconds / members / t_scipy:.3f}")


def reference(n):
    if n <= 32:
        (y, _, _), _ = run_scipy(n, "Radau", 1e-10, 1e-12, repeats=0)
        return y, "scipy Radau rtol 1e-10"
    if n <= 64:
        (y, _), _ = run_sciax(n, sciax.ode.Rodas5P(jacobian=pattern(n)), 1e-10, 1e-12, repeats=0)
        return y, "sciax Rodas5P rtol 1e-10"
    # Above N = 64 Radau and the sparse Rodas5P take tens of minutes; scipy BDF at rtol 1e-9 takes ~4.
    (y, _, _), _ = run_scipy(n, "BDF", 1e-9, 1e-11, repeats=0)
    (y_sciax, _), _ = run_sciax(n, methods(n)["bdf_krylov_fft"], 1e-10, 1e-12, repeats=0)
    print(f"brusselator_n{n}_reference_agreement: {rel_error(y_sciax, y):.2g}")
    return y, "scipy BDF rtol 1e-9 (reference_agreement: sciax Newton-Krylov BDF rtol 1e-10 against it)"


def rel_error(y, ref):
    return float(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))


AC_N, AC_EPS, AC_T_END = 10_000, 0.02, 10.0


def allen_cahn_rhs(xp, u, eps):
    """u_t = eps^2 u_xx + u - u^3 on [-1, 1], Neumann ends by mirror ghosts; `xp` is numpy or jax.numpy."""
    inv_dx2 = ((u.shape[0] - 1) / 2.0) ** 2
    padded = xp.concatenate([u[1:2], u, u[-2:-1]])
    return eps**2 * inv_dx2 * (padded[:-2] - 2 * u + padded[2:]) + u - u**3


def allen_cahn_setup():
    x = np.linspace(-1.0, 1.0, AC_N)
    return 0.5 * np.sin(2.5 * np.pi * x) + 0.1 * x


def run_allen_cahn_scipy(method="BDF", rtol=RTOL, atol=ATOL, repeats=2):
    u0 = allen_cahn_setup()
    band = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(AC_N, AC_N), format="csr")

    def go():
        sol = scipy.integrate.solve_ivp(
            lambda t, u: allen_cahn_rhs(np, u, AC_EPS), (0, AC_T_END), u0, method=method, rtol=rtol, atol=atol,
            jac_sparsity=band,
        )  # fmt: skip
        assert sol.success, sol.message
        return sol.y[:, -1], sol.nfev, sol.nlu

    return timed(go, repeats)


def run_allen_cahn_sciax(rtol=RTOL, atol=ATOL, repeats=2):
    model = sciax.ode.ODE(lambda t, u, eps: allen_cahn_rhs(jnp, u, eps))
    ts = jnp.asarray([0.0, AC_T_END])

    @jax.jit
    def solve(u0, eps):
        method = sciax.ode.BDF(jacobian="sparse")
        sol = sciax.simulate(model, u0, ts, eps, method=method, rtol=rtol, atol=atol, max_steps=100_000)
        return sol.ys[-1], sol.stats["num_steps"]

    u0 = jnp.asarray(allen_cahn_setup())
    (y, steps), seconds = timed(lambda: jax.block_until_ready(solve(u0, AC_EPS)), repeats)
    return (np.asarray(y), int(steps)), seconds


def allen_cahn_1d():
    detected = sciax.linalg.jacobian_sparsity(lambda u: allen_cahn_rhs(jnp, u, AC_EPS), jnp.zeros(AC_N))
    band = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(AC_N, AC_N), format="csr") != 0
    assert (detected.csr != band).nnz == 0, "detected pattern is not tridiagonal"
    u0 = allen_cahn_setup()
    same = np.max(np.abs(np.asarray(allen_cahn_rhs(jnp, jnp.asarray(u0), AC_EPS)) - allen_cahn_rhs(np, u0, AC_EPS)))
    print(f"# Allen-Cahn 1-D, {AC_N} points, eps {AC_EPS}, t in [0, {AC_T_END}], rtol {RTOL}, atol {ATOL}")
    print(f"allen_cahn_1d_rhs_numpy_vs_jax_max_diff: {same:.2g}")
    (ref, _, _), _ = run_allen_cahn_scipy("Radau", 1e-10, 1e-12, repeats=0)
    (ref_sciax, _), _ = run_allen_cahn_sciax(1e-10, 1e-12, repeats=0)
    print("# reference: scipy Radau rtol 1e-10; cross-check: sciax BDF rtol 1e-10")
    print(f"allen_cahn_1d_reference_agreement: {rel_error(ref_sciax, ref):.2g}")
    (y, nfev, nlu), t_scipy = run_allen_cahn_scipy()
    print(f"allen_cahn_1d_scipy_bdf_s: {t_scipy:.3g}")
    print(f"allen_cahn_1d_scipy_bdf_error: {rel_error(y, ref):.2g}")
    print(f"allen_cahn_1d_scipy_bdf_lu: {nlu}")
    (y, steps), seconds = run_allen_cahn_sciax()
    print(f"allen_cahn_1d_sciax_bdf_sparse_s: {seconds:.3g}")
    print(f"allen_cahn_1d_sciax_bdf_sparse_error: {rel_error(y, ref):.2g}")
    print(f"allen_cahn_1d_sciax_bdf_sparse_steps: {steps}")
    print(f"allen_cahn_1d_sciax_bdf_sparse_over_scipy_bdf: {seconds / t_scipy:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--only-1d", action="store_true", help="run only the 1-D Allen-Cahn case")
    parser.add_argument("--no-1d", action="store_true", help="skip the 1-D Allen-Cahn case")
    parser.add_argument("--members", type=int, default=100, help="ensemble size at N = 32 (0: none)")
    parser.add_argument("--routes", action="store_true", help="also time the ensemble by path='vmap'")
    args = parser.parse_args()
    if not args.only_1d:
        brusselator(args.sizes, args.members, args.routes)
    if not args.no_1d:
        allen_cahn_1d()


def brusselator(sizes, members, routes=False):
    print(f"# Brusselator 2-D, float64, jax {jax.__version__}, backend {jax.default_backend()}, rtol {RTOL}")
    for n in sizes:
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
        # Equal rtol does not mean equal error: half the tolerances put the recommended method's
        # error below scipy's, so this line compares time at no worse error.
        (y, steps), seconds = run_sciax(n, methods(n)["bdf_krylov_fft"], RTOL / 2, ATOL / 2)
        tag = f"brusselator_n{n}_bdf_krylov_fft_half_tol"
        print(f"{tag}_s: {seconds:.3g}")
        print(f"{tag}_error: {rel_error(y, ref):.2g}")
        print(f"{tag}_over_scipy_bdf: {seconds / t_scipy:.2f}")
        if n == 32 and members:
            ensemble(n, members, ref, routes=routes)


if __name__ == "__main__":
    main()
