"""NUTS settings on an ODE posterior: diagonal vs dense mass matrix, and solver tolerance.

The Lotka-Volterra lynx-hare model of `inference.py` (4 rates with strongly
correlated posteriors, 2 initial states, 2 noise scales), 4 vectorised chains
with `sciax.prob.infer`'s defaults otherwise. Each configuration runs in this
process after one warm-up run (so compile time is mostly shared):

- `diag` vs `dense` mass matrix at rtol 1e-6 (what `docs/choosing.md` quotes);
- `dense` at rtol 1e-8 and 1e-10: what tighter solves inside NUTS cost;
- warmup from the Laplace inverse mass matrix (`init_metric="laplace"`) against
  NumPyro's identity start (the default), with the full and a short (100 draw) warmup.

Metrics per configuration: wall seconds, minimum bulk ESS over the rates, max
r-hat, mean leapfrog steps per draw, ESS per second.

Run: python benchmarks/nuts_settings.py [--draws 500]
Prints `name: value` lines; asserts nothing.
"""

import jax

jax.config.update("jax_enable_x64", True)

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from inference import RATES, lv_data, sciax_lv_model  # noqa: E402  (the same model and data)

import sciax  # noqa: E402
from sciax import _arviz  # noqa: E402


def run(name: str, rtol: float, dense: bool, draws: int, seed: int = 0, metric="identity", warmup=None) -> None:
    start = time.perf_counter()
    result = sciax.prob.infer(
        sciax_lv_model(rtol, rtol * 10),
        lv_data(),
        num_warmup=draws if warmup is None else warmup,
        num_samples=draws,
        num_chains=4,
        dense_mass=dense,
        init_metric=metric,
        seed=seed,
        log_likelihood=False,
        posterior_predictive=False,
    )
    seconds = time.perf_counter() - start
    posterior = _arviz.group(result, "posterior")
    az = _arviz.arviz()
    ess = min(float(az.ess(np.asarray(posterior[n].values))) for n in RATES)
    rhat = max(float(az.rhat(np.asarray(posterior[n].values))) for n in RATES)
    steps = float(np.asarray(_arviz.group(result, "sample_stats")["n_steps"].values).mean())
    print(f"{name}_seconds: {seconds:.1f}")
    print(f"{name}_min_bulk_ess: {ess:.0f}")
    print(f"{name}_max_rhat: {rhat:.4f}")
    print(f"{name}_mean_leapfrog_steps: {steps:.1f}")
    print(f"{name}_ess_per_second: {ess / seconds:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=500, help="warmup and sampling draws per chain")
    draws = parser.parse_args().draws
    print(f"# Lotka-Volterra NUTS settings, 4 chains x {draws} draws (+{draws} warmup), float64")
    print(f"# jax {jax.__version__}, backend {jax.default_backend()}")
    run("warmup_run", 1e-6, True, 50)  # compiles what the runs below share; not reported further
    run("lv_diag_rtol1e-6", 1e-6, False, draws)
    run("lv_dense_rtol1e-6", 1e-6, True, draws)
    run("lv_dense_rtol1e-8", 1e-8, True, draws)
    run("lv_dense_rtol1e-10", 1e-10, True, draws)
    run("lv_dense_laplace_start_rtol1e-6", 1e-6, True, draws, metric="laplace")
    run("lv_dense_warmup100_rtol1e-6", 1e-6, True, draws, warmup=100)
    run("lv_dense_warmup100_laplace_start_rtol1e-6", 1e-6, True, draws, metric="laplace", warmup=100)


if __name__ == "__main__":
    main()
