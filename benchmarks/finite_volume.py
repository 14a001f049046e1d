"""Finite volumes, sciax vs a vectorised NumPy implementation of the same scheme, in the same run:
WENO5-Z (component-wise) + HLLC + SSP-RK3 with the CFL step (CFL 0.5).

- 1-D: Sod's shock tube, 4,000 cells, to t = 0.2.
- 2-D: Lax & Liu's four-quadrant Riemann problem, configuration 3 (P. D. Lax and X.-D. Liu, SIAM
  J. Sci. Comput. 19 (1998) 319-340), 512^2 cells on the unit square with outflow sides, ~200
  steps. NumPy is timed on its first `--numpy-steps` steps (its rate does not depend on the step)
  and both final states of that short run are compared; sciax is also timed on the whole run.
  The effective bandwidth fraction is the traffic of a minimal implementation of one step (each
  SSP-RK3 stage reads its two input states and writes one, the CFL step reads the state: 9 passes
  over the state) per measured step time, over the bandwidth of a large copy in this run (NumPy's on a
  CPU, a compiled device loop on a GPU).
  On a CPU with several cores the 2-D run is also timed sharded over one XLA host device per core
  (`sciax.parallel.shard` over a slab mesh; XLA:CPU runs a single device's step on one thread, see
  docs/benchmarks.md), and its final state is compared with the single-device one.
  The arithmetic lines: XLA's operation count per cell update (its cost analysis of the same
  right-hand side, divisions counted apart), the GFLOP/s sciax reaches with it and the GFLOP/s a
  20x speed-up over this run's NumPy would need, against a float64 BLAS matrix product in the run.

Run: python benchmarks/finite_volume.py [--quick] [--float64] [--only 1d|2d] [--breakdown] [--host-devices K]
Prints `name: value` lines (headers start with '#'). Reports numbers only; asserts nothing.
The NumPy scheme leaves out sciax's positivity fallback, which these problems never trigger.
"""

import argparse
import math
import os
import time

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
parser.add_argument("--float64", action="store_true")
parser.add_argument("--only", choices=("1d", "2d"), help="run one of the two comparisons")
parser.add_argument("--numpy-steps", type=int, default=10, help="2-D: steps NumPy is timed on")
parser.add_argument("--breakdown", action="store_true", help="2-D: time variants of one right-hand side instead")
parser.add_argument(
    "--host-devices",
    type=int,
    default=len(os.sched_getaffinity(0)),
    help="2-D: XLA CPU devices for the sharded run (default: the cores this process may use; 1: no sharded run)",
)
args = parser.parse_args()

import jax  # noqa: E402

if args.host_devices > 1:  # before JAX starts its CPU backend; GPU runs are unaffected
    jax.config.update("jax_num_cpu_devices", args.host_devices)
jax.config.update("jax_enable_x64", args.float64)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from _device import device_copy_bandwidth  # noqa: E402

import sciax  # noqa: E402
from sciax import parallel  # noqa: E402
from sciax.pde import fv  # noqa: E402

N = 400 if args.quick else 4000
T, GAMMA, CFL = 0.2, 1.4, 0.5
DT = np.float64 if args.float64 else np.float32


def sod(n):
    x = (np.arange(n) + 0.5) / n
    left = x < 0.5
    rho, p = np.where(left, 1.0, 0.125), np.where(left, 1.0, 0.1)
    return np.stack([rho, 0 * rho, p / (GAMMA - 1)]).astype(DT)


# ---- NumPy: the same scheme, vectorised over cells ----------------------------------------------
def np_weno_z(a, b, c, d, e, eps=1e-12):
    q = ((2 * a - 7 * b + 11 * c) / 6, (-b + 5 * c + 2 * d) / 6, (2 * c + 5 * d - e) / 6)
    beta = (
        13 / 12 * (a - 2 * b + c) ** 2 + 0.25 * (a - 4 * b + 3 * c) ** 2,
        13 / 12 * (b - 2 * c + d) ** 2 + 0.25 * (b - d) ** 2,
        13 / 12 * (c - 2 * d + e) ** 2 + 0.25 * (3 * c - 4 * d + e) ** 2,
    )
    tau = np.abs(beta[0] - beta[2])
    alpha = [w * (1 + tau / (bk + eps)) for w, bk in zip((0.1, 0.6, 0.3), beta)]
    return (alpha[0] * q[0] + alpha[1] * q[1] + alpha[2] * q[2]) / (alpha[0] + alpha[1] + alpha[2])


