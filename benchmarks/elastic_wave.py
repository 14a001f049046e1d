"""Elastic wave benchmark: `sciax.pde.ElasticWave` under `StaggeredLeapfrog` vs Devito's elastic
velocity–stress scheme (`benchmarks/_devito_elastic.py`, the formulation of Devito's
`examples/seismic/elastic`), float32, same heterogeneous medium, explosive Ricker source, rigid edges
(no absorbing layer on either side, for equal work), only the final fields kept; orders 2, 4, 8 on
300^2 x 1,000 steps and 1000^2 x 500 steps.

Run: python benchmarks/elastic_wave.py [--quick] [--devito-python PYTHON] [--cases n,steps,order ...]
Prints `name: value` lines (headers start with '#'): each side's best time over `--repeats` runs after a
warm-up (compilation excluded), the ratio sciax / Devito (< 1: sciax faster), both sides' largest |vx|
(the same problem), once per case `sciax_devito_max_rel_diff_<case>` (the largest difference of the two last
`vx` fields over the largest |vx|, after at most as many steps as the fastest wave takes to cover 80 % of the
way to an edge: the same scheme, `density_average="harmonic"` and the source sampled at the half steps on both
sides, agrees to float32 round-off),
a sciax run with CPML(20) layers for their cost, and the load average before and after (the machine is
shared; times under load are noisy). Each side runs in its own process, one after the other, on all cores
(XLA's default threads; Devito's OpenMP with `OMP_NUM_THREADS` = the core count) and pinned to one
(`taskset -c 0`, XLA `--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1`,
`OMP_NUM_THREADS=1`): `--cores all|1|both`. On all cores of a multi-core machine sciax also runs with the
grid sharded along x over one XLA CPU device per core (`sciax.parallel.shard`, slab mesh):
`sciax_sharded_elastic_<case>_s` and `ratio_sciax_sharded_over_devito_<case>`. Asserts nothing.

Session 26 (quiet, jax 0.12.0.1): sharded at 1000^2 x 500, orders 2 / 4 / 8, 0.89 / 0.83 / 0.78 of Devito's
all-core time (one device 1.31-1.44); sharding loses at 300^2 (1.5-1.6) and on jax 0.10.2 (1.6-2.1).

Measured on a quiet 2-core machine (load 0.9-1.2, 2026-11-28, jax 0.10.2 / 0.12.0.1, Devito 4.8): sciax /
Devito on all cores 0.87-1.04 on 300^2 x 1,000 (orders 2, 4, 8) and 1.22-1.42 on 1000^2 x 500; pinned to one
core 1.05-1.31 and 1.02-1.15 (docs/benchmarks.md, "Elastic waves"). With `Dirichlet(0)` edges sciax carries
the fields with their ghost points on the CPU (`StaggeredLeapfrog`'s padded-state step): each half-update is
one pass over memory (about 21-25 GB/s on one core at 1000^2). What is left: Devito's OpenMP splits each step
over both cores (XLA:CPU runs an in-place update on one thread). CPML(20) layers cost 1.3-1.8x the rigid
run on jax 0.12 (padded step, memory on the layer strips) and 3.1-3.5x on jax 0.10.2 (the plain step).
"""

import argparse
import math
import os
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import sciax
from sciax.pde import CPML, Dirichlet, ElasticWave, Grid, StaggeredLeapfrog

sys.path.insert(0, os.path.dirname(__file__))
from _agreement import max_rel_diff, steps_before_edge  # noqa: E402
from _devito_elastic import DTIME, F0, H, medium  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
parser.add_argument("--devito-python", default="/work/devito-venv/bin/python", help="interpreter with devito")
parser.add_argument("--cases", nargs="+", help='"n,steps,order" (default: the documented set)')
parser.add_argument("--repeats", type=int, default=3)
parser.add_argument("--cores", choices=["all", "1", "both"], default="both")
parser.add_argument("--no-cpml", action="store_true", help="skip the sciax run with CPML layers")
parser.add_argument("--sciax-case", help=argparse.SUPPRESS)  # "n,steps,order,cpml": one sciax run (subprocess)
parser.add_argument("--host-devices", type=int, default=1, help=argparse.SUPPRESS)  # its sharded run: CPU devices
parser.add_argument("--save-last", help=argparse.SUPPRESS)  # its last vx to this .npy file (agreement check)
args = parser.parse_args()
if args.host_devices > 1:  # before JAX starts its CPU backend
    jax.config.update("jax_num_cpu_devices", args.host_devices)

if args.cases:
    CASES = [tuple(int(x) for x in c.split(",")) for c in args.cases]
elif args.quick:
    CASES = [(100, 100, 2), (100, 100, 4)]
else:
    CASES = [(n, s, o) for n, s in ((300, 1000), (1000, 500)) for o in (2, 4, 8)]


