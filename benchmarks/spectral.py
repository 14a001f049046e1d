"""Spectral PDE benchmark: sciax ETDRK4 vs exponax 0.2 on the same problems, same scheme.

Run: python benchmarks/spectral.py [--quick] [--float32]
Prints `name: value` lines (header lines start with '#'); asserts nothing.

Problems (identical for both libraries: ETDRK4, 16 contour points, the same 2/3
dealiasing modes, float64 unless --float32):
- Kuramoto–Sivashinsky 1-D, N = 256, L = 32 pi, dt = 0.01, 2,000 steps (t = 20, short
  enough that round-off is not amplified by the chaos), one run and a 64-member ensemble.
- 2-D Navier–Stokes (vorticity), 256^2, Kolmogorov forcing (mode 4) with drag,
  nu = 1e-3, dt = 5e-3, 1,000 steps.

Baselines: `exponax.repeat(stepper, n)` (what an exponax user writes: physical state,
an FFT pair per step) and a Fourier-space loop over `stepper.step_fourier` (the
fastest exponax can go). Times are the best of `--repeats` rounds after a compile run,
the contenders alternating within each round.
"""

import argparse
import sys

import jax

FLOAT32 = "--float32" in sys.argv
jax.config.update("jax_enable_x64", not FLOAT32)

import time  # noqa: E402

import exponax as ex  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import sciax  # noqa: E402
from sciax import pde  # noqa: E402
from sciax.pde import spectral  # noqa: E402


def exponax_fraction(n: int) -> float:
    """exponax keeps |m| <= f (n // 2) - 1; this f keeps exactly sciax's 2/3-rule modes."""
    kept = int(np.max(np.nonzero(spectral.dealias_mask(pde.Grid(n, 1.0)))[0]))
    return (kept + 1) / (n // 2)


def interleaved_best(fns, repeats: int) -> tuple[list[float], list[np.ndarray]]:
    """Best time of each `(fn, *args)` over `repeats` rounds that run them alternately.

    Alternating spreads load drift on a shared machine over every contender alike;
    timing one after the other let a busy spell land on one side only.
    """
    outs = [np.asarray(jax.block_until_ready(fn(*args))) for fn, *args in fns]  # compile
    best = [np.inf] * len(fns)
    for _ in range(repeats):
        for i, (fn, *args) in enumerate(fns):
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            best[i] = min(best[i], time.perf_counter() - start)
    return best, outs


def fourier_loop(stepper, n: int):
    def run(u):
        u_hat = jnp.fft.rfftn(u, axes=tuple(range(1, u.ndim)))
        u_hat = jax.lax.fori_loop(0, n, lambda i, v: stepper.step_fourier(v), u_hat)
        return jnp.fft.irfftn(u_hat, s=u.shape[1:], axes=tuple(range(1, u.ndim)))

    return run


def report(name: str, ours, theirs, sign: float = 1.0, *, repeats: int):
    """Time sciax against each exponax baseline (interleaved) and print the ratios and differences."""
    times, outs = interleaved_best([ours, *theirs.values()], repeats)
    t_ours, y_ours = times[0], outs[0]
    print(f"{name}_sciax_s: {t_ours:.4f}")
    for label, t, y in zip(theirs, times[1:], outs[1:]):
        y = sign * y.reshape(y_ours.shape)
        print(f"{name}_exponax_{label}_s: {t:.4f}")
        print(f"{name}_ratio_sciax_over_exponax_{label}: {t_ours / t:.3f}")
        print(f"{name}_max_abs_diff_{label}: {np.abs(y_ours - y).max():.3e}")
    print(f"{name}_max_abs_state: {np.abs(y_ours).max():.3e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10x fewer steps")
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(
        f"# jax {jax.__version__}, exponax {ex.__version__}, backend {jax.default_backend()}, "
        f"{'float32' if FLOAT32 else 'float64'}"
    )

    # --- Kuramoto–Sivashinsky 1-D
    n, length, dt, steps = 256, 32 * np.pi, 0.01, 2000 // scale
    grid = pde.Grid(n, length)
    (x,) = grid.coords()
    u0 = jnp.asarray(np.cos(x / 16) * (1 + np.sin(x / 16)))
    model, ts = spectral.kuramoto_sivashinsky(grid), jnp.array([0.0, steps * dt])
    method = pde.ETDRK4(dt=dt, contour_points=16)
    sciax_ks = jax.jit(lambda u: sciax.simulate(model, u, ts, None, method=method).ys[-1])
    stepper = ex.stepper.KuramotoSivashinskyConservative(
        1, length, n, dt, order=4, dealiasing_fraction=exponax_fraction(n)
    )
    repeat_ks = jax.jit(ex.repeat(stepper, steps))
    loop_ks = jax.jit(fourier_loop(stepper, steps))
    report(
        "ks1d_single",
        (sciax_ks, u0),
        {"repeat": (repeat_ks, u0[None]), "fourier": (loop_ks, u0[None])},
        repeats=args.repeats,
    )

    members = 64
    noise = 0.01 * np.random.default_rng(0).standard_normal((members, n))
    u0s = jnp.asarray(np.asarray(u0) + noise - noise.mean(axis=1, keepdims=True))
    report(
        "ks1d_ensemble64",
        (jax.jit(jax.vmap(sciax_ks)), u0s),
        {
            "repeat": (jax.jit(jax.vmap(ex.repeat(stepper, steps))), u0s[:, None]),
            "fourier": (jax.jit(jax.vmap(fourier_loop(stepper, steps))), u0s[:, None]),
        },
        repeats=args.repeats,
    )

    # --- 2-D Navier–Stokes, Kolmogorov flow with drag
    n, dt, steps = 256, 5e-3, 1000 // scale
    nu, mu, amp, mode = 1e-3, 0.1, 1.0, 4
    grid = pde.Grid((n, n), 2 * np.pi)
    xx, yy = grid.meshgrid()
    rng = np.random.default_rng(1)
    w0 = sum(
        rng.standard_normal() * np.cos(a * xx + b * yy + rng.uniform(0, 2 * np.pi))
        for a in range(-4, 5)
        for b in range(0, 5)
    )
    w0 = jnp.asarray(w0 / np.abs(w0).max() * 5.0)
    model, ts = spectral.navier_stokes_2d(grid, forcing_mode=mode), jnp.array([0.0, steps * dt])
    params = {"nu": nu, "drag": mu, "forcing": amp}
    sciax_ns = jax.jit(
        lambda w: sciax.simulate(model, w, ts, params, method=method.__class__(dt=dt, contour_points=16)).ys[-1]
    )
    # exponax's vorticity is -omega in sciax's convention (see tests/pde/test_spectral_exponax.py)
    stepper = ex.stepper.KolmogorovFlowVorticity(
        2,
        2 * np.pi,
        n,
        dt,
        diffusivity=nu,
        drag=-mu,
        injection_mode=mode,
        injection_scale=amp,
        order=4,
        dealiasing_fraction=exponax_fraction(n),
    )
    report(
        "ns2d_256",
        (sciax_ns, w0),
        {
            "repeat": (jax.jit(ex.repeat(stepper, steps)), -w0[None]),
            "fourier": (jax.jit(fourier_loop(stepper, steps)), -w0[None]),
        },
        sign=-1.0,
        repeats=args.repeats,
    )


if __name__ == "__main__":
    main()
