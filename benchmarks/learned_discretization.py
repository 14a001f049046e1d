"""Learned finite-volume reconstructions against standard schemes on forced viscous Burgers,
the 1-D benchmark of Bar-Sinai, Hoyer, Hickey & Brenner, PNAS 116 (2019) 15344.

Run: python benchmarks/learned_discretization.py [--train 1024] [--test 64] [--dsteps N..] [--steps N..] [--quick]
Prints `name: value` lines (headers start with '#'); reports numbers, asserts nothing.

`u_t + (u^2/2)_x = 0.01 u_xx + f(x, t)` on [0, 2 pi), periodic, forcings from the paper's recipe
(`sciax.pde.learned.random_forcing`), from `u = 0`. Reference: WENO5-Z + Rusanov on 512 cells,
RK4 (`--dt-out` output interval, steps of at most 0.8 dx / 2). The first `--warmup` time units
are dropped; training uses `--train` forcings over `--span` time units, evaluation `--test`
held-out forcings over `--eval-span` time units from the coarse-grained reference at the end of
the warm-up. At each coarsening factor (`--factors` 4, 8, 16, 32: 128 .. 16 cells, plus
`--standard-factors` 2, 256 cells, for the standard schemes alone) every scheme runs with RK4 at
the same output times, the coarse step `dt-out / ceil(dt-out / (0.8 dx / 2))`.

Schemes: `learned` (default `--scheme face`: `face_net((1 - s, s), degree, inputs=(1 - reach, reach),
values=2)`, both states of each face from stencils of 2 s cells centred on the face, exact up to
`--degree` (default s = `--stencil-reach` 3, the paper's six cells, and degree 1), an MLP
(2 reach) -> width -> width -> 2 (2 s - degree - 1), default reach 5 and width 64, with the Rusanov flux;
`--scheme cell` is the earlier `stencil_net((-2, 2), 1, inputs=(-reach, reach))`, mirrored
cell edges), trained with adam, first for `--dsteps` steps (per factor, `DERIVATIVE_STEPS` by
default) on the time-derivative loss of Bar-Sinai et al. (`derivative_loss`: the coarse `rhs` of
`--dbatch` random training snapshots against the coarse-grained time derivative of the fine
solution), then for `--steps` steps (`UNROLLED_STEPS`: none at x4, 2,000 at x8, 3,000 at x16, 4,000
at x32; the unrolled loss costs about factor^-2 per step) on unrolled losses of `--unroll` output
intervals through `sciax.simulate`, `--batch` random segments per step; both losses the mean
absolute error (`--loss absolute`, the evaluation's measure) or squared error; `--viscous learned`
adds a learned viscous face derivative, `face_net(..., derivative=1)`, on the same stencil and
window. Where the unrolled loss trains it, the network also reads the lagged field `u - lag` of
`ForcedBurgers(memory=--memory)` (default one time constant, 0.2; `--memory` alone: none), trained
from the lags along the reference (`lagged`) and run from no history (`lag = u` at the start), and
the forcing (`ForcedBurgers(read_forcing=--read-forcing)`, default its cell averages and its values
at the cells' left faces; `--read-forcing` alone: nothing)),
`weno5` (WENO5-Z), `upwind` (first order,
piecewise-constant + HLL), `centred2/4/6` and `upwind3/5` (linear reconstructions, all with
Rusanov fluxes). `mae_<scheme>_x<factor>`: the mean absolute error over cells, output times and
held-out forcings (`inf` if the run blew up); `step_us_<scheme>_x<factor>`: microseconds per RK4
step of one trajectory (median of 5 runs of `--eval-span`). The headline check compares the
learned scheme at factor 4f with the best standard scheme at factor f (x8 / x2, x16 / x4, x32 / x8),
with the 95 % paired bootstrap interval of that ratio over the held-out forcings (their errors vary
8x between forcings). The factors train `--jobs` at a time (default 2, the CI machine's cores), each in
a single-threaded process: `train_seconds_total` is the wall clock of all training, `train_seconds_sum`
the factors' own times added up.
`speedup_equal_accuracy_learned_x<factor>`: the cost per simulated time unit (microseconds per step
over the step) of the cheapest standard run, any scheme and factor, at least as accurate as the
learned one, over the learned run's (`..._at_least` where none is: a bound from the finest factor).
"""

