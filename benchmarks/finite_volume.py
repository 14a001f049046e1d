"""1-D finite volumes: Sod's shock tube with WENO5-Z + HLLC + SSP-RK3 (CFL 0.5), sciax vs a
vectorised NumPy implementation of the same scheme, in the same run.

Run: python benchmarks/finite_volume.py [--quick] [--float64]
Prints `name: value` lines (headers start with '#'). Reports numbers only; asserts nothing.
The NumPy scheme leaves out sciax's positivity fallback, which Sod never triggers.
"""

import argparse
import math
import time

import jax

parser = argparse.ArgumentParser()
parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
parser.add_argument("--float64", action="store_true")
args = parser.parse_args()
jax.config.update("jax_enable_x64", args.float64)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402
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


model = fv.Euler(sciax.pde.Grid(N, 1.0, points="centre"), fv.Outflow(), numerical_flux=fv.HLLC())
y0 = jnp.asarray(sod(N))
ts = jnp.array([0.0, T], DT)
run = jax.jit(lambda y: sciax.simulate(model, y, ts, {"gamma": GAMMA}, method=fv.SSPRK3(CFL)))
run(y0)  # compile
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