def np_primitive(u):
    rho, vel = u[0], u[1] / u[0]
    return rho, vel, (GAMMA - 1) * (u[2] - 0.5 * u[1] * vel)


def np_flux(u, rho, vel, p):
    return np.stack([u[1], u[1] * vel + p, (u[2] + p) * vel])


def np_hllc(left, right):
    rl, ul, pl = np_primitive(left)
    rr, ur, pr = np_primitive(right)
    cl, cr = np.sqrt(GAMMA * pl / rl), np.sqrt(GAMMA * pr / rr)
    sl, sr = np.minimum(ul - cl, ur - cr), np.maximum(ul + cl, ur + cr)
    ml, mr = rl * (sl - ul), rr * (sr - ur)
    ss = (pr - pl + ul * ml - ur * mr) / (ml - mr)
    fl, fr = np_flux(left, rl, ul, pl), np_flux(right, rr, ur, pr)

    def star(u, r, v, p, s):
        e = u[2] / r + (ss - v) * (ss + p / (r * (s - v)))
        return r * (s - v) / (s - ss) * np.stack([np.ones_like(r), ss, e])

    fsl, fsr = fl + sl * (star(left, rl, ul, pl, sl) - left), fr + sr * (star(right, rr, ur, pr, sr) - right)
    return np.where(sl >= 0, fl, np.where(ss >= 0, fsl, np.where(sr > 0, fsr, fr)))


def np_rhs(u, dx):
    n = u.shape[1]
    w = np.concatenate([u[:, 2::-1], u, u[:, : n - 4 : -1]], axis=1)  # 3 mirrored ghost cells a side
    m = w.shape[1]
    s = [w[:, k : m - 4 + k] for k in range(5)]
    right_edge, left_edge = np_weno_z(*s), np_weno_z(*s[::-1])
    faces = np_hllc(right_edge[:, :-1], left_edge[:, 1:])
    return -(faces[:, 1:] - faces[:, :-1]) / dx


def np_solve(u, t_end):
    n = u.shape[1]
    dx, t, steps = 1.0 / n, 0.0, 0
    while t < t_end:
        rho, vel, p = np_primitive(u)
        dt = CFL * dx / np.max(np.abs(vel) + np.sqrt(GAMMA * p / rho))
        dt = min(dt, t_end - t)
        u1 = u + dt * np_rhs(u, dx)
        u2 = 0.75 * u + 0.25 * (u1 + dt * np_rhs(u1, dx))
        u = u / 3 + 2 / 3 * (u2 + dt * np_rhs(u2, dx))
        t, steps = t + dt, steps + 1
    return u, steps


def best_of(fn, repeats=3):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - start)
    return best, out


# ---- NumPy: 2-D Euler, the same scheme dimension by dimension -----------------------------------
def np_primitive_2d(u):
    rho = u[0]
    v0, v1 = u[1] / rho, u[2] / rho
    return rho, v0, v1, (GAMMA - 1) * (u[3] - 0.5 * (u[1] * v0 + u[2] * v1))


def np_hllc_2d(left, right, normal):
    """HLLC through faces normal to spatial axis `normal` (0 or 1); fields (rho, m0, m1, E)."""
    n_idx, t_idx = 1 + normal, 2 - normal

    def side(u):
        rho, v0, v1, p = np_primitive_2d(u)
        vn, vt = (v0, v1) if normal == 0 else (v1, v0)
        flux = np.empty_like(u)
        flux[0] = u[n_idx]
        flux[n_idx] = u[n_idx] * vn + p
        flux[t_idx] = u[t_idx] * vn
        flux[3] = (u[3] + p) * vn
        return rho, vn, vt, p, np.sqrt(GAMMA * p / rho), flux

    rl, ul, tl, pl, cl, fl = side(left)
    rr, ur, tr, pr, cr, fr = side(right)
    sl, sr = np.minimum(ul - cl, ur - cr), np.maximum(ul + cl, ur + cr)
    ml, mr = rl * (sl - ul), rr * (sr - ur)
    ss = (pr - pl + ul * ml - ur * mr) / (ml - mr)

    def star_flux(u, f, rho, vn, vt, p, s):
        factor = rho * (s - vn) / (s - ss)
        star = np.empty_like(u)
        star[0] = factor
        star[n_idx] = factor * ss
        star[t_idx] = factor * vt
        star[3] = factor * (u[3] / rho + (ss - vn) * (ss + p / (rho * (s - vn))))
        return f + s * (star - u)

    fsl, fsr = star_flux(left, fl, rl, ul, tl, pl, sl), star_flux(right, fr, rr, ur, tr, pr, sr)
    return np.where(sl >= 0, fl, np.where(ss >= 0, fsl, np.where(sr > 0, fsr, fr)))


