"""Run-time checks of traced inputs on a grid sharded over 2 forced CPU devices, run in a subprocess by
`test_runtime_checks.py`.

Each bad input is bad on one block only (the second along the sharded axis). A check failing on that
block alone once stopped its device while the other waited in the next halo exchange, and XLA:CPU
aborted the process after its 40 s rendezvous timeout. Prints `raised NAME: first line naming the
check` or `returned NAME: finite` per case, and `done` at the end. One compiled program per model.
"""

from tests._xla_flags import add_to_environment

add_to_environment("--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402
from sciax import parallel, pde  # noqa: E402

KEYS = ("must be", "CFL", "NaN or inf", "bulk modulus", "needs")
BAD = (30, 3)  # on the second of the two blocks of a 40- or 32-point first axis


def attempt(name: str, run, *args) -> None:
    try:
        out = jax.block_until_ready(run(*args))
    except Exception as e:  # noqa: BLE001 (jax wraps the check's error in its runtime error)
        lines = [line for line in str(e).splitlines() if any(k in line for k in KEYS)]
        print(f"raised {name}: {(lines or [type(e).__name__])[0].strip()}", flush=True)
    else:
        finite = all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree_util.tree_leaves(out))
        print(f"returned {name}: {'finite' if finite else 'not finite'}", flush=True)


def acoustic(slab):
    shape = (40, 40)
    model = parallel.shard(pde.AcousticWave(pde.Grid(shape, 200.0), f0=10.0, bc=pde.Neumann(), order=4), slab)
    source, ts = jnp.asarray((5, 5)), np.arange(3) * 1e-4

    @jax.jit
    def run(c, rho, p0):
        params = {"c": c, "rho": rho, "source": source}
        return sciax.simulate(model, {"p": p0, "v": jnp.zeros(shape)}, ts, params, method=pde.Leapfrog(1e-4)).ys

    c, rho, p0 = jnp.full(shape, 1500.0), jnp.full(shape, 1000.0), jnp.zeros(shape)
    attempt("acoustic_ok", run, c, rho, p0)
    attempt("acoustic_c", run, c.at[BAD].set(0.0), rho, p0)
    attempt("acoustic_rho", run, c, rho.at[BAD].set(-1.0), p0)
    attempt("acoustic_cfl", run, c.at[BAD].set(1e6), rho, p0)
    attempt("acoustic_y0", run, c, rho, p0.at[BAD].set(jnp.nan))
    attempt("acoustic_nonfinite", run, c.at[BAD].set(jnp.nan), rho, p0)


def wide_halo(slab):
    shape = (40, 40)
    model = pde.AcousticWave(pde.Grid(shape, 200.0), f0=10.0, bc=pde.Neumann(), order=4)
    sharded, y0 = parallel.shard(model, slab, halo_every=2), {"p": jnp.zeros(shape), "v": jnp.zeros(shape)}
    ts = np.arange(3) * 2e-4
    run = jax.jit(
        lambda c: sciax.simulate(sharded, y0, ts, {"c": c, "source": jnp.asarray((5, 5))}, method=pde.Leapfrog(1e-4)).ys
    )
    c = jnp.full(shape, 1500.0)
    attempt("wide_ok", run, c)
    attempt("wide_c", run, c.at[BAD].set(-1.0))
    attempt("wide_cfl", run, c.at[BAD].set(1e6))


def heat(slab):
    shape = (40, 16)
    model = parallel.shard(pde.fd.heat(pde.Grid(shape, 1.0), bc=pde.Neumann()), slab)
    run = jax.jit(lambda d, y0: sciax.simulate(model, y0, np.arange(3) * 1e-5, {"D": d}, method=pde.RK4(1e-5)).ys)
    d, y0 = jnp.ones(shape), jnp.ones(shape)
    attempt("heat_ok", run, d, y0)
    attempt("heat_d", run, d.at[BAD].set(-1.0), y0)
    attempt("heat_cfl", run, d.at[BAD].set(1e4), y0)


def elastic(slab):
    shape = (64, 48)
    model = parallel.shard(pde.ElasticWave(pde.Grid(shape, (640.0, 480.0)), f0=15.0, bc=pde.Dirichlet(0)), slab)
    y0 = {k: jnp.zeros(shape) for k in ("vx", "vz", "sxx", "szz", "sxz")}
    vp, ts, source = jnp.full(shape, 2000.0), np.linspace(0, 8e-4, 3), jnp.array([[31, 23]])

    @jax.jit
    def run(vs, rho):
        params = {"vp": vp, "vs": vs, "rho": rho, "source": source}
        return sciax.simulate(model, y0, ts, params, method=pde.StaggeredLeapfrog(4e-4)).ys["vx"]

    vs, rho = 0.45 * vp, jnp.full(shape, 1.5)
    attempt("elastic_ok", run, vs, rho)
    attempt("elastic_bulk", run, vs.at[50, 3].set(1900.0), rho)
    attempt("elastic_rho", run, vs, rho.at[50, 3].set(-1.0))


def finite_volume(slab):
    grid = pde.Grid((32, 32), 1.0, points="centre")
    model = parallel.shard(pde.fv.Euler(grid, (pde.fv.Reflective(), pde.fv.Periodic())), slab)
    x, _ = grid.meshgrid()
    y0 = jnp.asarray(pde.fv.euler_conserved(1.0 + 0 * x, (0.3 + 0 * x, 0.1 + 0 * x), 1.0 + 0 * x, 1.4))
    ts, method = np.array([0.0, 0.01]), pde.fv.SSPRK3(0.5)
    run = jax.jit(lambda y0: sciax.simulate(model, y0, ts, {"gamma": 1.4}, method=method).ys)
    attempt("fv_ok", run, y0)
    attempt("fv_density", run, y0.at[(0, 28, 3)].set(-1.0))


def spectral(slab):
    shape = (32, 32)
    model = parallel.shard(pde.spectral.heat(pde.Grid(shape, 1.0)), slab)
    ts, method = np.array([0.0, 0.01]), pde.ETDRK4(dt=1e-3)
    run = jax.jit(lambda y0: sciax.simulate(model, y0, ts, {"nu": 1.0}, method=method).ys)
    attempt("spectral_ok", run, jnp.ones(shape))
    attempt("spectral_y0", run, jnp.ones(shape).at[BAD[0] - 4, 3].set(jnp.nan))


if __name__ == "__main__":
    slab = parallel.make_mesh("slab")
    for check in (acoustic, wide_halo, heat, elastic, finite_volume, spectral):
        check(slab)
    print("done", flush=True)
