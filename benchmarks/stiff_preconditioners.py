"""Preconditioners for Newton–Krylov BDF, and Jacobian reuse for Ros34PW2, on the 2-D Brusselator.

The problem of `stiff_pde.py` (SciMLBenchmarks' stiff PDE): an N x N periodic grid of
[0, 1]^2, spacing 1/(N-1), 2 N^2 states, u_t = 1 + u^2 v - 4.4 u + alpha lap u + f,
v_t = 3.4 u - u^2 v + alpha lap v, alpha = 10, f = 5 in the disc
(x-0.3)^2 + (y-0.6)^2 <= 0.01 for t >= 1.1, t in [0, 11.5], rtol 1e-6, atol 1e-8.

Compared in one run: scipy `solve_ivp(method="BDF", jac_sparsity=...)` (the baseline);
sciax `BDF(jacobian="jvp", linear_solver=lineax.GMRES(...), preconditioner=P)` with P =
none, the FFT inverse of I - c alpha lap (`sciax.ode.DiffusionPreconditioner`),
block-Jacobi on the species at each point and ILU (`sciax.linalg.JacobianPreconditioner`,
Jacobian of the whole right-hand side by colouring), and the operator split of the FFT
inverse then block-Jacobi of the reactions only (`sciax.linalg.OperatorSplit`); and
`Ros34PW2` with a sparse Jacobian (colouring + SuperLU) without and with
`reuse_jacobian=True`. Errors: relative max-norm difference at t = 11.5 from scipy BDF at
rtol 1e-10, atol 1e-12 (its sparse Jacobian, an independent code). GMRES iterations:
scipy's GMRES (unrestarted, rtol 1e-6) on (I - cJ) x = 1 at the initial state for c =
1e-3 and 1e-2 (BDF's c = h/alpha_k ranges over these here), each preconditioner applied
as built for BDF. lineax's GMRES, used inside BDF, always runs whole restart cycles, so
its cost per solve is `restart` products; `restart=5` suits a good preconditioner.

Which to use when (measured at N = 32 and 64 on a 2-core CPU shared with other jobs, load
~10, so absolute times are inflated ~5x and ratios are noisy (one timed run each; scipy BDF
took 15.7 s at N = 32 and 66.8 s at N = 64 in these runs). N = 32 figures first, N = 64 after):

- Reaction–diffusion on a regular grid: the FFT inverse of the diffusion, alone (0.19x /
  0.06x scipy BDF's time, 3-4 GMRES iterations per solve at both N) or followed by
  block-Jacobi of the reactions (`OperatorSplit`, 0.14x / 0.02x, 3-5 iterations; it pays
  when the reactions are stiff too). Error as scipy BDF's (1.8e-4 vs 1.8e-4; 6.7e-5 vs
  6.1e-5). Use `restart=5` with these.
- Block-Jacobi alone only where the point-local reactions, not diffusion, make the
  Newton matrix stiff: here (diffusion-dominated) it barely reduces GMRES iterations
  (58 vs 59 at c = 1e-2; 118 vs 119), Newton fails and BDF takes 4x / 15x the steps
  (1.7x / 1.8x scipy's time).
- ILU (`kind="ilu"`) for a general sparse Jacobian with no physics preconditioner at
  hand: it halves the iterations (32 vs 59; 59 vs 119), but every application is a host
  callback (~1 ms), so BDF took 3.5x / 2.9x scipy's time here; prefer a sparse direct
  solve (`BDF(jacobian=pattern)`, SuperLU) at these sizes.
- Unpreconditioned GMRES: 1.2x / 0.7x scipy; always slower than the FFT preconditioners.
- Ros34PW2 with a sparse Jacobian: 1.5x / 0.43x scipy without reuse; with
  `reuse_jacobian=True` 5x fewer Jacobian evaluations (167 of 845 steps; 157 of 865) but
  hardly faster (2.5x / 0.35x, within the noise of these runs): here a Jacobian is 10
  `jvp`s, cheap next to the SuperLU factorisation that every step still needs (adaptive
  `h` changes at each step), and a step with a kept Jacobian that fails the error test is
  redone. Reuse pays where the Jacobian is dear (a costly `f`, a dense `jacfwd`, many
  colours) or with constant steps (the factorisation is then kept too).

Run: python benchmarks/stiff_preconditioners.py [--sizes 32 64]
Prints `name: value` lines (seconds are wall time after compilation, one run each).
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import time  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import lineax as lx  # noqa: E402
import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402

# The Brusselator of `stiff_pde.py` (same directory): its initial state, forcing disc, tolerances,
# sparsity pattern and NumPy right-hand side for scipy.
from stiff_pde import ALPHA, ATOL, RTOL, T_END, numpy_rhs, pattern  # noqa: E402
from stiff_pde import setup as _setup  # noqa: E402

import sciax  # noqa: E402


def setup(n):
    z0, disc, _ = _setup(n)
    return z0, disc


def preconditioners(n):
    problem = sciax.ode.brusselator_2d(n)
    rhs, reactions = problem.model.rhs, problem.reactions
    reaction_pattern = sp.kron(np.ones((2, 2)), sp.identity(n * n))
    return {
        "none": None,
        "fft": problem.diffusion,
        "block_jacobi": sciax.linalg.JacobianPreconditioner(rhs, problem.pattern, fields=2),
        "ilu": sciax.linalg.JacobianPreconditioner(rhs, problem.pattern, kind="ilu"),
        "fft_then_blocks": sciax.linalg.OperatorSplit(
            problem.diffusion, sciax.linalg.JacobianPreconditioner(reactions, reaction_pattern, fields=2)
        ),
    }


def timed(fn):
    fn()  # compile / warm up
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def run_scipy(n, rtol=RTOL, atol=ATOL):
    z0, disc = setup(n)
    f = numpy_rhs(n, disc, (n - 1) ** 2)
    jac_sparsity = sp.csr_matrix(pattern(n), dtype=float)

    def go():
        sol = scipy.integrate.solve_ivp(
            f, (0, T_END), z0, method="BDF", rtol=rtol, atol=atol, jac_sparsity=jac_sparsity
        )
        assert sol.success, sol.message
        return sol.y[:, -1], sol.nfev, sol.nlu

    start = time.perf_counter()
    out = go()
    return out, time.perf_counter() - start


def run_sciax(n, method):
    z0, _ = setup(n)
    model = sciax.ode.brusselator_2d(n).model
    ts = jnp.asarray([0.0, T_END])

    @jax.jit
    def solve(z0):
        sol = sciax.simulate(model, z0, ts, ALPHA, method=method, rtol=RTOL, atol=ATOL, max_steps=100_000)
        return sol.ys[-1], sol.stats

    (y, stats), seconds = timed(lambda: jax.block_until_ready(solve(jnp.asarray(z0))))
    return np.asarray(y), {k: int(v) for k, v in stats.items() if k.startswith("num")}, seconds


def gmres_iterations(n, preconditioner, c):
    z0 = jnp.asarray(setup(n)[0])
    rhs = sciax.ode.brusselator_2d(n).model.rhs
    p = pattern(n)
    jac = sciax.linalg.sparse_jacobian(lambda z: rhs(0.0, z, ALPHA), z0, p)
    rows, cols = np.asarray(jac.indices).T
    matrix = sp.identity(z0.size) - c * sp.csr_matrix((np.asarray(jac.data), (rows, cols)), shape=jac.shape)
    kwargs = {}
    if preconditioner is not None:
        apply = jax.jit(lambda r: preconditioner(0.0, z0, c, ALPHA).apply(r))
        kwargs["M"] = spla.LinearOperator(matrix.shape, lambda r: np.array(apply(jnp.asarray(r))))
    residuals = []
    spla.gmres(
        matrix, np.ones(z0.size), rtol=1e-6, atol=0.0, restart=400, maxiter=1, callback=residuals.append,
        callback_type="pr_norm", **kwargs,
    )  # fmt: skip
    return len(residuals)


def rel_error(y, ref):
    return float(np.max(np.abs(y - ref)) / np.max(np.abs(ref)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64])
    args = parser.parse_args()
    print(f"backend: {jax.default_backend()}, devices: {jax.device_count()}")
    for n in args.sizes:
        print(f"# N = {n} ({2 * n * n} states)")
        (ref, _, _), seconds = run_scipy(n, 1e-10, 1e-12)
        print(f"reference_N{n}: scipy BDF rtol 1e-10 atol 1e-12 ({seconds:.1f} s)")
        (y, nfev, nlu), scipy_seconds = run_scipy(n)
        print(f"scipy_bdf_N{n}_seconds: {scipy_seconds:.3f}")
        print(f"scipy_bdf_N{n}_error: {rel_error(y, ref):.2e}")
        print(f"scipy_bdf_N{n}_nfev_nlu: {nfev} {nlu}")
        for name, p in preconditioners(n).items():
            for c in (1e-3, 1e-2):
                print(f"gmres_iterations_N{n}_c{c:.0e}_{name}: {gmres_iterations(n, p, c)}")
            restart = 20 if p is None else 5
            solver = lx.GMRES(rtol=1e-4, atol=1e-12, restart=restart, max_steps=20)
            method = sciax.ode.BDF(jacobian="jvp", linear_solver=solver, preconditioner=p)
            y, stats, seconds = run_sciax(n, method)
            print(f"bdf_krylov_{name}_N{n}_seconds: {seconds:.3f} ({seconds / scipy_seconds:.2f}x scipy BDF)")
            print(f"bdf_krylov_{name}_N{n}_error: {rel_error(y, ref):.2e}")
            print(f"bdf_krylov_{name}_N{n}_steps: {stats['num_steps']} (restart {restart})")
        for reuse in (False, True):
            method = sciax.ode.Ros34PW2(jacobian=pattern(n), reuse_jacobian=reuse)
            y, stats, seconds = run_sciax(n, method)
            name = f"ros34pw2_sparse{'_reuse' if reuse else ''}_N{n}"
            print(f"{name}_seconds: {seconds:.3f} ({seconds / scipy_seconds:.2f}x scipy BDF)")
            print(f"{name}_error: {rel_error(y, ref):.2e}")
            print(f"{name}_steps_jacobians: {stats['num_steps']} {stats['num_jacobian_evals']}")


if __name__ == "__main__":
    main()
