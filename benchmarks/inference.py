"""Inference and sensitivity benchmarks: sciax.prob vs the usual hand-written glue.

1. Lotka-Volterra NUTS on the lynx-hare data (4 chains x 1,000 draws after 1,000
   warmup, vectorised chains, dense mass matrix, same priors and tolerances):
   sciax.prob.SimulationModel + infer (its defaults: start near the mode,
   forward sensitivities, Tsit5, one compiled program for all chains) vs NumPyro's own approach, a model that
   calls `jax.experimental.ode.odeint` run by NumPyro's MCMC with its defaults.
   Metric: minimum bulk ESS over the four rates per second of wall time, for a
   cold run (fresh process, compilation included: what a user waits for once)
   and a warm run (a second run, seed 1, in the same process).
2. Sobol indices (first order and total, 100 bootstrap resamples) of a
   10-parameter SEIR ODE with 2^14 base samples (196,608 solves): sciax.prob.sobol_indices
   vs SALib driving scipy's solve_ivp. By default solve_ivp runs on the first
   `--baseline-evals` rows of SALib's design and its time is extrapolated to all
   rows (say `--full-baseline` to run them all); SALib's own sampling and analysis are timed in full.

Run: python benchmarks/inference.py [--draws 1000] [--baseline-evals 2000] [--full-baseline]
Prints `name: value` lines (comments start with '#'). Reports numbers only; asserts nothing.
"""

import jax

# float64 on both sides: scipy integrates in float64, and NUTS on an ODE posterior is only reliable in it.
jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import arviz as az  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import numpyro  # noqa: E402
import numpyro.distributions as dist  # noqa: E402
from jax.experimental.ode import odeint  # noqa: E402
from numpyro.infer import MCMC, NUTS  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import sciax  # noqa: E402

RTOL, ATOL = 1e-6, 1e-5  # NumPyro's Lotka-Volterra example uses these for odeint
RATES = ("alpha", "beta", "gamma", "delta")


# --------------------------------------------------------------------------- 1. NUTS


def lv_data():
    data = sciax.prob.load_lynx_hare()
    return np.stack([data["hare"].values, data["lynx"].values], axis=-1)


def sciax_lv_model(rtol: float = RTOL, atol: float = ATOL):
    rate = lambda loc, scale: dist.TruncatedNormal(loc, scale, low=0.0)  # noqa: E731
    return sciax.prob.SimulationModel(
        sciax.ode.lotka_volterra(),
        jnp.arange(21.0),
        priors={"alpha": rate(1.0, 0.5), "beta": rate(0.05, 0.05), "gamma": rate(1.0, 0.5), "delta": rate(0.05, 0.05)},
        y0=dist.LogNormal(jnp.log(10.0), 1.0).expand([2]).to_event(1),
        likelihood=sciax.prob.LogNormalLikelihood(dist.LogNormal(-1.0, 1.0)),
        rtol=rtol,
        atol=atol,
    )


def _dz_dt(z, t, theta):
    prey, predator = z[0], z[1]
    alpha, beta, gamma, delta = theta[0], theta[1], theta[2], theta[3]
    return jnp.stack([(alpha - beta * predator) * prey, (-gamma + delta * prey) * predator])


def odeint_lv_model(y=None):
    """The model as NumPyro's Lotka-Volterra example writes it: odeint inside the model."""
    z_init = numpyro.sample("z_init", dist.LogNormal(jnp.log(10.0), 1.0).expand([2]).to_event(1))
    theta = numpyro.sample(
        "theta",
        dist.TruncatedNormal(
            loc=jnp.array([1.0, 0.05, 1.0, 0.05]), scale=jnp.array([0.5, 0.05, 0.5, 0.05]), low=0.0
        ).to_event(1),
    )
    z = odeint(_dz_dt, z_init, jnp.arange(21.0), theta, rtol=RTOL, atol=ATOL, mxstep=1000)
    sigma = numpyro.sample("sigma", dist.LogNormal(-1.0, 1.0).expand([2]).to_event(1))
    numpyro.sample("y", dist.LogNormal(jnp.log(z), sigma).to_event(2), obs=y)


def _nuts_run(side: str, draws: int, seed: int):
    """One 4-chain run; returns (seconds, min bulk ESS over the rates, max r_hat, mean leapfrog steps)."""
    obs = lv_data()
    start = time.perf_counter()
    if side == "sciax":
        result = sciax.prob.infer(
            sciax_lv_model(),
            obs,
            num_warmup=draws,
            num_samples=draws,
            num_chains=4,
            chain_method="vectorized",
            dense_mass=True,
            seed=seed,
            log_likelihood=False,
            posterior_predictive=False,
        )
        seconds = time.perf_counter() - start
        chains = [result.posterior[n].values for n in RATES]
        steps = float(result.sample_stats["n_steps"].mean())
    else:
        mcmc = MCMC(
            NUTS(odeint_lv_model, dense_mass=True),
            num_warmup=draws,
            num_samples=draws,
            num_chains=4,
            chain_method="vectorized",
            progress_bar=False,
        )
        mcmc.run(jax.random.PRNGKey(seed), y=jnp.asarray(obs))
        theta = np.asarray(mcmc.get_samples(group_by_chain=True)["theta"])
        seconds = time.perf_counter() - start
        chains = [theta[..., i] for i in range(4)]
        steps = float("nan")  # not collected: NumPyro's defaults, exactly as its example runs
    ess = min(float(az.ess(c)) for c in chains)
    rhat = max(float(az.rhat(c)) for c in chains)
    return seconds, ess, rhat, steps