def np_pad(u, axis, width, periodic):
    """`width` ghost cells on both sides of spatial `axis`: wrapped, or mirrored (outflow)."""
    a = axis + 1
    n = u.shape[a]
    if periodic:
        lo, hi = np.take(u, np.arange(n - width, n), a), np.take(u, np.arange(width), a)
    else:
        lo, hi = np.take(u, np.arange(width - 1, -1, -1), a), np.take(u, np.arange(n - 1, n - width - 1, -1), a)
    return np.concatenate([lo, u, hi], axis=a)


def np_divergence_2d(u, axis, dx, periodic):
    """-(F_{i+1/2} - F_{i-1/2}) / dx along spatial `axis`: WENO5-Z edges, HLLC faces."""
    a = axis + 1
    w = np_pad(u, axis, 3, periodic)
    m = w.shape[a]

    def cut(v, start, stop):
        index = [slice(None)] * 3
        index[a] = slice(start, stop)
        return v[tuple(index)]

    s = [cut(w, k, m - 4 + k) for k in range(5)]
    right_edge, left_edge = np_weno_z(*s), np_weno_z(*s[::-1])
    faces = np_hllc_2d(cut(right_edge, 0, -1), cut(left_edge, 1, None), axis)
    return -(cut(faces, 1, None) - cut(faces, 0, -1)) / dx


def np_rhs_2d(u, dx, periodic):
    return np_divergence_2d(u, 0, dx, periodic) + np_divergence_2d(u, 1, dx, periodic)


def np_max_rate_2d(u, dx):
    """The 2-D CFL rate `sum_k max(|v_k| + c) / dx_k` (sciax's `cfl_step`)."""
    rho, v0, v1, p = np_primitive_2d(u)
    c = np.sqrt(GAMMA * p / rho)
    return (np.max(np.abs(v0) + c) + np.max(np.abs(v1) + c)) / dx


def np_solve_2d(u, t_end, dx, periodic, rate=np_max_rate_2d):
    t, steps = 0.0, 0
    while t < t_end:
        dt = min(CFL / rate(u, dx), t_end - t)
        u1 = u + dt * np_rhs_2d(u, dx, periodic)
        u2 = 0.75 * u + 0.25 * (u1 + dt * np_rhs_2d(u1, dx, periodic))
        u = u / 3 + 2 / 3 * (u2 + dt * np_rhs_2d(u2, dx, periodic))
        t, steps = t + dt, steps + 1
    return u, steps


def run_1d():
    model = fv.Euler(sciax.pde.Grid(N, 1.0, points="centre"), fv.Outflow(), numerical_flux=fv.HLLC())
    y0 = jnp.asarray(sod(N))
    ts = jnp.array([0.0, T], DT)
    run = jax.jit(lambda y: sciax.simulate(model, y, ts, {"gamma": GAMMA}, method=fv.SSPRK3(CFL)))
    jax.block_until_ready(run(y0))  # compile, and wait: the first timed run must not include this one
    t_sciax, sol = best_of(lambda: run(y0))
    steps = int(sol.stats["num_steps"])
    t_numpy, (u_np, steps_np) = best_of(lambda: np_solve(sod(N), T), repeats=1 if not args.quick else 3)

    print(f"# Sod, {N} cells, WENO5-Z + HLLC + SSP-RK3, cfl {CFL}, t = {T}, {'float64' if args.float64 else 'float32'}")
    print(f"steps_sciax: {steps}")
    print(f"steps_numpy: {steps_np}")
    print(f"cell_updates_per_s_sciax: {N * steps / t_sciax:.4g}")
    print(f"cell_updates_per_s_numpy: {N * steps_np / t_numpy:.4g}")
    print(f"speedup_sciax_over_numpy: {(N * steps / t_sciax) / (N * steps_np / t_numpy):.3g}")
    print(f"max_abs_difference_density: {float(np.max(np.abs(np.asarray(sol.ys[-1][0]) - u_np[0]))):.3g}")