import argparse
import io
import math
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import sciax
from sciax.pde import fv, learned

FACTORS = (4, 8, 16, 32)
# Adam steps per factor on the time-derivative loss, then on the unrolled loss (which costs about
# factor^-2 per step: 0.43 s at x8, 0.12 s at x16 on one slow core, against 12 ms for a
# derivative-loss step at x16). Sized so that the two processes of `--jobs 2` take about the same
# time. At x16, 24,000 derivative-loss steps did better than 12,000 (x16 / x4 1.007 against
# 1.05-1.12), and 48,000 better still (0.90-0.94), while 3,000 unrolled steps did as well as 6,000.
DERIVATIVE_STEPS = {4: 6000, 8: 6000, 16: 48000, 32: 12000}
UNROLLED_STEPS = {4: 0, 8: 2000, 16: 3000, 32: 4000}
N_FINE = 512
LENGTH = 2 * np.pi


def grid(n):
    return sciax.pde.Grid(n, LENGTH, points="centre")


def step_for(model, dt_out):
    return dt_out / math.ceil(dt_out / model.stable_dt(2.0) - 1e-9)


def standard_schemes():
    out = {"weno5": (fv.WENO5Z(), fv.Rusanov()), "upwind": (fv.PiecewiseConstant(), fv.HLL())}
    for name, stencil in (("centred2", (0, 1)), ("centred4", (-1, 2)), ("centred6", (-2, 3))):
        out[name] = (learned.LinearReconstruction(stencil), fv.Rusanov())
    for name, stencil in (("upwind3", (-1, 1)), ("upwind5", (-2, 2))):
        out[name] = (learned.LinearReconstruction(stencil), fv.Rusanov())
    return out


@eqx.filter_jit
def _run_batch(model, u0s, ts: tuple, forcings, dt: float):
    # `ts` and `dt` are static (hashable Python values): the fixed-step driver needs them concrete.
    method = sciax.pde.RK4(dt, checkpoint=None)

    def one(u, p):
        # From the cell averages alone: a model with memory starts without history (its lags equal to u).
        ys = sciax.simulate(model, model.initial_state(u), np.asarray(ts), p, method=method, throw=False).ys
        return model.observed(ys)

    return jax.vmap(one)(u0s, forcings)


def run_batch(model, u0s, ts, forcings, dt):
    return _run_batch(model, u0s, tuple(float(t) for t in ts), forcings, float(dt))


def reference(forcings, ts, chunk):
    model = learned.ForcedBurgers(grid(N_FINE))
    dt = step_for(model, float(ts[1] - ts[0]))
    n = forcings["amplitude"].shape[0]
    parts = []
    for lo in range(0, n, chunk):
        p = {k: v[lo : lo + chunk] for k, v in forcings.items()}
        parts.append(np.asarray(run_batch(model, jnp.zeros((p["amplitude"].shape[0], N_FINE)), ts, p, dt)))
    return np.concatenate(parts), dt


def segments(refs, forcings, t0s, unroll, dt_out):
    """All training segments: (segment states, forcings with the phase moved to the segment start)."""
    n_traj, n_t = refs.shape[:2]
    starts = [(i, j) for i in range(n_traj) for j in range(0, n_t - unroll)]
    idx = np.array(starts)
    seg = np.stack([refs[i, j : j + unroll + 1] for i, j in starts])
    shift = {k: np.asarray(v)[idx[:, 0]] for k, v in forcings.items()}
    # f(x, t0 + s) = sum A sin(omega s + k x + (phase + omega t0)): a segment starts at s = 0.
    shift["phase"] = shift["phase"] + shift["omega"] * t0s[idx[:, 1], None]
    return seg, shift


def derivative_data(factor, refs, forcings, t_span):
    """Coarse snapshots, their times and forcings, and the coarse-grained fine time derivatives."""
    fine = learned.ForcedBurgers(grid(N_FINE))
    rates = jax.jit(jax.vmap(jax.vmap(fine.rhs, in_axes=(0, 0, None)), in_axes=(None, 0, 0)))
    n = N_FINE // factor
    targets = learned.coarse_grain(np.asarray(rates(jnp.asarray(t_span), jnp.asarray(refs), forcings)), factor)
    states = learned.coarse_grain(refs, factor).reshape(-1, n)
    times = np.broadcast_to(t_span, refs.shape[:2]).reshape(-1)
    repeated = {k: jnp.repeat(v, len(t_span), axis=0) for k, v in forcings.items()}
    return jnp.asarray(states), jnp.asarray(times), repeated, jnp.asarray(targets.reshape(-1, n))