def sciax_run(n: int, steps: int, order: int, bc):
    vp, vs, rho = medium(n)
    grid = Grid((n, n), n * H)
    model = ElasticWave(grid, f0=F0, bc=bc, order=order, receivers=[(n // 2 + 1, n // 2)], density_average="harmonic")
    if jax.device_count() > 1:  # `--host-devices`: the grid cut along x, one block per CPU device
        model = sciax.parallel.shard(model, sciax.parallel.make_mesh("slab"))
    params = {"vp": jnp.asarray(vp), "vs": jnp.asarray(vs), "rho": jnp.asarray(rho), "source": jnp.array([n // 2] * 2)}
    z = jnp.zeros((n, n), jnp.float32)
    y0 = {k: z for k in ("vx", "vz", "sxx", "szz", "sxz")}
    ts = jnp.asarray([0.0, steps * DTIME], jnp.float32)
    method = StaggeredLeapfrog(DTIME, checkpoint=None)

    def run():
        return sciax.simulate(model, y0, ts, params, method=method, save=("vx",)).ys["vx"][-1]

    jax.block_until_ready(run())  # compile
    best = math.inf
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(run())
        best = min(best, time.perf_counter() - start)
        if best > 20:
            break
    if args.save_last:
        np.save(args.save_last, np.asarray(out))
    return best, float(jnp.max(jnp.abs(out)))


def side(cmd, cores: str, env: dict) -> dict:
    """Run one side in its own process (pinned to core 0 with `cores == "1"`) and parse its lines."""
    if cores == "1":
        cmd = ["taskset", "-c", "0", *cmd]
    out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in (line.split(": ") for line in out.splitlines() if ": " in line)}


def agreement(n: int, steps: int, order: int, me: list, devito: str) -> None:
    """Print the largest difference between the two sides' last `vx` over the largest |vx| (fewer steps where the
    fastest wave, 3000 m/s, would come near an edge: `steps_before_edge`)."""
    steps = steps_before_edge(steps, n, H, 3000, DTIME)
    once = ["--repeats", "1", "--save-last"]
    diff = max_rel_diff(
        lambda path: side([*me, f"{n},{steps},{order},0", *once, path], "all", {}),
        lambda path: side([args.devito_python, devito, f"{n},{steps},{order}", *once, path], "all", {}),
    )
    print(f"sciax_devito_max_rel_diff_{n}_{steps}_o{order}: {diff:.2e}", flush=True)


def compare(n: int, steps: int, order: int, cores: str):
    threads = "1" if cores == "1" else str(os.cpu_count())
    xla = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" if cores == "1" else ""
    name, tag = f"{n}_{steps}_o{order}", f"{n}_{steps}_o{order}_{cores}core" + ("" if cores == "1" else "s")
    me = [sys.executable, __file__, "--repeats", str(args.repeats), "--sciax-case"]
    s = side([*me, f"{n},{steps},{order},0"], cores, {"XLA_FLAGS": xla})
    devito = os.path.join(os.path.dirname(__file__), "_devito_elastic.py")
    d = side(
        [args.devito_python, devito, f"{n},{steps},{order}", "--repeats", str(args.repeats)],
        cores,
        {"OMP_NUM_THREADS": threads, "DEVITO_LANGUAGE": "openmp"},
    )
    s_time, d_time = s["sciax_s"], d[f"devito_elastic_{name}_s"]
    print(f"sciax_elastic_{tag}_s: {s_time:.4f}")
    print(f"devito_elastic_{tag}_s: {d_time:.4f}")
    print(f"ratio_sciax_over_devito_{tag}: {s_time / d_time:.3f}")
    devices = os.cpu_count() or 1
    if cores != "1" and devices > 1 and n % devices == 0:  # also sharded over one XLA CPU device per core
        sharded = side([*me, f"{n},{steps},{order},0", "--host-devices", str(devices)], cores, {"XLA_FLAGS": xla})
        print(f"sciax_sharded_elastic_{tag}_s: {sharded['sciax_s']:.4f}")
        print(f"ratio_sciax_sharded_over_devito_{tag}: {sharded['sciax_s'] / d_time:.3f}")
    print(f"sciax_elastic_{tag}_Mpoint_steps_per_s: {n * n * steps / s_time / 1e6:.1f}")
    print(f"max_abs_vx_{tag}_sciax_devito: {s['max_abs_vx']:.4g} {d[f'devito_elastic_{name}_max_abs_vx']:.4g}")
    if cores == ("1" if args.cores == "1" else "all"):
        agreement(n, steps, order, me, devito)
    if not args.no_cpml:
        c = side([*me, f"{n},{steps},{order},1"], cores, {"XLA_FLAGS": xla})
        print(f"sciax_elastic_cpml20_{tag}_s: {c['sciax_s']:.4f}")


if args.sciax_case:
    n, steps, order, cpml = (int(x) for x in args.sciax_case.split(","))
    seconds, vmax = sciax_run(n, steps, order, CPML(20) if cpml else Dirichlet(0))
    print(f"sciax_s: {seconds:.6f}")
    print(f"max_abs_vx: {vmax:.6g}")
    sys.exit(0)

print(f"# jax {jax.__version__}, backend {jax.default_backend()}, {os.cpu_count()} cores, float32")
print(f"load_average_before: {os.getloadavg()[0]:.2f}")
for n, steps, order in CASES:
    for cores in ("all", "1") if args.cores == "both" else (args.cores,):
        compare(n, steps, order, cores)
print(f"load_average_after: {os.getloadavg()[0]:.2f}")