def nuts_side(side: str, draws: int):
    """Cold run (fresh process) then a warm run (seed 1) in the same process.

    Both sides build a new MCMC in the warm run (infer does; NumPyro cannot re-run a
    vectorised MCMC object with a new key), so each compiles its sampler again but
    reuses what the process has compiled before (array primitives, jitted helpers).
    """
    for phase, seed in (("cold", 0), ("warm", 1)):
        seconds, ess, rhat, steps = _nuts_run(side, draws, seed)
        print(f"lv_nuts_{side}_{phase}_seconds: {seconds:.1f}")
        print(f"lv_nuts_{side}_{phase}_min_bulk_ess: {ess:.0f}")
        print(f"lv_nuts_{side}_{phase}_max_rhat: {rhat:.4f}")
        print(f"lv_nuts_{side}_{phase}_mean_leapfrog_steps: {steps:.2f}")
        print(f"lv_nuts_{side}_{phase}_ess_per_second: {ess / seconds:.2f}", flush=True)


def bench_nuts(draws: int, side_timeout: float):
    """Each side in its own fresh process, so that neither inherits the other's compiled programs.

    A side that runs past `side_timeout` seconds is stopped; what it printed stands, and the
    unfinished phase is reported as such (NumPyro's odeint model has, on some random streams,
    run for many minutes: see sciax.prob.map_initial_params).
    """
    print(f"# Lotka-Volterra NUTS, 4 chains x {draws} draws (+{draws} warmup), float64, dense mass, vectorised chains")
    print("# cold: first run in a fresh process (seed 0, compilation included); warm: a second run (seed 1) in it")
    rates = {}
    for side in ("sciax", "odeint"):
        try:
            out = subprocess.run(
                [sys.executable, "-u", __file__, "--nuts-side", side, "--draws", str(draws)],
                capture_output=True,
                text=True,
                check=True,
                timeout=side_timeout,
            ).stdout
        except subprocess.TimeoutExpired as stopped:
            out = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else (stopped.stdout or "")
        print(out, end="")
        rates[side] = {
            line.split(":")[0].split("_")[-4]: float(line.split(":")[1])
            for line in out.splitlines()
            if "_ess_per_second:" in line
        }
        for phase in ("cold", "warm"):
            if phase not in rates[side]:
                print(f"# {side} {phase} run did not finish within {side_timeout:.0f} s (whole side)")
    for phase in ("cold", "warm"):
        if phase in rates["sciax"] and phase in rates["odeint"]:
            ratio = rates["sciax"][phase] / rates["odeint"][phase]
            print(f"lv_nuts_ess_per_second_ratio_sciax_over_odeint_{phase}: {ratio:.2f}")


# --------------------------------------------------------------------------- 2. Sobol

SEIR_BOUNDS = {
    "beta": (0.2, 0.6),  # transmission rate, 1/day
    "kappa": (0.0, 0.5),  # seasonal amplitude of transmission
    "sigma": (0.1, 0.5),  # 1 / incubation period
    "gamma": (0.05, 0.2),  # recovery rate
    "omega": (0.0, 0.02),  # waning immunity
    "nu": (0.0, 0.01),  # vaccination rate
    "mu": (0.0, 0.001),  # birth = death rate
    "alpha": (0.0, 0.01),  # disease mortality
    "e0": (1e-4, 1e-3),  # initial exposed fraction
    "i0": (1e-4, 1e-3),  # initial infected fraction
}
SEIR_T1 = 120.0


def _seir(t, y, p):
    s, e, i, r = y[0], y[1], y[2], y[3]
    beta_t = p["beta"] * (1 + p["kappa"] * jnp.cos(2 * jnp.pi * t / 365.0))
    infection = beta_t * s * i
    return jnp.stack(
        [
            p["mu"] - infection + p["omega"] * r - (p["nu"] + p["mu"]) * s,
            infection - (p["sigma"] + p["mu"]) * e,
            p["sigma"] * e - (p["gamma"] + p["alpha"] + p["mu"]) * i,
            p["gamma"] * i + p["nu"] * s - (p["omega"] + p["mu"]) * r,
        ]
    )


