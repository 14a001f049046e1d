"""2-D Dirichlet Poisson benchmark: sciax multigrid-PCG and DST solver vs lineax CG, scipy spsolve, pyamg.

Run: python benchmarks/poisson.py [--quick] [--float32]
Prints `name: value` lines (header lines start with '#'); asserts nothing.

Problem: the cell-centred 5-point Laplacian (`sciax.linalg.laplacian_operator`, Dirichlet
on all faces) on the unit square at 512^2 and 1024^2 (`--quick`: 128^2, 256^2), a random
right-hand side, relative tolerance 1e-8. Every method solves the same matrix (scipy and
pyamg get it as CSR from `GridOperator.as_sparse()`). Times: best of 3 after a compile
run (jax methods jitted, setup such as the multigrid hierarchy included in the timed call);
pyamg's hierarchy setup is timed separately from its solve. Ratios are against scipy
`spsolve` (SuperLU) and against unpreconditioned lineax CG, measured in the same run.
"""

import sys

import jax

FLOAT32 = "--float32" in sys.argv
jax.config.update("jax_enable_x64", not FLOAT32)

import functools  # noqa: E402
import time  # noqa: E402

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import lineax as lx  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402

from sciax import linalg as la  # noqa: E402
from sciax.pde import Dirichlet, Grid  # noqa: E402

RTOL = 1e-8 if not FLOAT32 else 1e-5


def best(fn, repeats=3):
    out = fn()
    jax.block_until_ready(out)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        jax.block_until_ready(out)
        times.append(time.perf_counter() - t)
    return min(times), out


@eqx.filter_jit
def mgpcg(op, b):
    r = la.solve(op, b, "cg", rtol=RTOL, preconditioner=la.Multigrid(op), throw=False)
    return r.value, r.num_steps, r.residual


@eqx.filter_jit
def dst(op, b):
    r = la.solve(op, b, "fast", throw=False)
    return r.value, r.num_steps, r.residual


@eqx.filter_jit
def plain_cg(op, b):
    # lineax CG without a preconditioner, max-norm tolerance relative to max|b| like sciax's.
    neg = lx.TaggedLinearOperator(-op.as_lineax(), frozenset({lx.symmetric_tag, lx.positive_semidefinite_tag}))
    atol = RTOL * jnp.max(jnp.abs(b))
    sol = lx.linear_solve(neg, -b, lx.CG(rtol=RTOL, atol=atol, max_steps=100000), throw=False)
    x = sol.value
    return x, sol.stats["num_steps"], jnp.linalg.norm(b - op.mv(x)) / jnp.linalg.norm(b)


def main():
    sizes = (128, 256) if "--quick" in sys.argv else (512, 1024)
    print(
        f"# 2-D Dirichlet Poisson, 5-point, rtol {RTOL}, {'float32' if FLOAT32 else 'float64'}, devices {jax.devices()}"
    )
    try:
        import pyamg
    except ImportError:
        pyamg = None
        print("# pyamg not installed: skipped")
    for n in sizes:
        grid = Grid((n, n), 1.0, origin=(0.5 / n,) * 2)
        op = la.laplacian_operator(grid, Dirichlet())
        b = jnp.asarray(np.random.default_rng(0).standard_normal(grid.shape), op.dtype)
        results = {}
        for name, fn in (("sciax_mgpcg", mgpcg), ("sciax_dst", dst), ("lineax_cg", plain_cg)):
            t, (x, steps, res) = best(functools.partial(fn, op, b))
            results[name] = t
            print(f"poisson{n}_{name}_s: {t:.4g}")
            print(f"poisson{n}_{name}_iterations: {int(steps)}")
            print(f"poisson{n}_{name}_residual: {float(res):.3g}")
        bcoo = op.as_sparse()
        idx = np.asarray(bcoo.indices)
        a = sp.csc_matrix((np.asarray(bcoo.data), (idx[:, 0], idx[:, 1])), shape=bcoo.shape)
        bn = np.asarray(b, np.float64).reshape(-1)
        t, x = best(functools.partial(spla.spsolve, a, bn), repeats=1)
        results["scipy_spsolve"] = t
        print(f"poisson{n}_scipy_spsolve_s: {t:.4g}")
        print(f"poisson{n}_scipy_spsolve_residual: {np.linalg.norm(bn - a @ x) / np.linalg.norm(bn):.3g}")
        if pyamg is not None:
            csr = sp.csr_matrix(-a)  # SPD form
            t_setup = time.perf_counter()
            ml = pyamg.ruge_stuben_solver(csr)
            t_setup = time.perf_counter() - t_setup
            res_hist = []
            t, x = best(functools.partial(ml.solve, -bn, tol=RTOL, residuals=res_hist), repeats=1)
            results["pyamg"] = t
            print(f"poisson{n}_pyamg_setup_s: {t_setup:.4g}")
            print(f"poisson{n}_pyamg_solve_s: {t:.4g}")
            print(f"poisson{n}_pyamg_iterations: {len(res_hist) - 1}")
        sciax_best = min(results["sciax_mgpcg"], results["sciax_dst"])
        print(f"poisson{n}_speedup_sciax_best_vs_spsolve: {results['scipy_spsolve'] / sciax_best:.3g}")
        print(f"poisson{n}_speedup_mgpcg_vs_spsolve: {results['scipy_spsolve'] / results['sciax_mgpcg']:.3g}")
        print(f"poisson{n}_speedup_mgpcg_vs_lineax_cg: {results['lineax_cg'] / results['sciax_mgpcg']:.3g}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