def untrained_model(factor, args):
    """The learned scheme at `factor` before training (its inputs follow the factor's losses)."""
    key = jax.random.fold_in(jax.random.key(0), factor)
    n = N_FINE // factor
    reach = args.reach
    # Lagged fields only where the unrolled loss trains the feedback through them (at x4, on the
    # time-derivative loss alone, they made the runs worse: MAE 4.2e-4 against 3.3e-4 in a prototype).
    memory = tuple(args.memory) if args.steps_at[factor] else ()
    read_forcing = tuple(args.read_forcing) if args.steps_at[factor] else ()
    if args.scheme == "face":
        recon = learned.face_net(
            (1 - args.stencil_reach, args.stencil_reach),
            args.degree,
            inputs=(1 - reach, reach),
            values=args.values,
            features=len(memory) + len(read_forcing),
            width_size=args.width,
            depth=args.depth,
            key=key,
        )
    else:
        recon = learned.stencil_net((-2, 2), 1, inputs=(-reach, reach), width_size=args.width, depth=2, key=key)
    viscous = None
    if args.viscous == "learned":
        viscous = learned.face_net(
            (-2, 3),
            1,
            inputs=(1 - reach, reach),
            derivative=1,
            width_size=args.width,
            depth=args.depth,
            key=jax.random.fold_in(key, 1),
        )
    return learned.ForcedBurgers(
        grid(n), reconstruction=recon, viscous=viscous, memory=memory, read_forcing=read_forcing
    )


def train_learned(factor, refs_full, forcings, ts_full, warm, args):
    model = untrained_model(factor, args)
    n, memory = N_FINE // factor, model.memory
    dsteps, steps = args.dsteps_at[factor], args.steps_at[factor]
    refs, t_span = refs_full[:, warm:], ts_full[warm:]
    # The lagged fields along the coarse-grained training runs, from their start (u = 0) on.
    lags = learned.lagged(learned.coarse_grain(refs_full, factor), ts_full, memory)[:, warm:] if memory else None
    start = time.perf_counter()
    losses = {}
    if dsteps:
        states, times, forcing, targets = derivative_data(factor, refs, forcings, t_span)
        if memory:
            states = {"u": states, "lag": jnp.asarray(lags.reshape(-1, len(memory), n))}
        scale = float(jnp.mean(targets**2))
        d_data = learned.random_batches(
            (states, times, forcing, targets), min(args.dbatch, times.shape[0]), seed=factor
        )

        def d_loss(m, u, t, p, r):
            if args.loss == "absolute":
                return learned.derivative_loss(m, u, t, p, r, absolute=True) / scale**0.5
            return learned.derivative_loss(m, u, t, p, r) / scale

        schedule = optax.cosine_decay_schedule(args.dlr, dsteps, alpha=0.05)
        model, losses["derivative"] = learned.train(
            model, d_loss, optax.adam(schedule), dsteps, data=d_data, progress=args.progress
        )
    if steps:
        dt = step_for(model, args.dt_out)
        seg, shifted = segments(learned.coarse_grain(refs, factor), forcings, t_span, args.unroll, args.dt_out)
        # Each segment's lags at its start (segments runs over trajectories, then start times).
        starts = None if not memory else lags[:, : -args.unroll].reshape(seg.shape[0], -1, n)
        ts = np.arange(args.unroll + 1) * args.dt_out
        data = learned.random_batches((seg, shifted, starts), min(args.batch, seg.shape[0]), seed=factor + 1)

        def loss(m, refs_b, p_b, lags_b):
            absolute = args.loss == "absolute"
            return learned.unrolled_loss(m, refs_b, ts, p_b, dt=dt, checkpoint=8, absolute=absolute, lags=lags_b)

        schedule = optax.cosine_decay_schedule(args.lr, steps, alpha=0.1)
        model, losses["unrolled"] = learned.train(
            model, loss, optax.adam(schedule), steps, data=data, progress=args.progress
        )
    return model, losses, time.perf_counter() - start


