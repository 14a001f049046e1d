"""Acoustic wave benchmark: sciax vs a NumPy loop vs a hand-written lax.scan; stencil bandwidth; FWI memory;
sciax vs Devito (orders 2, 4, 8; 300^2 x 1,000 and 2000^2 x 100 steps; 200^3 x 100 at order 8).

Run: python benchmarks/fd_wave.py [--quick] [--float64] [--devito-python PYTHON] [--devito-only] [--per-step] [--gpu]
`--gpu` runs only the comparison cases with sciax on the default device (a GPU on a GPU session) and prints each
time and its fraction of the device's streaming bandwidth (Devito needs no GPU run).
Prints `name: value` lines (headers start with '#'). Reports numbers only; asserts nothing.

The Devito comparison (float32, only the last pressure kept) runs each side in its own process, on all
cores and pinned to one (`taskset -c 0`, XLA's `--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1`, Devito's `OMP_NUM_THREADS=1`), alternating sciax and Devito per case; on all
cores sciax runs twice: on one XLA CPU device, and with the grid sharded over one device per core
(`sciax.parallel.shard`, as docs/parallel.md shows), since XLA:CPU runs an in-place step on one thread;
Devito runs under `--devito-python` (default: this interpreter, if it imports devito), the Devito side being
`benchmarks/_devito_wave.py`.
"""

import argparse
import math
import os
import resource
import sys
import time

import jax

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
parser.add_argument("--float64", action="store_true")
parser.add_argument("--reference-only", action="store_true", help="stop after the reference problem")
parser.add_argument(
    "--no-thp-rerun",
    action="store_true",
    help="do not rerun the reference problem with glibc's huge-page malloc tunable",
)
parser.add_argument("--devito-python", help="interpreter with devito installed (default: this one, if it has devito)")
parser.add_argument("--devito-only", action="store_true", help="run only the comparison with Devito")
parser.add_argument("--devito-cases", nargs="+", help='only these comparison cases, each "ndim,n,steps,order"')
parser.add_argument("--devito-cores", choices=["all", "1", "both"], default="both", help="comparison: cores")
parser.add_argument(
    "--per-step",
    action="store_true",
    help="comparison: also 3x the steps (each side's time per step, fixed cost; sciax with reused pages)",
)
parser.add_argument("--gpu", action="store_true", help="only the comparison cases on the default device (GPU)")
parser.add_argument("--sciax-cases", nargs="+", help=argparse.SUPPRESS)  # the comparison's sciax side (subprocess)
parser.add_argument("--host-devices", type=int, default=1, help=argparse.SUPPRESS)  # its sharded run: XLA CPU devices
parser.add_argument("--save-last", help=argparse.SUPPRESS)  # its last pressure to this .npy file (agreement check)
args = parser.parse_args()
if args.host_devices > 1:  # before JAX starts its CPU backend
    jax.config.update("jax_num_cpu_devices", args.host_devices)
jax.config.update("jax_enable_x64", args.float64 and not args.sciax_cases)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from tests.pde._fd_reference import reference_wave  # noqa: E402

if args.sciax_cases or args.devito_only or args.gpu:
    from _wave_vs_devito import compare_with_devito, gpu_figures, run_sciax_cases

    if args.gpu:
        gpu_figures(args.quick)
    elif args.sciax_cases:
        run_sciax_cases(args.sciax_cases, save=args.save_last)
    else:
        compare_with_devito(
            __file__, args.quick, args.devito_python, args.devito_cases, args.devito_cores, args.per_step
        )
    sys.exit(0)

DT = np.float64 if args.float64 else np.float32
N, STEPS = (100, 200) if args.quick else (300, 1000)
BIG, BIG_STEPS = (512, 200) if args.quick else (2048, 1000)
H, DTIME, F0 = 5.0, 5e-4, 25.0


def timed(fn, repeats=3):
    fn()  # compile / warm up
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best


def timed_interleaved(fns, repeats=7):
    """Median times of several functions run alternately, so load drift hits them alike."""
    for fn in fns:
        jax.block_until_ready(fn())  # compile / warm up
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            times[i].append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]


