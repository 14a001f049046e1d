"""Probabilistic models: Bayesian inference around any simulation, and sensitivity analysis.

Inference (over NumPyro):

- `SimulationModel(model, times, priors=..., y0=..., likelihood=...)`: any sciax
  simulation as an ordinary NumPyro model function;
- likelihoods `NormalLikelihood`, `LogNormalLikelihood`, `PoissonLikelihood`,
  `NegativeBinomialLikelihood` (noise per observed component);
- `infer(model, data, method="nuts" | "svi")`: labelled ArviZ results;
  `summary(result)`: r_hat, bulk ESS and divergences; `map_initial_params`:
  chain starts near the posterior mode (the default for a `SimulationModel`),
  `map_starts_and_metric`: those starts and the Laplace inverse mass matrix
  that NUTS's warmup starts from;
- `least_squares(model, y0, ts, data, params0)`: a Levenberg–Marquardt point fit
  with Gauss–Newton standard errors, before (or instead of) Bayes;
- `load_lynx_hare()`: the Hudson's Bay Company lynx-hare table.

Sensitivity analysis (model evaluations vmapped and chunked):

- `local_sensitivity(model, y0, ts, params)`: `dy(t)/dp` through the solve;
- `sobol_indices(fn, bounds)`: first-order and total Sobol indices with
  bootstrap intervals, time-resolved for trajectory outputs (chart:
  `sciax.plot.sobol_bars`);
- `morris(fn, bounds)`: elementary effects (`mu`, `mu_star`, `sigma`).
"""

from ._data import load_lynx_hare
from ._infer import infer
from ._least_squares import LeastSquaresResult, least_squares
from ._likelihood import (
    AbstractLikelihood,
    LogNormalLikelihood,
    NegativeBinomialLikelihood,
    NormalLikelihood,
    PoissonLikelihood,
)
from ._local import local_sensitivity
from ._map_init import map_initial_params, map_starts_and_metric
from ._morris import morris
from ._saltelli import saltelli_design
from ._simulation_model import SimulationModel
from ._sobol import sobol_indices
from ._summary import summary
from ._svi import ConvergenceError, ConvergenceWarning

__all__ = [
    "SimulationModel",
    "AbstractLikelihood",
    "NormalLikelihood",
    "LogNormalLikelihood",
    "PoissonLikelihood",
    "NegativeBinomialLikelihood",
    "infer",
    "least_squares",
    "LeastSquaresResult",
    "map_initial_params",
    "map_starts_and_metric",
    "summary",
    "ConvergenceWarning",
    "ConvergenceError",
    "load_lynx_hare",
    "local_sensitivity",
    "sobol_indices",
    "saltelli_design",
    "morris",
]


def __getattr__(name: str):
    # `plot_sobol`: `sciax.plot.sobol_bars` for code that calls the chart from prob (docs/prob.md),
    # resolved on first use so that importing prob never imports plot, a floor above it.
    if name == "plot_sobol":
        from ..plot import sobol_bars

        return sobol_bars
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