# Lax & Liu's configuration 3: (density, velocity axis 0, velocity axis 1, pressure) per quadrant,
# the quadrants meeting at the centre of the unit square.
QUADRANTS = {
    (True, True): (1.5, 0.0, 0.0, 1.5),
    (False, True): (0.5323, 1.206, 0.0, 0.3),
    (False, False): (0.138, 1.206, 1.206, 0.029),
    (True, False): (0.5323, 0.0, 1.206, 0.3),
}


def lax_liu_3(n):
    x = (np.arange(n) + 0.5) / n
    east, north = np.meshgrid(x > 0.5, x > 0.5, indexing="ij")
    rho, v0, v1, p = (np.zeros((n, n)) for _ in range(4))
    for (e, nn), values in QUADRANTS.items():
        where = (east == e) & (north == nn)
        for field, value in zip((rho, v0, v1, p), values):
            field[where] = value
    return np.stack([rho, rho * v0, rho * v1, p / (GAMMA - 1) + 0.5 * rho * (v0**2 + v1**2)]).astype(DT)


def memory_bandwidth():
    """Bytes per second of a 256 MiB copy (one read and one write of each byte): NumPy's on a CPU, on a GPU
    a compiled loop of in-place updates of a device array (the device's streaming rate)."""
    if jax.default_backend() != "cpu":
        return device_copy_bandwidth(jnp.float64 if args.float64 else jnp.float32)
    src = np.ones(2**25)
    dst = np.empty_like(src)
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best


def run_2d():
    n = 64 if args.quick else 512
    dx = 1.0 / n
    u0 = lax_liu_3(n)
    # ~200 steps at the initial CFL step, and the short run NumPy is timed on.
    dt0 = CFL / np_max_rate_2d(u0, dx)
    t_end, t_short = 200 * dt0, (args.numpy_steps - 0.5) * dt0
    grid = sciax.pde.Grid((n, n), (1.0, 1.0), points="centre")
    model = fv.Euler(grid, fv.Outflow(), reconstruction=fv.WENO5Z(), numerical_flux=fv.HLLC())
    params = {"gamma": GAMMA}
    y0 = jnp.asarray(u0)
    if args.breakdown:
        print(f"# one right-hand side of the 2-D Riemann problem, {n}^2 cells, {jax.devices()[0].platform}")
        return breakdown(model, params, y0)

    run = jax.jit(lambda y, ts: sciax.simulate(model, y, ts, params, method=fv.SSPRK3(CFL)))
    ts_long, ts_short = jnp.array([0.0, t_end], DT), jnp.array([0.0, t_short], DT)
    jax.block_until_ready(run(y0, ts_short))  # compile (t_end is traced: one executable for both runs)
    t_sciax, sol = best_of(lambda: run(y0, ts_long), repeats=1 if not args.quick else 3)
    steps = int(sol.stats["num_steps"])
    t_sciax_short, short = best_of(lambda: run(y0, ts_short), repeats=3)
    steps_short = int(short.stats["num_steps"])
    t_numpy, (u_np, steps_np) = best_of(lambda: np_solve_2d(u0, t_short, dx, False), repeats=1)

    rate_sciax = n * n * steps / t_sciax
    rate_numpy = n * n * steps_np / t_numpy
    minimal_bytes = 9 * u0.size * u0.itemsize
    bandwidth = memory_bandwidth()
    effective = minimal_bytes * steps / t_sciax
    difference = np.max(np.abs(np.asarray(short.ys[-1]) - u_np))
    print(
        f"# 2-D Riemann problem (Lax-Liu 3), {n}^2 cells, WENO5-Z + HLLC + SSP-RK3, cfl {CFL}, "
        f"{'float64' if args.float64 else 'float32'}, {jax.devices()[0].platform}"
    )
    print(f"steps_sciax_2d: {steps}")
    print(f"steps_numpy_2d: {steps_np} (sciax on the same short run: {steps_short})")
    print(f"cell_updates_per_s_sciax_2d: {rate_sciax:.4g}")
    print(f"cell_updates_per_s_sciax_2d_short_run: {n * n * steps_short / t_sciax_short:.4g}")
    print(f"cell_updates_per_s_numpy_2d: {rate_numpy:.4g}")
    print(f"speedup_sciax_over_numpy_2d: {rate_sciax / rate_numpy:.3g}")
    print(f"max_abs_difference_state_2d_short_run: {difference:.3g}")
    print(f"seconds_per_step_sciax_2d: {t_sciax / steps:.4g}")
    print(f"minimal_bytes_per_step_2d: {minimal_bytes:.4g}")
    print(f"memory_bandwidth_{jax.default_backend()}_copy_bytes_per_s: {bandwidth:.4g}")
    print(f"effective_bandwidth_fraction_sciax_2d: {effective / bandwidth:.3g}")
    arithmetic_demand(model, params, rate_sciax, rate_numpy)
    if jax.default_backend() == "cpu" and jax.device_count() > 1:
        sharded_2d(model, params, y0, ts_long, sol, rate_numpy)