def _train_job(factor, refs_path, forcings, ts_full, warm, args):
    """One factor's training in a worker process; the weights come back serialised."""
    refs = np.load(refs_path, mmap_mode="r")
    model, losses, seconds = train_learned(factor, refs, forcings, ts_full, warm, args)
    buffer = io.BytesIO()
    eqx.tree_serialise_leaves(buffer, model)
    return buffer.getvalue(), losses, seconds


def train_all(factors, refs, forcings, ts_full, warm, args):
    """`{factor: (model, losses, seconds)}`, trained `args.jobs` factors at a time, each in its own
    single-threaded process (the networks are too small for XLA's threads to help, and the factors are
    independent), the longest first."""
    if args.jobs == 1:
        return {f: train_learned(f, refs, forcings, ts_full, warm, args) for f in factors}
    forcings = {k: np.asarray(v) for k, v in forcings.items()}
    single = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    saved = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + single).strip()  # the workers inherit it
    order = sorted(factors, key=lambda f: (args.steps_at[f] * N_FINE // f, args.dsteps_at[f]), reverse=True)
    try:
        return _train_in_workers(factors, order, refs, forcings, ts_full, warm, args)
    finally:
        if saved is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = saved


def _train_in_workers(factors, order, refs, forcings, ts_full, warm, args):
    """`train_all`'s pool: the references reach the workers as a memory-mapped file, the weights come back
    serialised and are loaded into the same untrained model built here."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "refs.npy")
        np.save(path, refs)
        context = multiprocessing.get_context("spawn")  # a fork would copy this process's XLA threads
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            jobs = {f: pool.submit(_train_job, f, path, forcings, ts_full, warm, args) for f in order}
            out = {}
            for f in factors:
                weights, losses, seconds = jobs[f].result()
                out[f] = eqx.tree_deserialise_leaves(io.BytesIO(weights), untrained_model(f, args)), losses, seconds
    return out


def evaluate(model, refs, forcings, ts, factor):
    coarse = learned.coarse_grain(refs, factor)
    dt = step_for(model, float(ts[1] - ts[0]))
    ys = np.asarray(run_batch(model, jnp.asarray(coarse[:, 0]), ts, forcings, dt))
    errors = np.asarray(learned.error_vs_time(ys, coarse))
    mae = float(np.mean(errors)) if np.all(np.isfinite(errors)) else math.inf
    # Time per step of one trajectory.
    one = jax.tree_util.tree_map(lambda a: a[:1], forcings)
    u0 = jnp.asarray(coarse[:1, 0])
    jax.block_until_ready(run_batch(model, u0, ts, one, dt))
    times = []
    for _ in range(5):
        t = time.perf_counter()
        jax.block_until_ready(run_batch(model, u0, ts, one, dt))
        times.append(time.perf_counter() - t)
    steps = round(float(ts[-1] - ts[0]) / dt)
    return mae, 1e6 * float(np.median(times)) / steps, errors


def print_speedups(results, costs, factors):
    """Speed-up at equal accuracy: for the learned scheme at each factor, the cheapest standard run
    (any scheme, any factor) at least as accurate, over the learned run's cost per simulated time
    unit. Where no standard run measured is that accurate, a lower bound: each scheme would need a grid
    finer than the finest measured to match it, so it would cost more than there."""
    print("# speed-up at equal accuracy: cost per simulated time unit of the standard run over the learned one")
    standard = {key: mae for key, mae in results.items() if key[0] != "learned"}
    for f in factors:
        mine = results["learned", f]
        if not math.isfinite(mine):
            continue
        cost = costs["learned", f]
        level = [(costs[key], key) for key, mae in standard.items() if mae <= mine]
        if level:
            c, (name, g) = min(level)
            print(f"speedup_equal_accuracy_learned_x{f}: {c / cost:.2f}  # {name} x{g}, mae {standard[name, g]:.2e}")
        else:
            finest = min(key[1] for key in standard)
            c = min(costs[key] for key in standard if key[1] == finest)
            print(f"speedup_equal_accuracy_learned_x{f}_at_least: {c / cost:.2f}  # no standard run reaches it")


def ratio_interval(mine, theirs, draws=10_000, seed=0):
    """The 95 % bootstrap interval of `mean(mine) / mean(theirs)` over the held-out forcings (paired:
    each draw resamples forcings, both schemes' errors on the same ones), as a comment."""
    if len(mine) < 2 or not np.all(np.isfinite(mine)):
        return ""
    pick = np.random.default_rng(seed).integers(0, len(mine), (draws, len(mine)))
    lo, hi = np.percentile(mine[pick].mean(1) / theirs[pick].mean(1), [2.5, 97.5])
    return f"; 95 % interval over the held-out forcings {lo:.2f}-{hi:.2f}"


def per_factor(parser, name, values, factors, default):
    """`{factor: value}` from one value for all factors, one per factor, or (None) the `default` table."""
    if values is None:
        # A factor outside the table takes its nearest entry's.
        return {f: default[min(default, key=lambda g: abs(math.log(g / f)))] for f in factors}
    if len(values) not in (1, len(factors)):
        parser.error(f"{name}: give one value or one per factor of --factors {factors}, got {values}")
    return dict(zip(factors, values * len(factors) if len(values) == 1 else values))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", type=int, default=1024, help="training forcings (cheap, and more generalise)")
    parser.add_argument("--test", type=int, default=64, help="held-out forcings (8 gave ratios off by 10 %%)")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--span", type=float, default=5.0)
    parser.add_argument("--eval-span", type=float, default=10.0)
    parser.add_argument("--dt-out", type=float, default=0.1)
    parser.add_argument("--unroll", type=int, default=8)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument(
        "--dsteps",
        type=int,
        nargs="+",
        help="adam steps on the time-derivative loss, per factor of --factors (or one for all; default: "
        "DERIVATIVE_STEPS)",
    )
    parser.add_argument("--dbatch", type=int, default=128, help="snapshots per derivative-loss step")
    parser.add_argument("--dlr", type=float, default=3e-3)
    parser.add_argument(
        "--steps",
        type=int,
        nargs="+",
        help="adam steps on the unrolled loss after the others, per factor of --factors (or one for all; 0: none; "
        "default: UNROLLED_STEPS)",
    )
    parser.add_argument("--lr", type=float, default=1e-3, help="unrolled-loss learning rate")
    parser.add_argument(
        "--reach", type=int, default=5, help="the network sees cells i-reach .. i+reach (face: i+1-reach .. i+reach)"
    )
    parser.add_argument("--width", type=int, default=64, help="hidden width of the MLP")
    parser.add_argument(
        "--stencil-reach",
        type=int,
        default=3,
        help="face scheme: the weights apply to cells i+1-k .. i+k of face i+1/2 (default 3: the paper's six cells)",
    )
    parser.add_argument("--degree", type=int, default=1, help="face scheme: weights exact up to this polynomial degree")
    parser.add_argument("--scheme", choices=("face", "cell"), default="face", help="learned face values or cell edges")
    parser.add_argument("--loss", choices=("squared", "absolute"), default="absolute", help="error of both losses")
    parser.add_argument("--values", type=int, default=2, help="face scheme: 1 value per face or both states")
    parser.add_argument("--depth", type=int, default=2, help="hidden layers of the MLP")
    parser.add_argument(
        "--viscous", choices=("fixed", "learned"), default="fixed", help="second-order or learned face derivative"
    )
    parser.add_argument(
        "--memory",
        type=float,
        nargs="*",
        default=[0.2],
        help="time constants of the lagged fields the learned scheme reads at the factors trained on unrolled losses "
        "(ForcedBurgers(memory=...)); none: no memory",
    )
    parser.add_argument(
        "--read-forcing",
        nargs="*",
        choices=learned.FORCING_FIELDS,
        default=["average", "face"],
        help="what of the forcing the learned scheme also reads at the factors trained on unrolled losses "
        "(ForcedBurgers(read_forcing=...)); none: nothing",
    )
    parser.add_argument("--factors", type=int, nargs="+", default=list(FACTORS))
    parser.add_argument(
        "--standard-factors",
        type=int,
        nargs="*",
        default=[2],
        help="factors where only the standard schemes run (x2: the pair learned x8 / best x2 of the headline)",
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="factors trained at once, one single-threaded process each (CI: 2 cores)"
    )
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the script runs")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs: factors trained at once must be >= 1, got {args.jobs}")
    if (args.memory or args.read_forcing) and args.scheme != "face":
        parser.error("--memory and --read-forcing need --scheme face (the learned face values read those fields)")
    if (args.stencil_reach, args.degree) != (3, 1) and args.scheme != "face":
        parser.error("--stencil-reach and --degree need --scheme face (--scheme cell keeps its (-2, 2) stencil)")
    if args.quick:
        args.train, args.test, args.warmup, args.span, args.eval_span, args.dsteps = 2, 2, 1.0, 1.0, 1.0, [20]
    args.dsteps_at = per_factor(parser, "--dsteps", args.dsteps, args.factors, DERIVATIVE_STEPS)
    args.steps_at = per_factor(parser, "--steps", args.steps, args.factors, UNROLLED_STEPS)
    if args.quick:
        args.steps_at = {f: min(s, 3) for f, s in args.steps_at.items()}
    for f in args.factors:  # bad scheme flags fail here, not in a worker after the reference runs
        try:
            untrained_model(f, args)
        except (TypeError, ValueError) as error:
            parser.error(f"the learned scheme at x{f}: {error}")
    print(f"# devices: {jax.devices()}, x64: {jax.config.jax_enable_x64}")

    key = jax.random.key(0)
    train_p = learned.random_forcing(jax.random.fold_in(key, 1), (args.train,))
    test_p = learned.random_forcing(jax.random.fold_in(key, 2), (args.test,))
    warm = round(args.warmup / args.dt_out)
    ts_train = np.arange(warm + round(args.span / args.dt_out) + 1) * args.dt_out
    ts_test = np.arange(warm + round(args.eval_span / args.dt_out) + 1) * args.dt_out

    start = time.perf_counter()
    refs_train, dt_fine = reference(train_p, ts_train, chunk=64)
    refs_test, _ = reference(test_p, ts_test, chunk=8)
    print(f"reference_seconds: {time.perf_counter() - start:.1f}  # WENO5-Z, {N_FINE} cells, RK4 dt={dt_fine:.5f}")
    print(f"reference_max_abs_u: {np.abs(refs_test).max():.3f}")
    refs_test, t_test = refs_test[:, warm:], ts_test[warm:]

    start = time.perf_counter()
    trained = train_all(args.factors, refs_train, train_p, ts_train, warm, args)
    train_wall = time.perf_counter() - start
    results, costs, per_forcing = {}, {}, {}
    for factor in sorted(set(args.factors) | set(args.standard_factors)):
        n = N_FINE // factor
        schemes = {}
        if factor in args.factors:
            model, losses, seconds = trained[factor]
            summary = ", ".join(f"{k} loss {v[0]:.3e} -> {np.mean(v[-20:]):.3e}" for k, v in losses.items())
            print(f"# factor {factor} ({n} cells): trained in {seconds:.1f} s, {summary}")
            schemes["learned"] = model
        else:
            print(f"# factor {factor} ({n} cells): standard schemes only")
        for name, (recon, flux) in standard_schemes().items():
            schemes[name] = learned.ForcedBurgers(grid(n), reconstruction=recon, numerical_flux=flux)
        for name, m in schemes.items():
            mae, us, errors = evaluate(m, refs_test, test_p, t_test, factor)
            results[name, factor] = mae
            per_forcing[name, factor] = np.mean(errors, axis=1)
            # Microseconds per simulated time unit of one trajectory: what a run of a given length costs.
            costs[name, factor] = us / step_for(m, args.dt_out)
            print(f"mae_{name}_x{factor}: {mae:.4e}")
            print(f"step_us_{name}_x{factor}: {us:.1f}")
    print(f"train_seconds_total: {train_wall:.1f}  # wall clock, {args.jobs} factor(s) at a time")
    print(f"train_seconds_sum: {sum(t for _, _, t in trained.values()):.1f}  # each factor's own time, summed")
    print_speedups(results, costs, args.factors)

    print("# headline: learned at factor 4f against the best standard scheme at factor f")
    reached = 0
    for f in sorted(set(args.factors) | set(args.standard_factors)):
        if 4 * f not in args.factors:
            continue
        best = min((v, k) for (k, g), v in results.items() if g == f and k != "learned")
        mine = results["learned", 4 * f]
        reached += mine <= best[0]
        spread = ratio_interval(per_forcing["learned", 4 * f], per_forcing[best[1], f])
        print(f"learned_x{4 * f}_over_best_x{f}: {mine / best[0]:.3f}  # best at x{f}: {best[1]}{spread}")
    print(f"headline_pairs_reached: {reached}")


if __name__ == "__main__":
    main()
