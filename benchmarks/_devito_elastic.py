"""Devito's side of `elastic_wave.py`: the isotropic elastic velocity–stress scheme of Devito's seismic
examples (`examples/seismic/elastic/operators.py`: `v.dt = b div(tau)`, `tau.dt = lam diag(div(v.forward)) +
mu (grad(v.forward) + grad(v.forward)^T)`, staggered grid, first order in time), without the example's
damping mask (sciax runs with rigid edges, no layer, for equal work), an explosive Ricker source on the
diagonal stress, float32, only the last time level kept (Devito's modulo time buffer).

Run by `elastic_wave.py` in a subprocess (any interpreter with devito installed):
    python benchmarks/_devito_elastic.py CASE [CASE ...]   with CASE = "n,steps,order"
Prints `devito_elastic_<n>_<steps>_o<order>_s: seconds` per case (best of `--repeats` runs after a warm-up
that compiles) and the largest |vx| (a check that both sides ran the same problem).
Threads: `DEVITO_LANGUAGE=openmp` and `OMP_NUM_THREADS` from the environment.
"""

import argparse
import math
import os
import time

os.environ.setdefault("DEVITO_LANGUAGE", "openmp")
os.environ.setdefault("DEVITO_LOGGING", "ERROR")

import numpy as np  # noqa: E402

H, DTIME, F0 = 5.0, 5e-4, 25.0


def medium(n: int):
    """The heterogeneous medium both sides use (`elastic_wave.py` imports it from here)."""
    rng = np.random.default_rng(0)
    vp = (2000 + 1000 * rng.random((n, n))).astype(np.float32)
    vs = (0.5 * vp * (0.8 + 0.2 * rng.random((n, n)))).astype(np.float32)
    rho = (1800 + 600 * rng.random((n, n))).astype(np.float32)
    return vp, vs, rho


def wavelet(steps: int):
    # Sampled half a step late: the stress update from t to t + dt injects M(t + dt/2), as sciax's does.
    t = (np.arange(steps + 1) + 0.5) * DTIME
    a = (math.pi * F0) ** 2
    return (1 - 2 * a * (t - 1.2 / F0) ** 2) * np.exp(-a * (t - 1.2 / F0) ** 2)


def run_case(n: int, steps: int, order: int, repeats: int, save: str | None = None):
    # Imported here: `elastic_wave.py` imports the medium from this file without devito installed.
    from devito import (
        Eq,
        Function,
        Grid,
        Operator,
        SparseTimeFunction,
        TensorTimeFunction,
        VectorTimeFunction,
        diag,
        div,
        grad,
        solve,
    )

    grid = Grid(shape=(n, n), extent=(H * (n - 1),) * 2, dtype=np.float32)
    v = VectorTimeFunction(name="v", grid=grid, space_order=order, time_order=1)
    tau = TensorTimeFunction(name="tau", grid=grid, space_order=order, time_order=1)
    lam, mu, b = (Function(name=k, grid=grid, space_order=order) for k in ("lam", "mu", "b"))
    vp, vs, rho = medium(n)
    mu.data[:] = rho * vs**2
    lam.data[:] = rho * vp**2 - 2 * rho * vs**2
    b.data[:] = 1 / rho
    eq_v = v.dt - b * div(tau)
    e = grad(v.forward) + grad(v.forward).transpose(inner=False)
    eq_tau = tau.dt - lam * diag(div(v.forward)) - mu * e
    src = SparseTimeFunction(name="src", grid=grid, npoint=1, nt=steps + 1)
    src.coordinates.data[0, :] = H * (n // 2)
    src.data[:, 0] = wavelet(steps) / H**2
    dt = grid.stepping_dim.spacing
    updates = [Eq(v.forward, solve(eq_v, v.forward)), Eq(tau.forward, solve(eq_tau, tau.forward))]
    op = Operator(updates + src.inject(field=tau.forward.diagonal(), expr=src * dt))

    def reset():
        for f in list(v) + [tau[0, 0], tau[1, 1], tau[0, 1]]:
            f.data[:] = 0

    reset()
    op.apply(time_M=min(steps, 5) - 1, dt=DTIME)  # compile and warm up
    best = math.inf
    for _ in range(repeats):
        reset()
        start = time.perf_counter()
        op.apply(time_M=steps - 1, dt=DTIME)
        best = min(best, time.perf_counter() - start)
        if best > 20:  # one run is enough for slow cases
            break
    if save:  # the last vx: time index `steps` of the two-slot (modulo) buffer
        np.save(save, np.asarray(v[0].data[steps % 2]))
    return best, float(np.abs(v[0].data).max())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="+", help='"n,steps,order"')
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--save-last", help="write the (one) case's last vx to this .npy file")
    args = parser.parse_args()
    for case in args.cases:
        n, steps, order = (int(x) for x in case.split(","))
        seconds, vmax = run_case(n, steps, order, args.repeats, args.save_last)
        print(f"devito_elastic_{n}_{steps}_o{order}_s: {seconds:.4f}", flush=True)
        print(f"devito_elastic_{n}_{steps}_o{order}_max_abs_vx: {vmax:.4g}", flush=True)


if __name__ == "__main__":
    main()