SEIR = sciax.ode.ODE(_seir, names=("S", "E", "I", "R"))


def seir_infected(p):
    """Infected fraction at day 120 (sciax)."""
    y0 = jnp.stack([1.0 - p["e0"] - p["i0"], p["e0"], p["i0"], 0.0])
    rates = {k: v for k, v in p.items() if k not in ("e0", "i0")}
    return sciax.simulate(SEIR, y0, jnp.array([0.0, SEIR_T1]), rates, rtol=1e-6, atol=1e-9).ys[-1, 2]


def seir_infected_scipy(row, names):
    p = dict(zip(names, row))
    y0 = [1.0 - p["e0"] - p["i0"], p["e0"], p["i0"], 0.0]

    sol = solve_ivp(
        lambda t, y: _seir_np(t, y, p), (0.0, SEIR_T1), y0, method="RK45", rtol=1e-6, atol=1e-9, t_eval=[SEIR_T1]
    )
    return sol.y[2, -1]


def _seir_np(t, y, p):
    s, e, i, r = y
    beta_t = p["beta"] * (1 + p["kappa"] * np.cos(2 * np.pi * t / 365.0))
    infection = beta_t * s * i
    return [
        p["mu"] - infection + p["omega"] * r - (p["nu"] + p["mu"]) * s,
        infection - (p["sigma"] + p["mu"]) * e,
        p["sigma"] * e - (p["gamma"] + p["alpha"] + p["mu"]) * i,
        p["gamma"] * i + p["nu"] * s - (p["omega"] + p["mu"]) * r,
    ]


def bench_sobol(log2_n: int, baseline_evals: int, full_baseline: bool):
    n = 2**log2_n
    names = list(SEIR_BOUNDS)
    start = time.perf_counter()
    ours = sciax.prob.sobol_indices(seir_infected, SEIR_BOUNDS, n, num_resamples=100, chunk_size=8192)
    sciax_time = time.perf_counter() - start
    print(f"# Sobol indices, 10-parameter SEIR ODE, N = 2^{log2_n} ({ours.attrs['num_evaluations']} solves)")
    print(f"sobol_sciax_seconds: {sciax_time:.2f}")

    try:
        from SALib.analyze import sobol as salib_analyze
        from SALib.sample import sobol as salib_sample
    except ImportError:
        print("# SALib is not installed: no baseline")
        return
    problem = {"num_vars": len(names), "names": names, "bounds": [list(SEIR_BOUNDS[k]) for k in names]}
    start = time.perf_counter()
    x = salib_sample.sample(problem, n, calc_second_order=False, seed=0)
    sample_time = time.perf_counter() - start
    m = x.shape[0] if full_baseline else min(baseline_evals, x.shape[0])
    start = time.perf_counter()
    y_part = np.array([seir_infected_scipy(row, names) for row in x[:m]])
    solve_time = (time.perf_counter() - start) * x.shape[0] / m
    # SALib's analysis of the full design: outputs from sciax on SALib's own rows (also a cross-check).
    y = np.asarray(jax.jit(jax.vmap(lambda r: seir_infected(dict(zip(names, r)))))(jnp.asarray(x)))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = salib_analyze.analyze(problem, y, calc_second_order=False, num_resamples=100, seed=0)
    analyze_time = time.perf_counter() - start
    base_time = sample_time + solve_time + analyze_time
    print(f"sobol_salib_solve_ivp_evaluations_run: {m}")
    print(f"sobol_salib_solve_ivp_max_abs_output_difference: {np.max(np.abs(y_part - y[:m])):.2e}")
    print(f"sobol_salib_seconds{'' if m == x.shape[0] else '_extrapolated'}: {base_time:.1f}")
    print(f"sobol_salib_sample_plus_analyze_seconds: {sample_time + analyze_time:.2f}")
    print(f"sobol_max_abs_difference_ST_sciax_vs_salib: {np.max(np.abs(ours['ST'].values - theirs['ST'])):.3f}")
    print(f"sobol_speedup_sciax_over_salib_solve_ivp: {base_time / sciax_time:.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--log2-samples", type=int, default=14)
    parser.add_argument("--baseline-evals", type=int, default=2000)
    parser.add_argument("--full-baseline", action="store_true")
    parser.add_argument("--skip-nuts", action="store_true")
    parser.add_argument("--side-timeout", type=float, default=600.0, help="seconds per NUTS side (cold + warm run)")
    parser.add_argument("--nuts-side", choices=("sciax", "odeint"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.nuts_side:
        nuts_side(args.nuts_side, args.draws)
        return
    print(f"# jax {jax.__version__}, numpyro {numpyro.__version__}, backend {jax.default_backend()}")
    bench_sobol(args.log2_samples, args.baseline_evals, args.full_baseline)
    if not args.skip_nuts:
        bench_nuts(args.draws, args.side_timeout)


if __name__ == "__main__":
    main()
