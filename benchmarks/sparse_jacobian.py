"""Jacobian of a method-of-lines right-hand side: dense `jax.jacfwd` vs colouring (`sciax.linalg.sparse_jacobian`).

The 2-D Brusselator on an N x N periodic grid (2 N^2 states; SciMLBenchmarks'
stiff PDE: u_t = 1 + u^2 v - 4.4 u + alpha lap u, v_t = 3.4 u - u^2 v + alpha lap v,
alpha = 10, second-order Laplacian), N = 32, 64, 128. The stiff solvers of the
"large stiff systems" work need this Jacobian at every step (or every few):
dense costs 2 N^2 jvps and (2 N^2)^2 memory, colouring a constant number of jvps.
The dense one is skipped where its matrix would exceed 2 GB.

Run: python benchmarks/sparse_jacobian.py [--repeats 5]
Prints `name: value` lines (seconds per Jacobian after compilation, best of repeats).
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import time  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402

ALPHA = 10.0


def brusselator(n):
    grid = sciax.pde.Grid((n, n), 1.0)
    bc = sciax.pde.Periodic()

    def f(z):
        u, v = z.reshape(2, n, n)
        lap = lambda w: sciax.pde.fd.laplacian(w, grid, bc=bc)  # noqa: E731
        du = 1.0 + u * u * v - 4.4 * u + ALPHA * lap(u)
        dv = 3.4 * u - u * u * v + ALPHA * lap(v)
        return jnp.concatenate([du.ravel(), dv.ravel()])

    pattern = sciax.linalg.stencil_pattern(grid, 1, True, fields=2)
    rng = np.random.default_rng(0)
    z = jnp.asarray(np.concatenate([1.0 + 0.1 * rng.random(n * n), 3.0 + 0.1 * rng.random(n * n)]))
    return f, pattern, z


def best_time(fn, arg, repeats):
    jax.block_until_ready(fn(arg))  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(arg))
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    print(f"# Brusselator 2-D Jacobian, float64, jax {jax.__version__}, backend {jax.default_backend()}")
    for n in (32, 64, 128):
        f, pattern, z = brusselator(n)
        colours = sciax.linalg.column_colouring(pattern)
        sparse = jax.jit(lambda x: sciax.linalg.sparse_jacobian(f, x, pattern, colours=colours).data)  # noqa: B023
        t_sparse = best_time(sparse, z, repeats)
        print(f"brusselator_n{n}_states: {z.size}")
        print(f"brusselator_n{n}_nonzeros: {pattern.nnz}")
        print(f"brusselator_n{n}_colours: {colours.max() + 1}")
        print(f"brusselator_n{n}_sparse_jacobian_s: {t_sparse:.3g}")
        if z.size**2 * 8 <= 2e9:
            t_dense = best_time(jax.jit(jax.jacfwd(f)), z, repeats)
            print(f"brusselator_n{n}_dense_jacfwd_s: {t_dense:.3g}")
            print(f"brusselator_n{n}_dense_over_sparse: {t_dense / t_sparse:.1f}")
        else:
            print(f"# N = {n}: dense Jacobian ({z.size**2 * 8 / 1e9:.1f} GB) skipped")


if __name__ == "__main__":
    main()
