"""Stiff benchmark: sciax Rodas5P vs scipy (LSODA, Radau, BDF) and diffrax Kvaerno5.

Problems from the IVP test set: HIRES (t = 321.8122), ROBER (t = 1e11), POLLU (t = 60),
at rtol = 1e-8, float64; then 1,000 ROBER problems with rate constants perturbed by
±10 %, one vmapped sciax solve vs the fastest scipy method in a loop.

Run: python benchmarks/stiff.py [--quick]
Prints `name: value` lines (header lines start with '#'). Reports numbers only; asserts nothing.
Times are of one solve after compilation (median of repeats); scipy gets plain NumPy
right-hand sides and finite-difference Jacobians (its default); f-evals are scipy's
`nfev` and, for sciax/diffrax, evaluations of f in the stages (sciax also needs one
Jacobian per step, reported as `*_jac_evals`).
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import diffrax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import sciax  # noqa: E402
from sciax.ode._stiff_catalogue import POLLU_RATES, hires_terms, pollu_terms  # noqa: E402

RTOL = 1e-8
ATOL = {"hires": 1e-10, "rober": 1e-14, "pollu": 1e-10}
SCIPY_METHODS = ("LSODA", "Radau", "BDF")
N_ENSEMBLE = 1000


# NumPy right-hand sides for scipy (the same formulas as sciax's models, evaluated on
# NumPy floats), so that scipy is not charged for JAX dispatch on every evaluation.
def hires_np(t, y):
    return np.array(hires_terms(y))


def rober_np(t, y, k1=0.04, k2=3e7, k3=1e4):
    y1, y2, y3 = y
    return np.array([-k1 * y1 + k3 * y2 * y3, k1 * y1 - k2 * y2**2 - k3 * y2 * y3, k2 * y2**2])


def pollu_np(t, y):
    return np.array(pollu_terms(y, POLLU_RATES))


SCIPY_RHS = {"hires": hires_np, "rober": rober_np, "pollu": pollu_np}


def emit(name, value, fmt=".4g"):
    print(f"{name}: {value:{fmt}}", flush=True)


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def sciax_solver(name, method):
    model, _, t1, _ = sciax.ode.stiff_problem(name)
    ts = jnp.array([0.0, t1])

    @jax.jit
    def solve(y0, p):
        sol = sciax.simulate(model, y0, ts, p, method=method, rtol=RTOL, atol=ATOL[name], max_steps=100_000)
        return sol.ys[-1], sol.stats

    return solve


def diffrax_kvaerno5(name):
    model, _, t1, _ = sciax.ode.stiff_problem(name)

    @jax.jit
    def solve(y0, p):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(model.rhs),
            diffrax.Kvaerno5(),
            0.0,
            t1,
            None,
            y0,
            args=p,
            stepsize_controller=diffrax.PIDController(rtol=RTOL, atol=ATOL[name]),
            max_steps=200_000,
        )
        return sol.ys[-1], sol.stats

    return solve


def bench_problem(name, repeats):
    _, y0, t1, p = sciax.ode.stiff_problem(name)
    ref = None
    results = {}
    for label, solve in (
        ("sciax_rodas5p", sciax_solver(name, sciax.ode.Rodas5P())),
        ("diffrax_kvaerno5", diffrax_kvaerno5(name)),
    ):
        y, stats = jax.block_until_ready(solve(y0, p))  # compiles
        results[label] = median_time(functools.partial(solve, y0, p), repeats)
        emit(f"{name}_{label}_time_ms", results[label] * 1e3)
        emit(f"{name}_{label}_steps", int(stats["num_steps"]), "d")
        if "num_rhs_evals" in stats:
            emit(f"{name}_{label}_f_evals", int(stats["num_rhs_evals"]), "d")
            emit(f"{name}_{label}_jac_evals", int(stats["num_jacobian_evals"]), "d")
        if label == "sciax_rodas5p":
            ref = np.asarray(y)
    for method in SCIPY_METHODS:
        run = functools.partial(
            solve_ivp, SCIPY_RHS[name], (0.0, t1), np.asarray(y0), method=method, rtol=RTOL, atol=ATOL[name]
        )
        sol = run()
        results[method] = median_time(run, max(3, repeats // 4))
        emit(f"{name}_scipy_{method.lower()}_time_ms", results[method] * 1e3)
        emit(f"{name}_scipy_{method.lower()}_steps", len(sol.t) - 1, "d")
        emit(f"{name}_scipy_{method.lower()}_f_evals", sol.nfev, "d")
        big = np.abs(sol.y[:, -1]) > 1e-9
        emit(
            f"{name}_scipy_{method.lower()}_max_rel_diff_vs_sciax",
            float(np.max(np.abs(sol.y[big, -1] - ref[big]) / np.abs(sol.y[big, -1]))),
            ".2e",
        )
        if method == "Radau":
            radau_steps = len(sol.t) - 1
    _, stats = sciax_solver(name, sciax.ode.Rodas5P())(y0, p)
    emit(f"{name}_time_ratio_sciax_over_lsoda", results["sciax_rodas5p"] / results["LSODA"], ".3f")
    emit(f"{name}_steps_ratio_sciax_over_radau", int(stats["num_steps"]) / radau_steps, ".3f")
    emit(f"{name}_speedup_sciax_vs_kvaerno5", results["diffrax_kvaerno5"] / results["sciax_rodas5p"], ".2f")
    best = min(SCIPY_METHODS, key=lambda m: results[m])
    return best


def bench_ensemble(n_scipy, repeats):
    _, y0, t1, k = sciax.ode.stiff_problem("rober")
    rng = np.random.default_rng(0)
    ks = {name: v * rng.uniform(0.9, 1.1, N_ENSEMBLE) for name, v in k.items()}
    solve = sciax_solver("rober", sciax.ode.Rodas5P())
    batched = jax.jit(jax.vmap(solve, in_axes=(None, 0)))
    ks_j = {name: jnp.asarray(v) for name, v in ks.items()}
    ys, _ = jax.block_until_ready(batched(y0, ks_j))
    t_sciax = median_time(lambda: batched(y0, ks_j), repeats)

    def scipy_loop(method):
        start = time.perf_counter()
        out = [
            solve_ivp(
                rober_np,
                (0.0, t1),
                np.asarray(y0),
                method=method,
                rtol=RTOL,
                atol=ATOL["rober"],
                args=(ks["k1"][i], ks["k2"][i], ks["k3"][i]),
            ).y[:, -1]
            for i in range(n_scipy)
        ]
        return (time.perf_counter() - start) / n_scipy, np.array(out)

    per_method = {m: scipy_loop(m) for m in SCIPY_METHODS}
    best = min(per_method, key=lambda m: per_method[m][0])
    per_scipy, ref = per_method[best]
    emit("rober_ensemble_size", N_ENSEMBLE, "d")
    emit("rober_ensemble_scipy_subset_size", n_scipy, "d")
    print(f"# fastest scipy method on the ensemble: {best}")
    emit("rober_ensemble_sciax_total_s", t_sciax)
    emit("rober_ensemble_sciax_per_problem_us", t_sciax / N_ENSEMBLE * 1e6)
    emit("rober_ensemble_scipy_best_per_problem_us", per_scipy * 1e6)
    emit("rober_ensemble_speedup_vs_best_scipy", per_scipy / (t_sciax / N_ENSEMBLE), ".1f")
    got = np.asarray(ys)[:n_scipy]
    emit("rober_ensemble_max_rel_diff_y3", float(np.max(np.abs(got[:, 2] - ref[:, 2]) / ref[:, 2])), ".2e")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a smaller scipy subset")
    quick = parser.parse_args().quick
    repeats, n_scipy = (5, 50) if quick else (21, 200)
    print(f"# sciax stiff benchmark: rtol={RTOL}, float64, quick={quick}")
    print(
        f"# jax {jax.__version__}, diffrax {diffrax.__version__}, scipy {scipy.__version__}, "
        f"backend {jax.default_backend()}"
    )
    for name in ("hires", "rober", "pollu"):
        bench_problem(name, repeats)
    bench_ensemble(n_scipy, max(3, repeats // 4))


if __name__ == "__main__":
    main()
