"""Stochastic variational inference for `infer(method="svi")`, with a convergence check of the fitted guide.

A variational fit has no chains to compare, so nothing like r-hat flags a run
that stopped early: the draws of an unconverged guide look as clean as those of
a converged one. The check here asks whether the ELBO is stationary where the
optimiser stopped, in units that do not depend on the learning rate or its
schedule (a decayed step size also makes the loss curve flat):

- **location**: `L^T E_q[d log p(x, z) / d z]` over the unconstrained latent
  coordinates `z`, with `L` the Cholesky factor of the guide's covariance
  (`diag(s_j)` for a mean-field guide). Shifting the guide by `L delta` changes
  the ELBO by this dotted with `delta` (the entropy is shift-invariant), so it is
  zero at the optimum of any guide with a free location; for a Gaussian
  posterior and a mean-field guide it is the error of the guide's mean in guide
  standard deviations, and `location^2 / 2` nats of ELBO are left on the table.
- **scale**: `1 + E_q[(z_j - m_j) d log p / d z_j]`, the derivative of the ELBO
  when the guide's spread in `z_j` is scaled by `exp(tau)`; zero at the optimum
  of any guide with a free scale per coordinate, `1 - s_j^2 / sigma_j^2` for a
  Gaussian posterior of standard deviation `sigma_j`.

Both are Monte Carlo averages over the draws from the guide (their standard
errors come from the same draws); both are Stein identities, so they vanish
when the guide equals the posterior (Gorham & Mackey, NeurIPS 2015). A run is
flagged when either exceeds its tolerance by more than three standard errors,
or when the loss is still falling: the mean loss over the last 10% of steps is
below that of the previous 10% by more than three standard errors of the
difference and by more than `LOSS_TOLERANCE` nats.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.infer.autoguide as autoguide
from numpyro.distributions.transforms import biject_to
from numpyro.infer import SVI, Predictive, Trace_ELBO, init_to_value
from numpyro.infer.util import potential_energy

from ._map_init import map_initial_params
from ._simulation_model import SimulationModel

#: Largest accepted `|location|` statistic: the guide's mean within one of its own standard deviations of the
#: optimum, i.e. at most 0.5 nats of ELBO to gain by shifting it (as `LOSS_TOLERANCE`). Adam's steps at the end of a
#: fit leave the location ~0.3-0.7 guide sd off its optimum on the decay and Lotka-Volterra examples; a run stopped
#: far from the optimum (wrong rates, e.g. an SEIR fit stopped early) shows several.
LOCATION_TOLERANCE = 1.0
#: Largest accepted `|scale|` statistic: the guide's variance off by 20%.
SCALE_TOLERANCE = 0.2
#: Largest accepted fall of the mean loss between the last two windows of 10% of the steps, in nats.
LOSS_TOLERANCE = 0.5
#: A statistic counts only when it exceeds its tolerance by this many Monte Carlo standard errors.
NUM_STANDARD_ERRORS = 3.0
#: The learning rate decays exponentially to this fraction of `learning_rate` over `num_steps`.
FINAL_LEARNING_RATE_FRACTION = 0.1


class ConvergenceWarning(UserWarning):
    """An inference run whose diagnostics say its answer cannot be trusted yet (see `sciax.prob.infer`)."""


class ConvergenceError(RuntimeError):
    """Raised instead of `ConvergenceWarning` by `infer(..., on_nonconvergence="raise")`."""


def run_svi(
    model: Callable,
    args: tuple,
    kwargs: dict,
    key,
    *,
    guide: Any,
    init_strategy: Any,
    num_steps: int,
    learning_rate: float | Callable,
    num_samples: int,
    progress_bar: bool,
    on_nonconvergence: str,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Fit the guide, draw `num_samples` from it and check convergence.

    Returns the draws of the latent sites (constrained, leading axis `num_samples`)
    and the diagnostics: `loss` (per step) and the scalar statistics of the check.
    """
    key_init, key_fit, key_draw = jax.random.split(key, 3)
    guide = _make_guide(model, args, kwargs, key_init, guide, init_strategy)
    schedule = learning_rate if callable(learning_rate) else _exponential_decay(float(learning_rate), num_steps)
    svi = SVI(model, guide, numpyro.optim.Adam(schedule), Trace_ELBO())
    fit = svi.run(key_fit, num_steps, *args, progress_bar=progress_bar, **kwargs)
    draws = Predictive(guide, params=fit.params, num_samples=num_samples, parallel=True)(key_draw, *args, **kwargs)
    latent = {k: v for k, v in draws.items() if not k.startswith("_")}
    losses = np.asarray(fit.losses, dtype=float)
    diagnostics = {"loss": losses, **loss_trend(losses), **stationarity(model, args, kwargs, latent)}
    diagnostics["converged"] = int(_converged(diagnostics))
    if not diagnostics["converged"]:
        _report(diagnostics, num_steps, learning_rate, on_nonconvergence)
    return latent, diagnostics


