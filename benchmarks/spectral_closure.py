"""A learned closure for an under-resolved spectral model, trained and stepped through ETDRK4.

Kuramoto–Sivashinsky `u_t = -u u_x - u_xx - u_xxxx` on a periodic domain of length 64 (chaotic).
Reference: 256 Fourier points, ETDRK4 at dt = 0.05, from random smooth starts after a spin-up of 100
time units; coarse-grained by `learned.spectral_filter` (the modes a coarse grid holds). The learned
model is `learned.SpectralCorrected(kuramoto_sivashinsky(coarse grid), net)`, a periodic
convolutional net (Kochkov et al., PNAS 2021, put such a correction inside a spectral solver for 2-D
turbulence), trained with the time-derivative loss and then with unrolled runs through ETDRK4
(`unrolled_loss(method=ETDRK4(dt))`). The baselines are what a user would run otherwise: the plain
spectral model on the same coarse grid and on grids 2x and 4x finer (ETDRK4, the step scaled with
the grid spacing).

Prints `name: value` lines: the mean absolute error over held-out trajectories at a few times and
over the whole horizon (`nan` where a run blew up), survival times (error below 0.1, the field being
of order 1), time per coarse step of each model (one trajectory, compiled, best of 3), the training
time.

    python benchmarks/spectral_closure.py [--quick] [--factor 8] [--dsteps N] [--steps N]
"""

from __future__ import annotations

import argparse
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import sciax
from sciax import pde
from sciax.pde import learned, spectral

LENGTH, FINE, FINE_DT, THRESHOLD = 64.0, 256, 0.05, 0.1


class ConvClosure(eqx.Module):
    """Periodic 1-D convolutions with GELU between them; the last layer starts at zero (no correction).

    Written as shifted copies and one contraction per layer: inside ETDRK4's loop on XLA:CPU, the same
    network through `lax.conv` (`equinox.nn.Conv1d`) cost about 9x more (98 against 11 us per
    evaluation with the FFTs around it, 32 points, width 32), each small convolution a kernel of its own."""

    weights: tuple
    biases: tuple

    def __init__(self, width: int, kernel: int, depth: int, key):
        sizes = [1] + [width] * depth + [1]
        weights, biases = [], []
        for n_in, n_out, k in zip(sizes[:-1], sizes[1:], jax.random.split(key, depth + 1)):
            bound = 1.0 / np.sqrt(n_in * kernel)  # the default of torch / equinox convolutions
            weights.append(jax.random.uniform(k, (n_out, n_in, kernel), minval=-bound, maxval=bound))
            biases.append(jnp.zeros(n_out))
        weights[-1] = jnp.zeros_like(weights[-1])
        self.weights, self.biases = tuple(weights), tuple(biases)

    def __call__(self, u):
        h = u[None]
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            reach = w.shape[-1] // 2
            shifted = jnp.stack([jnp.roll(h, reach - j, axis=-1) for j in range(w.shape[-1])], axis=-1)
            h = jnp.einsum("oik,ink->on", w, shifted) + b[:, None]
            h = jax.nn.gelu(h) if i < len(self.weights) - 1 else h
        return h[0]


def random_starts(grid, count: int, key) -> jax.Array:
    """Sums of the five longest waves with random amplitudes (1/m) and phases."""
    (x,) = grid.coords()
    k_amp, k_phase = jax.random.split(key)
    m = jnp.arange(1, 6)
    amp = jax.random.normal(k_amp, (count, 5)) / m
    phase = jax.random.uniform(k_phase, (count, 5)) * 2 * np.pi
    return jnp.sum(amp[..., None] * jnp.cos(2 * np.pi * m[None, :, None] * x / LENGTH + phase[..., None]), axis=1)


def reference(count: int, ts: np.ndarray, seed: int):
    """Fine trajectories `(count, len(ts), FINE)` after a spin-up, and their exact time derivatives."""
    fine = spectral.kuramoto_sivashinsky(pde.Grid(FINE, LENGTH))

    def run(u0, times):
        return sciax.simulate(fine, u0, times, None, method=pde.ETDRK4(dt=FINE_DT)).ys

    starts = jax.jit(jax.vmap(lambda u: run(u, np.array([0.0, 100.0]))[-1]))(
        random_starts(fine.grid, count, jax.random.PRNGKey(seed))
    )
    refs = jax.jit(jax.vmap(lambda u: run(u, ts)))(starts)
    rates = jax.jit(jax.vmap(jax.vmap(lambda u: fine.rhs(0.0, u, None))))(refs)
    return refs, rates


def train_closure(args, coarse, train_refs, train_rates, ts):
    model = learned.SpectralCorrected(coarse, ConvClosure(args.width, args.kernel, args.depth, jax.random.PRNGKey(1)))
    spec = learned.corrected_spec(model)
    n = coarse.grid.shape[0]
    states, targets = np.asarray(train_refs).reshape(-1, n), np.asarray(train_rates).reshape(-1, n)
    model, dlosses = learned.train(
        model,
        lambda m, s, t, g: learned.derivative_loss(m, s, t, None, g),
        optax.adam(optax.cosine_decay_schedule(1e-3, max(args.dsteps, 1), 0.05)),
        args.dsteps,
        data=learned.random_batches((states, np.zeros(len(states)), targets), 256, seed=0),
        filter_spec=spec,
        progress=False,
    )
    w = args.window
    segments = np.stack([np.asarray(r[j : j + w + 1]) for r in train_refs for j in range(0, len(ts) - w, w)])
    model, ulosses = learned.train(
        model,
        lambda m, s: learned.unrolled_loss(m, s, ts[: w + 1], None, method=pde.ETDRK4(dt=args.dt)),
        optax.adam(optax.cosine_decay_schedule(3e-4, max(args.steps, 1), 0.05)),
        args.steps,
        data=learned.random_batches((segments,), 16, seed=1),
        filter_spec=spec,
        progress=False,
    )
    return model, dlosses, ulosses


