"""Ensemble benchmark: sciax's per-member kernel vs `jax.vmap(diffrax.diffeqsolve)` and vmapped sciax.

Run: python benchmarks/gpu_ensemble.py [--sizes 10000 100000 1000000] [--dtype float32]
     [--parts lorenz rober sde] [--blocks 32 64 128]
Prints `name: value` lines (headers start with '#'); reports numbers, asserts nothing.

Problems (Utkarsh et al., CMAME 2024, DiffEqGPU's ensemble benchmarks):
- `lorenz`: Lorenz with per-member sigma ~ U(9, 11), rho ~ U(20, 30), beta ~ U(2, 3), t in [0, 1],
  Tsit5, adaptive, rtol = atol = 1e-6, saving the final state only.
- `rober`: Robertson's stiff kinetics with per-member rates (k1 ~ U(0.02, 0.06), k2 ~ U(2e7, 4e7),
  k3 ~ U(5e3, 2e4)), t in [0, 100], float64, rtol 1e-6, atol 1e-9: sciax Rodas5P kernel vs vmapped
  Rodas5P (sciax) and vmapped diffrax Kvaerno5 (what a diffrax user has for stiff problems).
- `sde`: geometric Brownian motion, 4 independent components, per-member mu, sigma, t in [0, 1],
  Euler–Maruyama with dt = 1e-3: the kernel vs vmapped diffrax (Euler on an ODETerm + ControlTerm
  driven by a VirtualBrownianTree, the diffrax idiom) and vmapped sciax.

Every time is the median of `--repeats` runs after one compiling run (reported as `*_compile_s`).
`*_max_rel_diff` compares the final states of the kernel and the vmapped solves.
"""

import argparse
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import lineax as lx  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402
from sciax.ode import simulate_ensemble  # noqa: E402


def lorenz(t, y, p):
    x, v, z = y
    return jnp.stack([p["sigma"] * (v - x), x * (p["rho"] - z) - v, x * v - p["beta"] * z])


def rober(t, y, p):
    a, b, c = y
    return jnp.stack([-p["k1"] * a + p["k3"] * b * c, p["k1"] * a - p["k3"] * b * c - p["k2"] * b**2, p["k2"] * b**2])


def gbm_drift(t, y, p):
    return p["mu"] * y


def gbm_diffusion(t, y, p):
    return p["sigma"] * y


def diffrax_vmap(rhs, solver, ts, tol):
    """What a diffrax user writes: `jax.vmap` over `diffeqsolve`, final state only."""

    def one(y, q):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(rhs),
            solver,
            t0=ts[0],
            t1=ts[-1],
            dt0=None,
            y0=y,
            args=q,
            saveat=diffrax.SaveAt(t1=True),
            stepsize_controller=diffrax.PIDController(**tol),
            max_steps=4096,
            throw=False,
        )
        return sol.ys[-1]

    return jax.jit(jax.vmap(one))


def timed(fn, *args, repeats):
    t = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    compile_s = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t)
    return out, compile_s, statistics.median(times)


def report(name, results, baseline="diffrax_vmap"):
    finals = {k: np.asarray(v[0], dtype=np.float64) for k, v in results.items()}
    for label, (_, compile_s, run_s) in results.items():
        print(f"{name}_{label}_s: {run_s:.4g}")
        print(f"{name}_{label}_compile_s: {compile_s:.3g}")
    kernel = results["kernel"][2]
    for label in results:
        if label != "kernel":
            print(f"{name}_speedup_vs_{label}: {results[label][2] / kernel:.3g}")
    ref = finals[baseline]
    scale = np.maximum(np.abs(ref), 1e-3)
    ok = np.all(np.isfinite(finals["kernel"]), axis=-1) & np.all(np.isfinite(ref), axis=-1)
    print(f"{name}_max_rel_diff_kernel_vs_{baseline}: {np.max(np.abs(finals['kernel'] - ref)[ok] / scale[ok]):.3g}")


def lorenz_part(members, dtype, repeats, blocks):
    rng = np.random.default_rng(0)
    y0 = jnp.asarray(np.tile([1.0, 0.0, 0.0], (members, 1)), dtype)
    p = {
        "sigma": jnp.asarray(rng.uniform(9, 11, members), dtype),
        "rho": jnp.asarray(rng.uniform(20, 30, members), dtype),
        "beta": jnp.asarray(rng.uniform(2, 3, members), dtype),
    }
    ts = jnp.asarray([0.0, 1.0], dtype)
    model = sciax.ode.ODE(lorenz)
    tol = dict(rtol=1e-6, atol=1e-6)

    def kernel(y, q, block=128):
        sol = simulate_ensemble(model, y, ts, q, path="kernel", block_size=block, throw=False, **tol)
        return sol.ys[:, -1]

    runs = {
        "kernel": jax.jit(kernel),
        "diffrax_vmap": diffrax_vmap(lorenz, diffrax.Tsit5(), ts, tol),
        "sciax_vmap": jax.jit(
            lambda y, q: simulate_ensemble(
                model, y, ts, q, path="vmap", method=sciax.ode.Tsit5(unroll=True), throw=False, **tol
            ).ys[:, -1]
        ),
    }
    name = f"lorenz_{jnp.dtype(dtype).name}_M{members}"
    results = {k: timed(f, y0, p, repeats=repeats) for k, f in runs.items()}
    report(name, results)
    for label in results:
        print(f"{name}_{label}_failed_members: {int(np.sum(~np.all(np.isfinite(results[label][0]), axis=-1)))}")
    steps = simulate_ensemble(model, y0, ts, p, throw=False, **tol).stats["num_steps"]
    print(f"{name}_steps_min_median_max: {int(steps.min())} {int(np.median(steps))} {int(steps.max())}")
    for block in blocks:
        _, _, run_s = timed(jax.jit(lambda y, q, b=block: kernel(y, q, b)), y0, p, repeats=repeats)
        print(f"{name}_kernel_block{block}_s: {run_s:.4g}")


