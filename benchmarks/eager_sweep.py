"""A parameter sweep in a plain Python loop: un-jitted `sciax.simulate` against scipy's `solve_ivp`.

The way many users start: `for mu in mus: simulate(model, y0, ts, {"mu": mu})`, with Python
floats and no `jax.jit`. Each sciax method should compile on the first call only, then run the
compiled program for every other value (`docs/ode.md`, "Options of `sciax.simulate`"). Van der
Pol, `mu` from 1 to 20 (stiff at the top), `t` in [0, 20], rtol 1e-6, atol 1e-8, float64; scipy
gets a NumPy right-hand side and its default finite-difference Jacobian.

Run: python benchmarks/eager_sweep.py [--values 20]
Prints `name: value` lines (header lines start with '#'). Reports numbers only; asserts nothing.
`*_first_s` is the first call (compilation included), `*_per_value_ms` the median of the others.
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import sciax  # noqa: E402

RTOL, ATOL = 1e-6, 1e-8
T_END = 20.0


def vdp_np(t, y, mu):
    return np.array([y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]])


def sweep(run, mus):
    """Seconds for each value of the sweep, and the final states."""
    times, finals = [], []
    for mu in mus:
        start = time.perf_counter()
        finals.append(np.asarray(run(float(mu))))
        times.append(time.perf_counter() - start)
    return times, np.array(finals)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--values", type=int, default=20)
    args = parser.parse_args()
    mus = np.linspace(1.0, 20.0, args.values)
    y0, ts = np.array([2.0, 0.0]), np.linspace(0.0, T_END, 11)
    model = sciax.ode.van_der_pol()
    print(f"# van der Pol, {args.values} values of mu in [1, 20], t in [0, {T_END:g}], rtol {RTOL:g}")

    def sciax_run(method):
        def run(mu):
            sol = sciax.simulate(model, jnp.asarray(y0), ts, {"mu": mu}, method=method, rtol=RTOL, atol=ATOL)
            return sol.ys[-1]

        return run

    def scipy_run(name):
        def run(mu):
            sol = solve_ivp(vdp_np, (0.0, T_END), y0, method=name, t_eval=ts, args=(mu,), rtol=RTOL, atol=ATOL)
            return sol.y[:, -1]

        return run

    runs = {f"sciax_{m}": sciax_run(getattr(sciax.ode, m)()) for m in ("Tsit5", "Rodas5P", "BDF")}
    runs.update({f"scipy_{m}": scipy_run(m) for m in ("RK45", "LSODA", "BDF")})
    results = {name: sweep(run, mus) for name, run in runs.items()}
    reference = results["scipy_LSODA"][1]
    for name, (times, finals) in results.items():
        print(f"{name}_first_s: {times[0]:.3f}")
        print(f"{name}_per_value_ms: {1e3 * statistics.median(times[1:]):.2f}")
        print(f"{name}_total_s: {sum(times):.3f}")
        print(f"{name}_max_diff_vs_LSODA: {np.max(np.abs(finals - reference)):.2e}")
    for m in ("Tsit5", "Rodas5P", "BDF"):
        ratio = sum(results[f"sciax_{m}"][0]) / sum(results["scipy_LSODA"][0])
        print(f"sciax_{m}_total_over_scipy_LSODA: {ratio:.2f}")


if __name__ == "__main__":
    main()