def sharded_2d(model, params, y0, ts, single, rate_numpy):
    """The same run sharded along x over every XLA CPU device (`--host-devices`), against the single-device run
    `single` and this run's NumPy rate."""
    sharded = parallel.shard(model, parallel.make_mesh("slab"))
    run = jax.jit(lambda y: sciax.simulate(sharded, y, ts, params, method=fv.SSPRK3(CFL)))  # ts closed over
    jax.block_until_ready(run(y0))  # compile, and wait: the first timed run must not include this one
    t_sharded, sol = best_of(lambda: run(y0), repeats=1 if not args.quick else 3)
    steps = int(sol.stats["num_steps"])
    rate = y0[0].size * steps / t_sharded
    difference = float(jnp.max(jnp.abs(sol.ys[-1] - single.ys[-1])))
    print(f"# the same run sharded along x over {jax.device_count()} XLA CPU devices (sciax.parallel.shard, slab mesh)")
    print(f"steps_sciax_2d_sharded: {steps}")
    print(f"cell_updates_per_s_sciax_2d_sharded: {rate:.4g}")
    print(f"speedup_sciax_sharded_over_numpy_2d: {rate / rate_numpy:.3g}")
    print(f"max_abs_difference_sharded_vs_single_device_2d: {difference:.3g}")


def _dgemm_flops():
    """Floating-point operations per second of a 2048^2 float64 NumPy matrix product (BLAS, all cores):
    this machine's practical multiply-add peak."""
    m = np.random.default_rng(0).uniform(size=(2048, 2048))
    seconds, _ = best_of(lambda: m @ m, repeats=5)
    return 2 * 2048**3 / seconds


def _divisions(hlo: str) -> int:
    """Elements divided by the optimised HLO text's `divide` instructions (outside loops)."""
    total = 0
    for line in hlo.splitlines():
        if " divide(" in line and "=" in line:
            dims = line.split("=", 1)[1].split("[", 1)[1].split("]", 1)[0]
            total += math.prod(int(d) for d in dims.split(",") if d.strip())
    return total


def arithmetic_demand(model, params, rate_sciax, rate_numpy):
    """What a speed-up over NumPy asks of the arithmetic: XLA's operation count of one right-hand side
    on an untiled 64^2 grid of the same model (its cost analysis; divisions counted in the optimised
    HLO, which a multiply-add unit does not do), three per SSP-RK3 step, times the cell updates per
    second, against the rate of a BLAS matrix product here."""
    n = 64
    small = fv.Euler(
        sciax.pde.Grid((n, n), (1.0, 1.0), points="centre"), fv.Outflow(),
        reconstruction=model.reconstruction, numerical_flux=model.numerical_flux, tile=n,
    )  # fmt: skip
    compiled = jax.jit(lambda u: small.rhs(0.0, u, params)).lower(jnp.asarray(lax_liu_3(n))).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    flops = 3 * float(cost["flops"]) / n**2
    print("# arithmetic: XLA's operation count per cell update, and the rate a speed-up over NumPy needs")
    print(f"flops_per_cell_update_2d: {flops:.0f}")
    print(f"divisions_per_cell_update_2d: {3 * _divisions(compiled.as_text()) / n**2:.0f}")
    print(f"achieved_gflops_sciax_2d: {rate_sciax * flops / 1e9:.3g}")
    print(f"gflops_needed_for_20x_numpy_2d: {20 * rate_numpy * flops / 1e9:.3g}")
    print(f"dgemm_gflops_numpy: {_dgemm_flops() / 1e9:.3g}")


