"""Lotka–Volterra ensemble benchmark: sciax vs scipy, and sciax vs raw diffrax.

Run: python benchmarks/ode_ensemble.py [--quick]
Prints `name: value` lines (header lines start with '#'). Reports numbers only; asserts nothing.
"""

import jax

# scipy integrates in float64, so sciax must too for a like-for-like comparison.
jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import sciax  # noqa: E402
from sciax.ode._catalogue import _lotka_volterra  # noqa: E402

RTOL = ATOL = 1e-6
T0, T1, N_TS = 0.0, 40.0, 401
TS = jnp.linspace(T0, T1, N_TS)
Y0 = jnp.array([30.0, 4.0])
P = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}
MODEL = sciax.ode.lotka_volterra()
N_ENSEMBLE = 10_000


def sciax_solve(y0, p):
    return sciax.simulate(MODEL, y0, TS, p, rtol=RTOL, atol=ATOL).ys


def diffrax_solve(y0, p):
    # What a user calling diffrax directly would write: same solver, controller, vector field, ts.
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_lotka_volterra),
        diffrax.Tsit5(),
        t0=TS[0],
        t1=TS[-1],
        dt0=None,
        y0=y0,
        args=p,
        saveat=diffrax.SaveAt(ts=TS),
        stepsize_controller=diffrax.PIDController(rtol=RTOL, atol=ATOL),
    )
    return sol.ys


def lv_numpy(t, y, alpha, beta, gamma, delta):
    # Same formula as _lotka_volterra in plain numpy: calling the jnp version per RHS
    # evaluation would charge scipy for JAX dispatch overhead and inflate the speedup.
    prey, predator = y
    return np.array([alpha * prey - beta * prey * predator, delta * prey * predator - gamma * predator])


def scipy_solve(y0, p):
    args = tuple(float(p[k]) for k in ("alpha", "beta", "gamma", "delta"))
    sol = solve_ivp(lv_numpy, (T0, T1), y0, "RK45", t_eval=np.asarray(TS), rtol=RTOL, atol=ATOL, args=args)
    return sol.y.T


def ensemble_inputs(n, seed=0):
    # ±10% uniform perturbation of y0 and every parameter, fixed seed for reproducibility.
    rng = np.random.default_rng(seed)
    y0s = np.asarray(Y0) * rng.uniform(0.9, 1.1, (n, 2))
    ps = {k: v * rng.uniform(0.9, 1.1, n) for k, v in P.items()}
    return y0s, ps


def timed(fn, *args):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - start


def median_times(fns, args, repeats):
    # Interleave the contenders so drift (load, frequency scaling) affects them alike.
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            times[i].append(timed(fn, *args))
    return [statistics.median(t) for t in times]


def compile_seconds(solve, args):
    # Cold compile: clear jax's trace/lowering/executable caches and use a new function
    # object, so neither this nor an earlier measurement can hit a cache.
    jax.clear_caches()
    fresh = lambda *a: solve(*a)  # noqa: E731
    start = time.perf_counter()
    jax.jit(fresh).lower(*args).compile()
    return time.perf_counter() - start


def median_compile(solves, args, repeats):
    times = [[] for _ in solves]
    for _ in range(repeats):
        for i, solve in enumerate(solves):
            times[i].append(compile_seconds(solve, args))
    return [statistics.median(t) for t in times]


def emit(name, value, fmt=".4g"):
    print(f"{name}: {value:{fmt}}", flush=True)


def bench_first_call():
    # Must run before anything else is traced: a user's first, eager simulate call.
    start = time.perf_counter()
    jax.block_until_ready(sciax.simulate(MODEL, Y0, TS, P, rtol=RTOL, atol=ATOL).ys)
    emit("first_call_total_s", time.perf_counter() - start)
    emit("first_call_compile_s", compile_seconds(sciax_solve, (Y0, P)))