def run_model(model, u0s, ts, dt):
    """The runs from `u0s` at `ts` (NaN where a run blew up) and the seconds per step of one run."""
    one = jax.jit(lambda u: sciax.simulate(model, u, ts, None, method=pde.ETDRK4(dt=dt), throw=False).ys)
    ys = jax.jit(jax.vmap(one))(u0s)
    one(u0s[0]).block_until_ready()
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        one(u0s[0]).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return ys, best / round((ts[-1] - ts[0]) / dt)


def report(name: str, errors, ts, marks, seconds_per_step, coarse_dt, dt):
    curve = jnp.mean(errors, axis=0)
    for t in marks:
        print(f"mae_{name}_t{t:g}: {float(curve[int(round(t / coarse_dt))]):.4e}")
    print(f"mae_{name}: {float(jnp.mean(errors)):.4e}")
    survival = learned.survival_time(ts, errors, THRESHOLD)
    print(f"survival_{name}: {float(jnp.mean(survival)):.2f}  # mean over trajectories, error < {THRESHOLD}")
    print(f"step_us_{name}: {seconds_per_step * coarse_dt / dt * 1e6:.1f}  # per coarse step of {coarse_dt}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few trajectories and steps (a smoke run)")
    parser.add_argument("--factor", type=int, default=8, help="coarsening factor of the learned model's grid")
    parser.add_argument("--train", type=int, default=64, help="training trajectories")
    parser.add_argument("--test", type=int, default=16, help="held-out trajectories")
    parser.add_argument("--horizon", type=float, default=50.0, help="length of each training trajectory")
    parser.add_argument("--eval", type=float, default=20.0, help="length of each held-out run")
    parser.add_argument("--dt", type=float, default=0.25, help="ETDRK4 step on the learned model's grid")
    parser.add_argument("--dsteps", type=int, default=10000, help="steps on the time-derivative loss")
    parser.add_argument("--steps", type=int, default=1000, help="steps on the unrolled loss")
    parser.add_argument("--window", type=int, default=8, help="ETDRK4 steps per unrolled segment")
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--kernel", type=int, default=5)
    parser.add_argument("--depth", type=int, default=2, help="hidden convolutions")
    args = parser.parse_args(argv)
    if args.quick:
        args.train, args.test, args.dsteps, args.steps, args.eval = 4, 2, 50, 5, 5.0
    if FINE % args.factor:
        raise SystemExit(f"--factor must divide {FINE}, got {args.factor}")
    coarse_n = FINE // args.factor
    ts = np.arange(0.0, args.horizon + 1e-9, args.dt)
    ev = ts[ts <= args.eval + 1e-9]

    start = time.perf_counter()
    refs, rates = reference(args.train + args.test, ts, seed=0)
    print(f"reference_seconds: {time.perf_counter() - start:.1f}")
    coarse_refs = learned.spectral_filter(refs, args.factor)
    coarse_rates = learned.spectral_filter(rates, args.factor)
    truth = coarse_refs[args.train :, : len(ev)]

    coarse = spectral.kuramoto_sivashinsky(pde.Grid(coarse_n, LENGTH))
    start = time.perf_counter()
    model, dlosses, ulosses = train_closure(args, coarse, coarse_refs[: args.train], coarse_rates[: args.train], ts)
    print(f"train_seconds: {time.perf_counter() - start:.1f}")
    print(f"derivative_loss_first_last: {dlosses[:20].mean():.3e} {dlosses[-20:].mean():.3e}")
    if len(ulosses):
        print(f"unrolled_loss_first_last: {ulosses[:20].mean():.3e} {ulosses[-20:].mean():.3e}")

    marks = [t for t in (1.0, 5.0, 10.0, 20.0) if t <= args.eval]
    ys, per_step = run_model(model, truth[:, 0], ev, args.dt)
    report(f"learned_x{args.factor}", learned.error_vs_time(ys, truth), ev, marks, per_step, args.dt, args.dt)
    for f in (args.factor, args.factor // 2, args.factor // 4):
        if f < 1:
            continue
        plain = spectral.kuramoto_sivashinsky(pde.Grid(FINE // f, LENGTH))
        dt = args.dt * f / args.factor  # the same Courant number
        ys, per_step = run_model(plain, learned.spectral_filter(refs[args.train :, 0], f), ev, dt)
        ys = learned.spectral_filter(ys, args.factor // f) if f != args.factor else ys
        report(f"spectral_x{f}", learned.error_vs_time(ys, truth), ev, marks, per_step, args.dt, dt)


if __name__ == "__main__":
    main()