rng = np.random.default_rng(0)
c = (1500 + 500 * rng.random((N, N))).astype(DT)
rho = (1000 + 800 * rng.random((N, N))).astype(DT)
src = (N // 2, N // 2)


# --- plain NumPy loop of the reference scheme, every wavefield kept (timed below, interleaved with the JAX runs)
def run_numpy():
    return reference_wave(c, rho, H, H, DTIME, STEPS, F0, src, keep=True)


# --- sciax
grid = sciax.pde.Grid((N, N), (N * H, N * H))
model = sciax.pde.AcousticWave(grid, f0=F0, bc=sciax.pde.Neumann())
y0 = {"p": jnp.zeros((N, N), DT), "v": jnp.zeros((N, N), DT)}
ts = np.arange(STEPS + 1) * DTIME
params = {"c": jnp.asarray(c), "rho": jnp.asarray(rho), "source": jnp.asarray(src)}
method = sciax.pde.Leapfrog(DTIME, checkpoint=None)
run_sciax = jax.jit(lambda params: sciax.simulate(model, y0, ts, params, method=method, save="p").ys["p"])


# --- hand-written lax.scan of the same scheme
@jax.jit
def hand(c, rho):
    kappa_dt2 = rho * c**2 * DTIME**2
    rho_x = jnp.concatenate([0.5 * (rho[1:] + rho[:-1]), rho[-1:]], 0)
    rho_y = jnp.concatenate([0.5 * (rho[:, 1:] + rho[:, :-1]), rho[:, -1:]], 1)
    a = (math.pi * F0) ** 2

    def step(carry, n):
        p, p_prev = carry
        t = n * DTIME
        ax = jnp.concatenate([(p[1:] - p[:-1]) / (H * rho_x[:-1]), jnp.zeros_like(p[:1])], 0)
        ay = jnp.concatenate([(p[:, 1:] - p[:, :-1]) / (H * rho_y[:, :-1]), jnp.zeros_like(p[:, :1])], 1)
        d = jnp.concatenate([jnp.zeros_like(p[:1]), (ax[1:] - ax[:-1]) / H], 0)
        d = d + jnp.concatenate([jnp.zeros_like(p[:, :1]), (ay[:, 1:] - ay[:, :-1]) / H], 1)
        s = 1e-3 * (1 - 2 * a * (t - 1.2 / F0) ** 2) * jnp.exp(-a * (t - 1.2 / F0) ** 2)
        p_next = 2 * p - p_prev + kappa_dt2 * d
        p_next = p_next.at[src].add(DTIME**2 * 4 * math.pi * c[src] ** 2 * s)
        return (p_next, p), p_next

    zero = jnp.zeros_like(c)
    return jax.lax.scan(step, (zero, zero), jnp.arange(STEPS, dtype=c.dtype))[1]


# Medians of 5 runs each, the three alternating: one NumPy run alone swung the ratio
# from 2.7x to 8.8x on this shared 2-core machine.
t_numpy, t_sciax, t_hand = timed_interleaved(
    [run_numpy, lambda: run_sciax(params), lambda: hand(jnp.asarray(c), jnp.asarray(rho))], repeats=5
)
print(f"# reference problem {N}x{N}, {STEPS} steps, every wavefield kept, {np.dtype(DT).name}")
print(f"numpy_s: {t_numpy:.3f}")
print(f"sciax_s: {t_sciax:.3f}")
print(f"hand_scan_s: {t_hand:.3f}")
print(f"speedup_vs_numpy: {t_numpy / t_sciax:.2f}")
print(f"time_vs_hand_scan: {t_sciax / t_hand:.3f}")

# --- the floor under any JAX program that returns every wavefield: producing a fresh array of
# that size. XLA gets it from malloc, i.e. from fresh mmap'd 4 KiB pages, each faulted in on
# first write; NumPy asks for transparent huge pages (madvise) on large arrays, and so can
# glibc's malloc with GLIBC_TUNABLES=glibc.malloc.hugetlb=1.
out_shape = (STEPS, N, N)
fresh_jax = jax.jit(lambda x: jnp.broadcast_to(x, out_shape) * DT(1.0001))
field = jnp.ones((N, N), DT)


def fresh_numpy():
    out = np.empty(out_shape, DT)
    out[...] = 1.0001
    return out


t_fresh_jax, t_fresh_numpy = timed_interleaved([lambda: fresh_jax(field), fresh_numpy], repeats=5)
thp_path = "/sys/kernel/mm/transparent_hugepage/enabled"
thp = open(thp_path).read().strip() if os.path.exists(thp_path) else "unknown"
print(f"# transparent huge pages: {thp}; GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}")
print(f"fresh_output_write_jax_s: {t_fresh_jax:.3f}")
print(f"fresh_output_write_numpy_s: {t_fresh_numpy:.3f}")
print(f"sciax_s_above_fresh_output_floor: {t_sciax - t_fresh_jax:.3f}")
print(f"speedup_ceiling_vs_numpy_any_jax: {t_numpy / t_fresh_jax:.2f}")
sys.stdout.flush()
if args.reference_only:
    sys.exit(0)
if not args.no_thp_rerun and "GLIBC_TUNABLES" not in os.environ:
    import subprocess

    env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
    cmd = [sys.executable, "-u", __file__, "--reference-only"] + ["--quick"] * args.quick + ["--float64"] * args.float64
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    print("# the same, rerun with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (huge pages for malloc, as NumPy has)")
    for line in rerun.splitlines():
        if ":" in line and not line.startswith("#"):
            print(f"thp_{line}")

# --- large grid: stencil bandwidth vs copy bandwidth
gb = sciax.pde.Grid((BIG, BIG), (BIG * H, BIG * H))
mb = sciax.pde.AcousticWave(gb, f0=F0, bc=sciax.pde.Neumann())
yb = {"p": jnp.zeros((BIG, BIG), DT), "v": jnp.zeros((BIG, BIG), DT)}
cb = jnp.full((BIG, BIG), 2000.0, DT)
pb = {"c": cb, "rho": jnp.full((BIG, BIG), 1000.0, DT), "source": jnp.asarray((BIG // 2, BIG // 2))}
tsb = np.arange(0, BIG_STEPS + 1, 100) * DTIME
# Best of 3, like the copy baseline: on a shared machine single runs are noisy.
run_big = jax.jit(lambda pb: sciax.simulate(mb, yb, tsb, pb, method=method, save="p").ys["p"])
t_big = timed(lambda: run_big(pb), repeats=3)
item = np.dtype(DT).itemsize
# Per step the update must read p, p_prev, kappa dt^2, 1/rho_x, 1/rho_y and write p_next.
bytes_moved = 6 * BIG * BIG * item * BIG_STEPS
# Copy baseline: read + write of a 256 MiB (float32) array, repeated inside one compiled
# loop so buffers are reused (no page faults from fresh allocations in the timing).
COPIES = 20
big_copy = jnp.ones((8192, 8192), DT)
copy = jax.jit(lambda x: jax.lax.fori_loop(0, COPIES, lambda i, y: y * DT(1.0001), x))
t_copy = timed(lambda: copy(big_copy))
copy_bw = 2 * big_copy.size * item * COPIES / t_copy
stencil_bw = bytes_moved / t_big
print(f"# large grid {BIG}x{BIG}, {BIG_STEPS} steps, saving every 100")
print(f"copy_bandwidth_GBps: {copy_bw / 1e9:.2f}")
print(f"stencil_bandwidth_GBps: {stencil_bw / 1e9:.2f}")
print(f"bandwidth_fraction: {stencil_bw / copy_bw:.3f}")

# --- FWI gradient memory: 500x500 (quick: 150x150), 2000 steps (quick: 300), seismograms only
NF, SF = (150, 300) if args.quick else (500, 2000)
gf = sciax.pde.Grid((NF, NF), (NF * H, NF * H))
mf = sciax.pde.AcousticWave(gf, f0=F0, bc=sciax.pde.CPML(20), receivers=[(22, j) for j in range(20, NF - 20, 4)])
yf = {"p": jnp.zeros((NF, NF), DT), "v": jnp.zeros((NF, NF), DT)}
tsf = np.arange(SF + 1) * DTIME


def misfit(c):
    sol = sciax.simulate(
        mf,
        yf,
        tsf,
        {"c": c, "source": jnp.asarray((22, NF // 2))},
        method=sciax.pde.Leapfrog(DTIME, checkpoint=64),
        save="seismogram",
    )
    return jnp.mean(sol.ys["seismogram"] ** 2)


cf = jnp.full((NF, NF), 2000.0, DT)
# No outer jax.jit: the fixed-step driver compiles inside simulate (it needs concrete ts).
rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
start = time.perf_counter()
jax.block_until_ready(jax.grad(misfit)(cf))
print(f"# FWI gradient {NF}x{NF}, {SF} steps, checkpoint every 64 steps")
print(f"fwi_grad_s: {time.perf_counter() - start:.2f}")
print(f"peak_rss_before_GB: {rss_before:.3f}")
print(f"peak_rss_GB: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.3f}")

# --- sciax vs Devito (float32, only the last pressure kept), all cores and one core
from _wave_vs_devito import compare_with_devito  # noqa: E402

compare_with_devito(__file__, args.quick, args.devito_python, args.devito_cases, args.devito_cores)