def _make_guide(model, args, kwargs, key, guide, init_strategy):
    if guide is not None and not isinstance(guide, type):
        if init_strategy is not None:
            raise ValueError(
                "infer: init_strategy= sets where a guide class starts; a guide instance was given, which has "
                "its own init_loc_fn: pass the class as guide=, or drop init_strategy="
            )
        return guide
    if init_strategy is None and isinstance(model, SimulationModel):
        init_strategy = "map"
    if init_strategy == "map":
        # Start at the best of several posterior-mode searches (as the NUTS chains do): from the prior's
        # median an ODE fit can sit for many steps in a flat region (no outbreak, no oscillation) or a local mode.
        start = map_initial_params(model, args, kwargs, key, 1)
        supports = _supports(model, args, kwargs)
        init_strategy = init_to_value(values={k: biject_to(supports[k])(v[0]) for k, v in start.items()})
    elif isinstance(init_strategy, str):
        raise ValueError(f"infer: init_strategy must be 'map' or a numpyro init strategy, got {init_strategy!r}")
    elif init_strategy is not None and not callable(init_strategy):
        raise TypeError(f"infer: init_strategy must be 'map' or a numpyro init strategy, got {init_strategy!r}")
    guide_class = autoguide.AutoNormal if guide is None else guide
    return guide_class(model) if init_strategy is None else guide_class(model, init_loc_fn=init_strategy)


def _exponential_decay(learning_rate: float, num_steps: int) -> Callable:
    """Adam's step size: `learning_rate`, decaying exponentially to a tenth of it at `num_steps`.

    The large early steps cross the distance from the start to the optimum; the
    small late ones stop Adam's steady jitter around it, which at a constant step
    size stays of the order of the step size in every unconstrained coordinate.
    """
    rate = np.log(FINAL_LEARNING_RATE_FRACTION) / max(num_steps, 1)
    return lambda step: learning_rate * jnp.exp(rate * step)


def loss_trend(losses: np.ndarray) -> dict[str, float]:
    """The fall of the mean loss from the second-to-last to the last window of 10% of the steps, and its error.

    The standard error treats the steps' losses as independent around a smooth
    trend: their noise variance is half that of successive differences.
    """
    window = len(losses) // 10
    if window < 2:
        return {"loss_change": float("nan"), "loss_change_se": float("nan")}
    last, previous = losses[-window:], losses[-2 * window : -window]
    noise = np.std(np.diff(losses[-2 * window :])) / np.sqrt(2.0)
    return {
        "loss_change": float(np.mean(previous) - np.mean(last)),
        "loss_change_se": float(noise * np.sqrt(2.0 / window)),
    }