def rober_part(members, repeats):
    rng = np.random.default_rng(1)
    p = {
        "k1": jnp.asarray(rng.uniform(0.02, 0.06, members)),
        "k2": jnp.asarray(rng.uniform(2e7, 4e7, members)),
        "k3": jnp.asarray(rng.uniform(5e3, 2e4, members)),
    }
    y0 = jnp.tile(jnp.array([1.0, 0.0, 0.0]), (members, 1))
    ts = jnp.array([0.0, 100.0])
    model = sciax.ode.ODE(rober)
    tol = dict(rtol=1e-6, atol=1e-9)

    def ensemble(path):
        return jax.jit(
            lambda y, q: simulate_ensemble(model, y, ts, q, path=path, method=sciax.ode.Rodas5P(), **tol).ys[:, -1]
        )

    runs = {
        "kernel": ensemble("kernel"),
        "diffrax_vmap": diffrax_vmap(rober, diffrax.Kvaerno5(), ts, tol),
        "sciax_vmap": ensemble("vmap"),
    }
    results = {k: timed(f, y0, p, repeats=repeats) for k, f in runs.items()}
    report(f"rober_Rodas5P_float64_M{members}", results)


def sde_part(members, dtype, repeats):
    rng = np.random.default_rng(2)
    n, dt = 4, 1e-3
    p = {
        "mu": jnp.asarray(rng.uniform(0.1, 0.5, members), dtype),
        "sigma": jnp.asarray(rng.uniform(0.1, 0.4, members), dtype),
    }
    y0 = jnp.ones((members, n), dtype)
    ts = jnp.asarray([0.0, 1.0], dtype)
    keys = jax.random.split(jax.random.key(0), members)
    model = sciax.ode.SDE(gbm_drift, gbm_diffusion)

    def one_diffrax(y, q, key):
        bm = diffrax.VirtualBrownianTree(ts[0], ts[-1], tol=dt / 2, shape=(n,), key=key)
        diagonal = lambda t, y, q: lx.DiagonalLinearOperator(gbm_diffusion(t, y, q))  # noqa: E731
        terms = diffrax.MultiTerm(diffrax.ODETerm(gbm_drift), diffrax.ControlTerm(diagonal, bm))
        sol = diffrax.diffeqsolve(
            terms, diffrax.Euler(), ts[0], ts[-1], dt0=dt, y0=y, args=q, saveat=diffrax.SaveAt(t1=True), max_steps=None
        )
        return sol.ys[-1]

    def ensemble(path):
        return jax.jit(lambda y, q, k: simulate_ensemble(model, y, ts, q, key=k, dt0=dt, path=path).ys[:, -1])

    runs = {
        "kernel": ensemble("kernel"),
        "diffrax_vmap": jax.jit(jax.vmap(one_diffrax)),
        "sciax_vmap": ensemble("vmap"),
    }
    results = {k: timed(f, y0, p, keys, repeats=repeats) for k, f in runs.items()}
    name = f"sde_gbm_EulerMaruyama_{jnp.dtype(dtype).name}_M{members}"
    for label, (out, compile_s, run_s) in results.items():
        print(f"{name}_{label}_s: {run_s:.4g}")
        print(f"{name}_{label}_compile_s: {compile_s:.3g}")
        mean = np.asarray(out, np.float64).mean(axis=0).mean()
        print(f"{name}_{label}_mean_of_final_state: {mean:.4g}")
    exact = float(np.mean(np.exp(np.asarray(p["mu"], np.float64))))
    print(f"{name}_exact_mean_of_final_state: {exact:.4g}")
    for label in ("diffrax_vmap", "sciax_vmap"):
        print(f"{name}_speedup_vs_{label}: {results[label][2] / results['kernel'][2]:.3g}")


def main():
    gpu = jax.default_backend() == "gpu"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000] if gpu else [1_000, 10_000]
    )
    parser.add_argument("--dtype", default="float32" if gpu else "float64", choices=["float32", "float64"])
    parser.add_argument("--parts", nargs="+", default=["lorenz", "rober", "sde"], choices=["lorenz", "rober", "sde"])
    parser.add_argument("--blocks", type=int, nargs="*", default=[])
    parser.add_argument("--stiff-sizes", type=int, nargs="+", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    dtype = jnp.dtype(args.dtype)
    print(f"# device: {jax.devices()[0].device_kind} ({jax.default_backend()}), jax {jax.__version__}")
    print(f"# diffrax {diffrax.__version__}, dtype {dtype.name}, repeats {args.repeats}")
    stiff_sizes = args.stiff_sizes or [s for s in args.sizes if s <= 100_000]
    for members in args.sizes:
        if "lorenz" in args.parts:
            lorenz_part(members, dtype, args.repeats, args.blocks if members == max(args.sizes) else [])
        if "sde" in args.parts and members <= 100_000:
            sde_part(members, jnp.float64, args.repeats)  # diffrax's Brownian tree is float64 under x64
    if "rober" in args.parts:
        for members in stiff_sizes:
            rober_part(members, args.repeats)


if __name__ == "__main__":
    main()