def bench_ensemble(y0s, ps, repeats):
    # One interleaved measurement serves both the scipy and the diffrax comparison.
    fns = [jax.jit(jax.vmap(sciax_solve)), jax.jit(jax.vmap(diffrax_solve))]
    for fn in fns:
        fn.lower(y0s, ps).compile()  # compile outside the timed region
        fn(y0s, ps).block_until_ready()  # warm-up run
    return fns[0](y0s, ps), *median_times(fns, (y0s, ps), repeats)


def bench_vs_scipy(y0s, ps, ys, t_sciax, n_subset):
    idx = np.random.default_rng(1).choice(len(y0s), n_subset, replace=False)
    y0s_np, ps_np = np.asarray(y0s), {k: np.asarray(v) for k, v in ps.items()}
    start = time.perf_counter()
    ref = np.stack([scipy_solve(y0s_np[i], {k: v[i] for k, v in ps_np.items()}) for i in idx])
    t_scipy = time.perf_counter() - start
    per_sciax, per_scipy = t_sciax / len(y0s), t_scipy / n_subset
    emit("lv_sciax_ensemble_s", t_sciax)
    emit("lv_sciax_per_traj_us", per_sciax * 1e6)
    emit("lv_scipy_per_traj_us", per_scipy * 1e6)
    emit("lv_ensemble_speedup_vs_scipy", per_scipy / per_sciax, ".1f")
    emit("lv_max_rel_diff_vs_scipy", float(np.max(np.abs(np.asarray(ys)[idx] - ref) / np.abs(ref))), ".3e")


def bench_vs_diffrax(t_sim_ens, t_dfx_ens, single_repeats, compile_repeats):
    single = [jax.jit(sciax_solve), jax.jit(diffrax_solve)]
    a, b = jax.device_get([fn(Y0, P) for fn in single])  # also compiles both
    emit("simulate_vs_diffrax_max_abs_diff", float(np.max(np.abs(a - b))), ".3e")
    t_sim, t_dfx = median_times(single, (Y0, P), single_repeats)
    emit("simulate_single_us", t_sim * 1e6)
    emit("diffrax_single_us", t_dfx * 1e6)
    emit("simulate_vs_diffrax_runtime_ratio", t_sim / t_dfx, ".3f")
    emit("diffrax_ensemble_s", t_dfx_ens)
    emit("simulate_vs_diffrax_runtime_ratio_ensemble", t_sim_ens / t_dfx_ens, ".3f")
    c_sim, c_dfx = median_compile([sciax_solve, diffrax_solve], (Y0, P), compile_repeats)
    emit("simulate_compile_s", c_sim)
    emit("diffrax_compile_s", c_dfx)
    emit("simulate_vs_diffrax_compile_ratio", c_sim / c_dfx, ".3f")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller scipy subset and fewer repeats")
    quick = parser.parse_args().quick
    n_subset, repeats = (50, 5) if quick else (200, 21)
    print("# sciax ODE benchmark: Lotka-Volterra, Tsit5 (sciax/diffrax) vs RK45 (scipy), rtol=atol=1e-6, float64")
    print(
        f"# jax {jax.__version__}, diffrax {diffrax.__version__}, scipy {scipy.__version__}, "
        f"backend {jax.default_backend()}, quick={quick}"
    )
    bench_first_call()
    y0s, ps = ensemble_inputs(N_ENSEMBLE)
    y0s, ps = jnp.asarray(y0s), {k: jnp.asarray(v) for k, v in ps.items()}
    emit("lv_ensemble_size", N_ENSEMBLE, "d")
    emit("lv_scipy_subset_size", n_subset, "d")
    ys, t_sim_ens, t_dfx_ens = bench_ensemble(y0s, ps, repeats)
    bench_vs_scipy(y0s, ps, ys, t_sim_ens, n_subset)
    bench_vs_diffrax(t_sim_ens, t_dfx_ens, 100 if quick else 1000, 3 if quick else 9)


if __name__ == "__main__":
    main()