def stationarity(model, args, kwargs, latent: dict[str, Any]) -> dict[str, float]:
    """The largest location and scale statistics (see the module docstring) over the latent coordinates.

    Returns them with their Monte Carlo standard errors and the number of draws whose score is not finite.
    """
    supports = _supports(model, args, kwargs)
    unconstrained = {
        name: jax.vmap(biject_to(supports[name]).inv)(jnp.asarray(value))
        for name, value in latent.items()
        if name in supports
    }
    score = _score(model, args, kwargs)(unconstrained)
    z = np.concatenate([np.asarray(v).reshape(v.shape[0], -1) for v in unconstrained.values()], axis=1)
    g = np.concatenate([np.asarray(score[k]).reshape(z.shape[0], -1) for k in unconstrained], axis=1)
    finite = np.all(np.isfinite(g), axis=1) & np.all(np.isfinite(z), axis=1)
    out = {"num_failed_draws": int(np.sum(~finite))}
    z, g = z[finite], g[finite]
    count = z.shape[0]
    spread = z.std(axis=0) if count else np.zeros(z.shape[1])
    varying = spread > 0  # a point-mass guide (AutoDelta) has no spread to check
    if count < 2 or not np.any(varying):
        return {**out, "location": np.nan, "location_se": np.nan, "scale": np.nan, "scale_se": np.nan}
    z, g, spread = z[:, varying], g[:, varying], spread[varying]
    centred = z - z.mean(axis=0)
    # Whitened by the draws' covariance: for a full-rank guide of a correlated posterior, scaling by the
    # marginal sd alone would magnify the gradient along the posterior's narrow directions.
    chol = np.linalg.cholesky(centred.T @ centred / count + 1e-12 * np.diag(spread**2))
    whitened = g @ chol
    location = whitened.mean(axis=0)
    location_se = whitened.std(axis=0) / np.sqrt(count)
    moment = centred * g
    scale = 1.0 + moment.mean(axis=0)
    scale_se = moment.std(axis=0) / np.sqrt(count)
    i, j = (
        np.argmax(np.abs(location) - NUM_STANDARD_ERRORS * location_se),
        np.argmax(np.abs(scale) - NUM_STANDARD_ERRORS * scale_se),
    )
    return {
        **out,
        "location": float(location[i]),
        "location_se": float(location_se[i]),
        "scale": float(scale[j]),
        "scale_se": float(scale_se[j]),
    }


def _converged(d: dict[str, Any]) -> bool:
    if not np.all(np.isfinite(d["loss"])):
        return False
    checks = [
        (d["location"], d["location_se"], LOCATION_TOLERANCE),
        (d["scale"], d["scale_se"], SCALE_TOLERANCE),
    ]
    for value, se, tolerance in checks:
        if np.isfinite(value) and abs(value) - NUM_STANDARD_ERRORS * se > tolerance:
            return False
    change, se = d["loss_change"], d["loss_change_se"]
    return not (np.isfinite(change) and change > max(LOSS_TOLERANCE, NUM_STANDARD_ERRORS * se))


def _report(d: dict[str, Any], num_steps: int, learning_rate, on_nonconvergence: str) -> None:
    message = (
        f"infer(method='svi'): the variational fit has not converged after num_steps={num_steps} "
        f"(learning_rate={learning_rate!r}): "
        f"ELBO gradient in the guide's location {d['location']:.3g} ± {d['location_se']:.2g} per guide sd "
        f"(tolerance {LOCATION_TOLERANCE}), in its scale {d['scale']:.3g} ± {d['scale_se']:.2g} "
        f"(tolerance {SCALE_TOLERANCE}); mean loss fell by {d['loss_change']:.3g} ± {d['loss_change_se']:.2g} nats "
        f"over the last 10% of steps (tolerance {LOSS_TOLERANCE}). The draws do not represent the posterior: "
        "raise num_steps (e.g. 4x), or change learning_rate (smaller if the loss is noisy or NaN, larger if it "
        "falls steadily), or use method='nuts'."
    )
    if on_nonconvergence == "raise":
        raise ConvergenceError(message)
    warnings.warn(message, ConvergenceWarning, stacklevel=5)  # the caller of infer


def _supports(model, args, kwargs) -> dict[str, Any]:
    """The support of every latent sample site (found by an abstract trace: no solve runs)."""
    supports: dict[str, Any] = {}

    def trace_sites():
        trace = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace(*args, **kwargs)
        for name, site in trace.items():
            if site["type"] == "sample" and not site["is_observed"]:
                supports[name] = site["fn"].support
        return 0

    jax.eval_shape(trace_sites)
    return supports


def _score(model, args, kwargs) -> Callable:
    """`d log p(x, z) / d z` in unconstrained coordinates (Jacobian included), vmapped over draws."""
    return jax.jit(jax.vmap(jax.grad(lambda z: -potential_energy(model, args, kwargs, z))))
