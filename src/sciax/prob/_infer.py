"""`infer`: run NUTS or SVI on a NumPyro model and return labelled ArviZ results."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import jax
import numpy as np
import numpyro
from numpyro.distributions.distribution import Unit
from numpyro.infer import MCMC, NUTS, Predictive
from numpyro.infer import log_likelihood as pointwise_log_likelihood

from .._arviz import dataset, inference_data
from ._map_init import map_initial_params, map_starts_and_metric, unconstrained_template
from ._nuts_program import STATS as _STATS
from ._nuts_program import lower_nuts_program, run_nuts_program
from ._simulation_model import SimulationModel
from ._svi import run_svi

#: `infer`'s default mass matrix is dense for a `SimulationModel` with at most this many latent dimensions.
DENSE_MASS_MAX_DIM = 50


def infer(
    model: Callable,
    *args: Any,
    method: Literal["nuts", "svi"] = "nuts",
    num_samples: int = 1000,
    num_warmup: int = 1000,
    num_chains: int = 4,
    chain_method: str | None = None,
    seed: int = 0,
    target_accept_prob: float = 0.8,
    max_tree_depth: int = 10,
    dense_mass: bool | None = None,
    init_strategy: Callable | Literal["map"] | None = None,
    init_metric: Literal["laplace", "identity"] = "identity",
    guide: Any = None,
    num_steps: int = 2000,
    learning_rate: float | Callable = 0.05,
    on_nonconvergence: Literal["warn", "raise"] = "warn",
    posterior_predictive: bool = True,
    log_likelihood: bool = True,
    predictive_args: tuple | None = None,
    progress_bar: bool = False,
    **kwargs: Any,
):
    """Sample the posterior of a NumPyro `model` given data `*args, **kwargs`.

    Works for any NumPyro model; a `sciax.prob.SimulationModel` also gets its
    dims and coordinates (time, observed component, state) in the output.

    **Methods:**

    - `"nuts"`: `num_chains` NUTS chains of `num_warmup` + `num_samples` draws.
      `chain_method` is numpyro's: `"parallel"` (one device per chain; the default
      when there are enough devices), `"vectorized"` (all chains in one
      vmapped program; the default on a single CPU/GPU) or `"sequential"`.
      `dense_mass=True` adapts a full mass matrix: fewer leapfrog steps per draw
      when parameters are correlated, as rates of an ODE usually are. Default
      (`None`): dense for a `SimulationModel` with at most `DENSE_MASS_MAX_DIM` (50)
      latent dimensions, diagonal otherwise (a dense matrix costs O(d^2) memory and
      O(d^3) per adaptation); `benchmarks/nuts_settings.py` measures the difference
      (docs/choosing.md).
      `init_strategy`: `"map"` starts the chains at jittered copies of the best of
      16 L-BFGS-B optima of the log density from random starts (see
      `sciax.prob.map_initial_params`: no long warmup transient, which on ODE
      posteriors can leave a chain with a tiny step size); or any numpyro
      strategy (`init_to_uniform`: dispersed starts, for multimodal posteriors;
      `init_to_sample`: prior draws). Default: `"map"` for a `SimulationModel`,
      `init_to_uniform` otherwise.
      `init_metric`: where warmup's mass matrix starts. `"identity"` (default):
      NumPyro's unit matrix. `"laplace"` (with `"map"` starts and `dense_mass` a
      bool): the Laplace approximation's inverse mass matrix at the mode (see
      `sciax.prob.map_starts_and_metric`; its diagonal when `dense_mass=False`).
      Warmup adapts either; the choice matters for the first window, which on a
      narrow, correlated ODE posterior and a short warmup otherwise runs with a
      tiny step and trees of hundreds of leapfrog steps (the delayed-SEIR fit of
      `notebooks/dae_and_delay_equations.ipynb`, 100 + 100 draws: half the sampling
      time, higher ESS). With a long warmup (Lotka–Volterra, 4 x (300 + 300)) it
      changes neither the cost nor the ESS measurably.
      With `"map"` starts, vectorised chains and no progress bar, NumPyro's NUTS
      kernels run as one compiled program (initialisation, warmup, sampling and
      constraining together), which saves the op-by-op initialisation of
      `numpyro.infer.MCMC`; otherwise `MCMC` runs them.
    - `"svi"`: stochastic variational inference with an autoguide (`guide`: an
      instance, or a class from `numpyro.infer.autoguide` such as `AutoNormal`
      (default) or `AutoMultivariateNormal`), `num_steps` Adam steps whose size
      decays exponentially from `learning_rate` to a tenth of it (or any optax-style
      schedule `step -> size`), then `num_samples` draws from the fitted guide (one
      chain). A `SimulationModel`'s guide starts at the best posterior-mode search
      (`init_strategy="map"`). The fit is then checked: the ELBO's gradient in the
      guide's location and scale (Stein identities, estimated from the draws) and
      the loss trend over the last 10% of steps; an unconverged fit warns
      `sciax.prob.ConvergenceWarning` (or raises `sciax.prob.ConvergenceError` with
      `on_nonconvergence="raise"`) naming `num_steps` and the remedy. The statistics
      are in `result["sample_stats"].attrs` (`converged`, `location`, `scale`,
      `loss_change`, with standard errors).

    **Returns:** an `arviz.InferenceData` (arviz 0.x; an `xarray.DataTree` on
    arviz >= 1) with groups `posterior` (latent and deterministic sites, dims
    `(chain, draw, ...)`), `sample_stats` (NUTS: `diverging`, `n_steps`,
    `acceptance_rate`, `energy`, `lp`; SVI: `loss`, dim `step`), `log_likelihood`,
    `observed_data` and `posterior_predictive` (the last two can be switched off
    with `log_likelihood=False`, `posterior_predictive=False`). Use `sciax.prob.summary(result)`
    for r_hat, bulk/tail ESS and the divergence count (SVI: mean, sd and interval only).
    The run time is in `result.attrs["sampling_time"]` (seconds, compilation
    included), beside `inference_method`.

    The posterior predictive re-runs `model(*predictive_args)` with the posterior
    draws; by default `predictive_args` is `args` with every positional argument
    replaced by `None` (NumPyro's convention that data arguments default to `None`).

    Precision follows jax: with `jax_enable_x64` the log density and its gradient
    are float64. Prefer float64 for ODE posteriors: in float32 the adaptive
    solver's round-off makes the log density noisy at the scale NUTS's step-size
    adaptation resolves, which shows up as divergences and short steps.
    """
    if method not in ("nuts", "svi"):
        raise ValueError(f"infer: method must be 'nuts' or 'svi', got {method!r}")
    if on_nonconvergence not in ("warn", "raise"):
        raise ValueError(f"infer: on_nonconvergence must be 'warn' or 'raise', got {on_nonconvergence!r}")
    for name, value in (("num_samples", num_samples), ("num_chains", num_chains), ("num_steps", num_steps)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"infer: {name} must be a positive integer, got {value!r}")
    if not isinstance(num_warmup, (int, np.integer)) or num_warmup < 0:
        raise ValueError(f"infer: num_warmup must be a non-negative integer, got {num_warmup!r}")
    if init_metric not in ("laplace", "identity"):
        raise ValueError(f"infer: init_metric must be 'laplace' or 'identity', got {init_metric!r}")
    if init_metric == "laplace" and method != "nuts":
        raise ValueError(f"infer: init_metric='laplace' sets NUTS's warmup; method={method!r} has none")
    if dense_mass is None:
        dense_mass = default_dense_mass(model, args, kwargs)
    key_run, key_predict = jax.random.split(jax.random.PRNGKey(seed))
    start = time.perf_counter()
    if method == "nuts":
        posterior, stats = _run_nuts(
            model,
            args,
            kwargs,
            key_run,
            num_samples,
            num_warmup,
            num_chains,
            chain_method,
            target_accept_prob,
            max_tree_depth,
            dense_mass,
            init_strategy,
            init_metric,
            progress_bar,
        )
        stats_dims = ("chain", "draw")
    else:
        posterior, stats = _run_svi(
            model,
            args,
            kwargs,
            key_run,
            num_samples,
            guide=guide,
            init_strategy=init_strategy,
            num_steps=num_steps,
            learning_rate=learning_rate,
            progress_bar=progress_bar,
            on_nonconvergence=on_nonconvergence,
        )
        stats_dims = ()
    elapsed = time.perf_counter() - start

    dims, coords = model.site_dims() if isinstance(model, SimulationModel) else ({}, {})
    chains, draws = next(iter(posterior.values())).shape[:2]
    flat = {k: v.reshape((chains * draws,) + v.shape[2:]) for k, v in posterior.items()}
    observed = _observed_sites(model, args, kwargs)
    factors = _factor_sites(model, args, kwargs)
    groups = {"posterior": dataset(posterior, dims, coords)}
    groups["sample_stats"] = dataset(stats, {}, {}, sample_dims=stats_dims) if stats_dims else _loss_dataset(stats)
    if observed:
        groups["observed_data"] = dataset(observed, dims, coords, sample_dims=())
    if observed and log_likelihood:
        loglik = pointwise_log_likelihood(model, flat, *args, parallel=True, **kwargs)
        loglik = {k: v for k, v in loglik.items() if k not in factors}
        groups["log_likelihood"] = dataset(_unflatten(loglik, chains, draws), dims, coords)
    if posterior_predictive:
        if predictive_args is None:
            predictive_args = () if isinstance(model, SimulationModel) else tuple(None for _ in args)
        predictive = Predictive(model, posterior_samples=flat, parallel=True)(key_predict, *predictive_args, **kwargs)
        predicted = {k: v for k, v in predictive.items() if k not in posterior and k not in factors}
        if predicted:
            groups["posterior_predictive"] = dataset(_unflatten(predicted, chains, draws), dims, coords)
    result = inference_data(groups)
    # On the result itself (InferenceData's or DataTree's root), where the docstring says; not copied onto every group.
    result.attrs.update(
        {
            "inference_library": "numpyro",
            "inference_method": method,
            "sampling_time": elapsed,
            "created_by": "sciax.prob.infer",
        }
    )
    return result


def default_dense_mass(model, args, kwargs) -> bool:
    """`infer`'s `dense_mass=None`: dense for a `SimulationModel` with few latent dimensions."""
    return isinstance(model, SimulationModel) and _latent_size(model, args, kwargs) <= DENSE_MASS_MAX_DIM


def _latent_size(model, args, kwargs) -> int:
    """Number of scalar latent (unobserved) sample values, from an abstract trace: no solve runs."""
    sizes: list[int] = []

    def trace_sites():
        trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(*args, **kwargs)
        sites = (s for s in trace.values() if s["type"] == "sample" and not s["is_observed"])
        sizes.extend(int(np.prod(np.shape(site["value"]))) for site in sites)
        return 0

    jax.eval_shape(trace_sites)
    return sum(sizes)


def _run_nuts(
    model,
    args,
    kwargs,
    key,
    num_samples,
    num_warmup,
    num_chains,
    chain_method,
    target_accept_prob,
    max_tree_depth,
    dense_mass,
    init_strategy,
    init_metric,
    progress_bar,
):
    if chain_method is None:
        chain_method = "parallel" if jax.local_device_count() >= num_chains > 1 else "vectorized"
    if init_strategy is None:
        init_strategy = "map" if isinstance(model, SimulationModel) else numpyro.infer.init_to_uniform
    if init_metric == "laplace" and not (init_strategy == "map" and isinstance(dense_mass, bool)):
        raise ValueError(
            "infer: init_metric='laplace' needs init_strategy='map' (the mode it is taken at) and dense_mass True, "
            f"False or None (one block over all sites), got init_strategy={init_strategy!r}, "
            f"dense_mass={dense_mass!r}"
        )
    init_params = inverse_mass = None
    if isinstance(init_strategy, str):
        if init_strategy != "map":
            raise ValueError(f"infer: init_strategy must be 'map' or a numpyro init strategy, got {init_strategy!r}")
        key, key_init = jax.random.split(key)
        if chain_method == "vectorized" and not progress_bar:
            settings = dict(
                num_warmup=num_warmup,
                num_samples=num_samples,
                dense_mass=dense_mass,
                target_accept_prob=target_accept_prob,
                max_tree_depth=max_tree_depth,
            )
            return _run_nuts_program(model, args, kwargs, key, key_init, num_chains, settings, init_metric)
        init_params, inverse_mass = _map_starts(model, args, kwargs, key_init, num_chains, dense_mass, init_metric)
        init_strategy = numpyro.infer.init_to_uniform
    elif not callable(init_strategy):
        raise TypeError(f"infer: init_strategy must be 'map' or a numpyro init strategy, got {init_strategy!r}")
    kernel = NUTS(
        model,
        target_accept_prob=target_accept_prob,
        max_tree_depth=max_tree_depth,
        dense_mass=dense_mass,
        inverse_mass_matrix=inverse_mass,
        init_strategy=init_strategy,
    )
    mcmc = MCMC(
        kernel,
        num_warmup=num_warmup,
        num_samples=num_samples,
        num_chains=num_chains,
        chain_method=chain_method,
        progress_bar=progress_bar,
    )
    if init_params is not None and num_chains == 1:
        init_params = jax.tree_util.tree_map(lambda leaf: leaf[0], init_params)
    mcmc.run(key, *args, extra_fields=tuple(_STATS), init_params=init_params, **kwargs)
    posterior = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    extra = mcmc.get_extra_fields(group_by_chain=True)
    stats = {_STATS[k]: np.asarray(v) for k, v in extra.items()}
    stats["lp"] = -stats["lp"]  # numpyro's potential energy is the negative log density
    return posterior, stats


def _map_starts(model, args, kwargs, key, num_chains, dense_mass, init_metric):
    """Starts near the mode and, for one mass-matrix block (`dense_mass` a bool), the Laplace inverse mass matrix."""
    if init_metric == "laplace":
        return map_starts_and_metric(model, args, kwargs, key, num_chains, dense=dense_mass)
    return map_initial_params(model, args, kwargs, key, num_chains), None


def _run_nuts_program(model, args, kwargs, key, key_init, num_chains, settings, init_metric):
    """Vectorised chains from "map" starts as one compiled program (see `_nuts_program`).

    The program needs only the shapes of the starting points, so XLA compiles it on a
    second thread while the starts are sought. Tracing (NumPyro's effect handlers
    keep a global stack) stays on this thread; XLA's compiler releases the GIL.
    """
    template = unconstrained_template(model, args, kwargs)
    lowered = lower_nuts_program(model, args, kwargs, template, key, num_chains, **settings)
    with ThreadPoolExecutor(max_workers=1) as pool:
        compiling = pool.submit(lowered.compile)
        init_params, inverse_mass = _map_starts(
            model, args, kwargs, key_init, num_chains, settings["dense_mass"], init_metric
        )
        compiled = compiling.result()
    return run_nuts_program(compiled, init_params, key, inverse_mass)


def _run_svi(model, args, kwargs, key, num_samples, **settings):
    key_fit, key_draw = jax.random.split(key)
    latent, diagnostics = run_svi(model, args, kwargs, key_fit, num_samples=num_samples, **settings)
    # Re-run the model on the guide's draws to add its deterministic sites (e.g. "prediction").
    full = Predictive(model, posterior_samples=latent, parallel=True)(key_draw, *args, **kwargs)
    skip = set(_observed_sites(model, args, kwargs)) | _factor_sites(model, args, kwargs)
    posterior = dict(latent)
    for name, value in full.items():
        if name not in skip:
            posterior.setdefault(name, value)
    posterior = {k: np.asarray(v)[None] for k, v in posterior.items()}
    return posterior, diagnostics


def _loss_dataset(diagnostics):
    """SVI's `sample_stats`: the loss per step; the convergence check's statistics in its attrs."""
    import xarray as xr

    loss = diagnostics["loss"]
    attrs = {k: v for k, v in diagnostics.items() if k != "loss"}
    return xr.Dataset({"loss": (("step",), loss)}, coords={"step": np.arange(loss.shape[0])}, attrs=attrs)


def _observed_sites(model, args, kwargs) -> dict[str, np.ndarray]:
    """The observed sample sites of `model(*args, **kwargs)` and their data."""
    if isinstance(model, SimulationModel):
        # Its one observed site; the model fills missing (NaN) entries in, so report the data as given.
        data = args[0] if args else kwargs.get("observations")
        return {} if data is None else {"obs": np.asarray(data, dtype=float)}
    trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(*args, **kwargs)
    return {
        n: np.asarray(s["value"])
        for n, s in trace.items()
        if s["type"] == "sample" and s["is_observed"] and not isinstance(s["fn"], Unit)
    }


def _factor_sites(model, args, kwargs) -> set[str]:
    """The names of `numpyro.factor` statements (e.g. `"simulation_failed"`): log-density terms, not data.

    NumPyro records a factor as an observed sample site with an empty value, so
    `Predictive` and `log_likelihood` return it; it is neither a prediction nor
    an observation's log-likelihood. Found by an abstract trace (no solve runs).
    """
    names: set[str] = set()

    def trace_sites():
        trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(*args, **kwargs)
        names.update(n for n, s in trace.items() if s["type"] == "sample" and isinstance(s["fn"], Unit))
        return 0

    jax.eval_shape(trace_sites)
    return names


def _unflatten(samples, chains, draws):
    return {k: np.asarray(v).reshape((chains, draws) + np.shape(v)[1:]) for k, v in samples.items()}
