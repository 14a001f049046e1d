"""Devito's side of the wave comparison in `fd_wave.py`: the variable-density acoustic scheme of Devito's
seismic examples (`examples/seismic/viscoacoustic`: `rho div(b grad(p, shift=.5), shift=-.5)`, `b = 1/rho`)
with `b` averaged to the half points (see `operator`), leapfrog in time, a Ricker point source, float32, only the
last pressure kept (Devito's modulo time buffer).

Run by `fd_wave.py` in a subprocess (any interpreter with devito installed):
    python benchmarks/_devito_wave.py CASE [CASE ...]   with CASE = "ndim,n,steps,order"
Prints one line `devito_<ndim>d_<n>_<steps>_o<order>_s: seconds` per case (best of `--repeats` runs after
a warm-up that compiles). Threads: `DEVITO_LANGUAGE=openmp` and `OMP_NUM_THREADS` from the environment.
"""

import argparse
import math
import os
import time

os.environ.setdefault("DEVITO_LANGUAGE", "openmp")
os.environ.setdefault("DEVITO_LOGGING", "ERROR")

import numpy as np  # noqa: E402
from devito import Derivative, Eq, Function, Grid, Operator, SparseTimeFunction, TimeFunction, grad  # noqa: E402

H, DTIME, F0 = 5.0, 5e-4, 25.0


def operator(ndim: int, n: int, order: int):
    grid = Grid(shape=(n,) * ndim, extent=(H * (n - 1),) * ndim, dtype=np.float32)
    p = TimeFunction(name="p", grid=grid, time_order=2, space_order=order)
    kappa = Function(name="kappa", grid=grid, space_order=order)
    b = Function(name="b", grid=grid, space_order=order)
    src = SparseTimeFunction(name="src", grid=grid, npoint=1, nt=2)  # resized per run below
    dt = grid.stepping_dim.spacing
    # `div(b * grad(p, shift=.5), shift=-.5)` as Devito's examples write it evaluates `b` at the point below each
    # half point (Devito 4.8.23's generated code reads `b[x]` for the face `x + 1/2`): here `b` is averaged to the
    # half points, the scheme of `AcousticWave(density_average="harmonic")`.
    gradient, terms = grad(p, shift=0.5), []
    for i, dim in enumerate(grid.dimensions):
        face_b = (b + b.shift(dim, dim.spacing)) / 2
        terms.append(Derivative(face_b * gradient[i], dim, fd_order=order, x0={dim: dim - dim.spacing / 2}))
    update = Eq(p.forward, 2 * p - p.backward + dt**2 * kappa * sum(terms))
    return grid, p, kappa, b, src, update


def run_case(ndim: int, n: int, steps: int, order: int, repeats: int, save: str | None = None) -> float:
    rng = np.random.default_rng(0)
    grid, p, kappa, b, _, update = operator(ndim, n, order)
    c = (1500 + 500 * rng.random((n,) * ndim)).astype(np.float32)
    rho = (1000 + 800 * rng.random((n,) * ndim)).astype(np.float32)
    kappa.data[:] = rho * c**2
    b.data[:] = 1 / rho
    src = SparseTimeFunction(name="src", grid=grid, npoint=1, nt=steps + 1)
    src.coordinates.data[0, :] = H * (n // 2)
    t = np.arange(steps + 1) * DTIME
    a = (math.pi * F0) ** 2
    src.data[:, 0] = 1e-3 * (1 - 2 * a * (t - 1.2 / F0) ** 2) * np.exp(-a * (t - 1.2 / F0) ** 2)
    scale = DTIME**2 * 4 * math.pi * float(c[(n // 2,) * ndim]) ** 2
    op = Operator([update] + src.inject(field=p.forward, expr=src * scale))
    p.data[:] = 0
    op.apply(time_M=min(steps, 5) - 1, dt=DTIME)  # compile and warm up
    best = math.inf
    for _ in range(repeats):
        p.data[:] = 0
        start = time.perf_counter()
        op.apply(time_M=steps - 1, dt=DTIME)
        best = min(best, time.perf_counter() - start)
        if best > 10:  # one run is enough for slow cases
            break
    if save:  # the last pressure: time index `steps` of the three-slot (modulo) buffer
        np.save(save, np.asarray(p.data[steps % 3]))
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="+", help='"ndim,n,steps,order"')
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--save-last", help="write the (one) case's last pressure to this .npy file")
    args = parser.parse_args()
    for case in args.cases:
        ndim, n, steps, order = (int(x) for x in case.split(","))
        seconds = run_case(ndim, n, steps, order, args.repeats, args.save_last)
        print(f"devito_{ndim}d_{n}_{steps}_o{order}_s: {seconds:.4f}", flush=True)


if __name__ == "__main__":
    main()