def breakdown(model, params, y0):
    """Where one 2-D right-hand side spends its time: sciax's `rhs` against the same arithmetic
    (bit for bit) with the positivity fallback behind a `lax.cond` that takes it only when a cell
    fails, and/or the stencils sliced along each axis in place instead of moving the axis last,
    and/or the grid swept in strips of rows (`lax.map`) whose working set stays in cache."""
    from jax import lax

    g = model.reconstruction.ghost_cells
    face = model.reconstruction._face  # the WENO5 formula on five shifted slices
    dx = model.grid.spacing[0]

    def divergence_padded(padded, a, k, axis, cond):
        """-(F_{i+1/2} - F_{i-1/2}) / dx of the `k` cells of `padded` along its array axis `a`."""
        m = padded.shape[a]
        s = [lax.slice_in_dim(padded, j, m - 4 + j, axis=a) for j in range(5)]
        right_edge, left_edge = face(*s), face(*s[::-1])
        cells = lax.slice_in_dim(padded, g - 1, k + g + 1, axis=a)
        ok = model.positivity_ok(cells, right_edge, left_edge, params)

        def fallback(r, e):
            return jnp.where(ok, r, cells), jnp.where(ok, e, cells)

        if cond:
            right_edge, left_edge = lax.cond(jnp.all(ok), lambda r, e: (r, e), fallback, right_edge, left_edge)
        else:
            right_edge, left_edge = fallback(right_edge, left_edge)
        left = lax.slice_in_dim(right_edge, 0, k + 1, axis=a)
        right = lax.slice_in_dim(left_edge, 1, k + 2, axis=a)
        flux = model.numerical_flux(model, model.rotate(left, axis), model.rotate(right, axis), params)
        faces = model.rotate(flux, axis)
        return -(lax.slice_in_dim(faces, 1, k + 1, axis=a) - lax.slice_in_dim(faces, 0, k, axis=a)) / dx

    def variant(cond, in_place):
        def rhs(u):
            total = 0
            for axis in (0, 1):
                padded = model.pad(u, g, 0.0, axis)
                if in_place:
                    total = total + divergence_padded(padded, axis + 1, u.shape[axis + 1], axis, cond)
                else:
                    change = divergence_padded(jnp.moveaxis(padded, axis + 1, -1), -1, u.shape[axis + 1], axis, cond)
                    total = total + jnp.moveaxis(change, -1, axis + 1)
            return total

        return rhs

    def strips(rows):
        def rhs(u):
            padded = model.pad(u, g, 0.0, 0)

            def strip(i):
                block = lax.dynamic_slice_in_dim(padded, i * rows, rows + 2 * g, axis=1)
                inner = lax.slice_in_dim(block, g, g + rows, axis=1)
                along_1 = model.pad(inner, g, 0.0, 1)
                n1 = u.shape[2]
                return divergence_padded(block, 1, rows, 0, True) + divergence_padded(along_1, 2, n1, 1, True)

            out = lax.map(strip, jnp.arange(u.shape[1] // rows))
            return jnp.moveaxis(out, 0, 1).reshape(u.shape)

        return rhs

    sciax_rhs = jax.jit(lambda u: model.rhs(0.0, u, params))
    expected = sciax_rhs(y0)
    t_rhs, _ = best_of(lambda: sciax_rhs(y0), repeats=10)
    print(f"rhs_ms_sciax: {1e3 * t_rhs:.4g}")
    variants = [
        ("same_structure", variant(False, False)),
        ("cond_fallback", variant(True, False)),
        ("in_place_slices", variant(False, True)),
        ("cond_fallback_in_place_slices", variant(True, True)),
    ]
    rows = min(64, y0.shape[1])
    if y0.shape[1] % rows == 0:
        variants.append((f"cond_fallback_in_place_slices_strips_of_{rows}_rows", strips(rows)))
    for name, rhs in variants:
        fn = jax.jit(rhs)
        got = fn(y0)
        t_fn, _ = best_of(lambda fn=fn: fn(y0), repeats=10)
        difference = float(jnp.max(jnp.abs(got - expected)))
        print(f"rhs_ms_{name}: {1e3 * t_fn:.4g} (max difference from sciax's rhs {difference:.2g})")
    numpy_u = np.asarray(y0)
    t_np, _ = best_of(lambda: np_rhs_2d(numpy_u, dx, False), repeats=3)
    print(f"rhs_ms_numpy: {1e3 * t_np:.4g}")


if args.only in (None, "1d"):
    run_1d()
if args.only in (None, "2d"):
    run_2d()
