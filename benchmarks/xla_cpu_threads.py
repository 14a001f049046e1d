"""Whether XLA:CPU spreads the kernels of a compiled time loop over the cores, on the jax installed.

This is the question behind `Leapfrog`'s CPU rules (`_in_place_pays` in `sciax/pde/waves/_leapfrog.py`) and
behind the all-cores lines of `fd_wave.py --devito-only`: `simulate` runs its steps inside `lax.scan`, and on
jax 0.12.0.1 (2-core machine, session 43) XLA:CPU ran the kernels of small loop bodies on one thread, where
jax 0.10.2 split them over both cores and where the same kernels compiled without a loop were split too.

Two kernels, each run `--steps` times on an `--n`^2 float32 grid in one process on all the cores it may use:

- `stencil`: a leapfrog update with a 5-point Laplacian, `2p - q + c lap(p)`, written so that the new field is
  one elementwise pass (`lax.pad` of the interior terms, minus `q`), the form XLA:CPU may split over threads;
- `sin`: `sin(x) * a + b`, compute-bound.

Each is timed inside `lax.scan` (two steps per iteration, as `Leapfrog` runs) and as a two-step function
compiled without a loop and called from Python with its buffers donated. Prints `name: value` lines: the
seconds (best of 5 after a compiling run) and the cores used (process CPU time over wall time) of each, and
the ratio `<kernel>_in_loop_over_top_level`. Asserts nothing.

Run: python benchmarks/xla_cpu_threads.py [--n 2000] [--steps 100]
"""

import argparse
import os
import resource
import time

import jax
import jax.numpy as jnp
from _device import best_time
from jax import lax

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=2000)
parser.add_argument("--steps", type=int, default=100, help="an even number of steps")
args = parser.parse_args()


def stencil(p, q):
    zero = jnp.zeros((), p.dtype)
    inner = p[1:-1, 1:-1]
    laplacian = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * inner
    config = [(1, 1, 0)] * 2
    return (lax.pad(2 * inner, zero, config) - q) + lax.pad(0.1 * laplacian, zero, config)


def sine(p, q):
    return jnp.sin(p) * 1.0001 + 0.1 * q


def two_steps(kernel):
    def run(p, q):
        r = kernel(p, q)
        return kernel(r, p), r

    return run


def in_loop(kernel):
    step = two_steps(kernel)
    return jax.jit(lambda p, q: lax.scan(lambda c, _: (step(*c), None), (p, q), None, length=args.steps // 2)[0][0])


def top_level(kernel):
    step = jax.jit(two_steps(kernel), donate_argnums=(0, 1))

    def run(p, q):
        p, q = p.copy(), q.copy()  # the caller's arrays stay valid: the steps donate these copies
        for _ in range(args.steps // 2):
            p, q = step(p, q)
        return p

    return run


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(run, p, q) -> tuple[float, float]:
    """Best wall time of `run(p, q)` (`_device.best_time`: best of 5 after a compiling run), and CPU time over wall
    time across those runs, the compiling run left out."""
    jax.block_until_ready(run(p, q))
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    best = best_time(run, p, q, repeats=5)
    return best, (cpu_seconds() - cpu0) / (time.perf_counter() - wall0)


def main() -> None:
    if args.steps % 2:
        parser.error(f"--steps must be even (two steps per call), got {args.steps}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"# jax {jax.__version__}, {jax.default_backend()}, {cores} cores, {args.n}^2 float32, {args.steps} steps")
    p = jax.random.normal(jax.random.PRNGKey(0), (args.n, args.n), jnp.float32)
    q = 0.9 * p
    for name, kernel in (("stencil", stencil), ("sin", sine)):
        times = {}
        for where, build in (("in_loop", in_loop), ("top_level", top_level)):
            seconds, used = timed(build(kernel), p, q)
            times[where] = seconds
            print(f"{name}_{where}_s: {seconds:.4f}")
            print(f"{name}_{where}_cores_used: {used:.2f}", flush=True)
        print(f"{name}_in_loop_over_top_level: {times['in_loop'] / times['top_level']:.2f}", flush=True)


if __name__ == "__main__":
    main()
