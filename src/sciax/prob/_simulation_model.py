"""`SimulationModel`: any sciax simulation as an ordinary NumPyro model function."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jaxtyping import Array, ArrayLike, Float

from .. import ode
from .._method import AbstractMethod
from .._model import AbstractModel
from .._simulate import simulate
from ._forward_sensitivity import FORWARD_MAX_INPUTS, count_inputs, forward_sensitivity
from ._likelihood import AbstractLikelihood, as_likelihood
from ._param_usage import used_parameters

_RESERVED = ("y0", "obs", "prediction", "simulation_failed", "sigma", "concentration")


class SimulationModel(eqx.Module):
    """A NumPyro model: priors -> `sciax.simulate` -> observation likelihood.

    Calling it, `model(observations)`, runs the generative story inside NumPyro:

    1. sample each parameter in `priors` (site name = parameter name), merged
       over the fixed values in `params`;
    2. sample the initial state (site `"y0"`) if `y0` is a distribution;
    3. simulate from `t0` and take the observed components at `times`
       (deterministic site `"prediction"`, shape `(T, K)`);
    4. sample the noise per observed component (site `"sigma"` or
       `"concentration"`, shape `(K,)`) and score `observations` (site `"obs"`).

    It is a plain callable, so `numpyro.infer.MCMC(NUTS(model))`,
    `numpyro.infer.Predictive`, handlers (`condition`, `substitute`, `scope`) and
    your own models that call it all work; `sciax.prob.infer` runs it for you.
    Call with `observations=None` to draw synthetic data.

    **Failed simulations.** The solve runs with `throw=False`; a parameter draw
    whose solve fails (blow-up, `max_steps`), or whose prediction leaves the
    likelihood's support (e.g. <= 0 under a log-normal), gets log density `-inf`
    (site `"simulation_failed"`), which NUTS treats as a divergent proposal and
    rejects. It never raises or returns NaN.

    **Missing data.** NaN entries of `observations` are masked out of the
    likelihood (they contribute nothing), so gaps in a table need no special care.

    **Arguments:**

    - `model`: any `sciax.AbstractModel` (ODE, PDE, your own).
    - `times`: 1-D observation times, shape `(T,)`.
    - `priors`: `{parameter name: numpyro distribution}`. Each name must be read by
      the model's right-hand side (checked at construction).
    - `y0`: the initial state (an array, fixed) or a numpyro distribution over it.
    - `likelihood`: `NormalLikelihood(sigma)`, `LogNormalLikelihood(sigma)`,
      `PoissonLikelihood()` or `NegativeBinomialLikelihood(concentration)`.
    - `params`: fixed values of the parameters without a prior (a dict).
    - `observe`: which state components are observed: names (from the model's
      `names=`) or integer indices into the last axis of an array state; or a
      function `ys -> (T, K)` array for other states (e.g. a PDE field). Default:
      every component of a 1-D state.
    - `observed_names`: labels of the `K` observed components (the `observed`
      coordinate of results, and the names in error messages). Default: the
      state's component names; `state_<i>` for index `i` of an unnamed state;
      `observed_<k>` for column `k` of an `observe=` function's output (e.g.
      give `observed_names=["cases"]` for an incidence).
    - `t0`: start time of the simulation; default `times[0]`, i.e. the first
      observation is an observation of the initial state. Must be <= `times[0]`.
    - `sensitivity`: how gradients of the simulation are computed for NUTS/SVI:
      `"forward"` (forward sensitivities: one solve carries `dy/dθ` for every
      sampled scalar, handed to reverse mode by a `jax.custom_vjp`; cheapest for a
      few parameters), `"reverse"` (reverse mode through the solve, with the
      method's `adjoint=`; for many parameters, e.g. a PDE field), or `"auto"`
      (default): forward when at most 32 scalars are sampled (parameters plus the
      initial state) and no `adjoint=` option is given, else reverse. Both give
      the gradient of the same discretised solution.
    - `method`, `**options`: forwarded to `sciax.simulate` (not `throw`). Default
      method: the model's own, except that an ODE whose default is `Tsit5()` gets
      `Tsit5(unroll=None)`: the stages unrolled for states of up to 1024 scalars.
      NUTS runs the solve ~10^5 times from one compiled program, so the unrolled
      step's faster runs outweigh its longer compilation (docs/benchmarks.md,
      "Inference and sensitivity").
    """

    model: AbstractModel
    times: Float[Array, " T"]
    priors: dict[str, dist.Distribution]
    params: dict[str, Any]
    y0: Any
    likelihood: AbstractLikelihood
    t0: float = eqx.field(static=True)
    prepend_t0: bool = eqx.field(static=True)
    observe: tuple[int, ...] | Callable = eqx.field(static=True)
    observed_names: tuple[str, ...] = eqx.field(static=True)
    state_names: tuple[str, ...] | None = eqx.field(static=True)
    method: AbstractMethod | None = eqx.field(static=True)
    options: tuple[tuple[str, Any], ...] = eqx.field(static=True)
    sensitivity: str = eqx.field(static=True)

    def __init__(
        self,
        model: AbstractModel,
        times: ArrayLike,
        *,
        priors: Mapping[str, dist.Distribution],
        y0: ArrayLike | dist.Distribution,
        likelihood: AbstractLikelihood,
        params: Mapping[str, Any] | None = None,
        observe: Sequence[str | int] | Callable | None = None,
        observed_names: Sequence[str] | None = None,
        t0: float | None = None,
        method: AbstractMethod | None = None,
        sensitivity: str = "auto",
        **options: Any,
    ):
        if not isinstance(model, AbstractModel):
            raise TypeError(f"SimulationModel: model must be a sciax.AbstractModel, got {type(model).__name__}")
        self.model = model
        self.times = _check_times(times)
        self.t0 = float(self.times[0]) if t0 is None else float(t0)
        if self.t0 > float(self.times[0]):
            raise ValueError(
                f"SimulationModel: t0={self.t0} is after the first observation time {float(self.times[0])}"
            )
        # Decided here, on concrete values: inside a trace the times are abstract.
        self.prepend_t0 = self.t0 < float(self.times[0])
        self.priors = _check_priors(priors)
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(
                f"SimulationModel: params must be a dict of fixed parameter values, got {type(params).__name__}"
            )
        self.params = dict(params or {})
        if not isinstance(y0, dist.Distribution):
            y0 = jnp.asarray(y0, dtype=jnp.result_type(float))
        self.y0 = y0
        self.likelihood = as_likelihood(likelihood)
        if "throw" in options:
            raise ValueError(
                "SimulationModel: throw= is not an option here; failed solves always give log density -inf"
            )
        self.method = _inference_method(model) if method is None else method
        self.options = tuple(sorted(options.items()))
        self.state_names = model.labels().names
        self.observe, self.observed_names = _resolve_observe(observe, self.state_names)
        self.sensitivity = self._resolve_sensitivity(sensitivity)
        num_observed = self._check_against_model()
        if callable(self.observe):
            # Not "y0", "y1", ...: "y0" is the initial state's site, and a function's output is no state component.
            self.observed_names = tuple(f"observed_{k}" for k in range(num_observed))
        if observed_names is not None:
            self.observed_names = _check_observed_names(observed_names, num_observed)

    # -- the generative story, one step per method so it can be reused piecewise --

    def sample_parameters(self) -> dict[str, Any]:
        """Sample every prior (site name = parameter name), merged over the fixed `params`."""
        values = dict(self.params)
        for name, prior in self.priors.items():
            values[name] = numpyro.sample(name, prior)
        return values

    def sample_initial_state(self) -> Array:
        """The fixed initial state, or a sample from its prior (site `"y0"`)."""
        if isinstance(self.y0, dist.Distribution):
            return numpyro.sample("y0", self.y0)
        return self.y0

    def predict(self, params: Mapping[str, Any], y0: Array) -> tuple[Float[Array, "T K"], Array]:
        """Simulate and return the observed components at `times`, shape `(T, K)`, and whether the solve succeeded.

        Differentiable in `params` and `y0` (by forward or reverse mode, see `sensitivity`).
        """
        return _predict_compiled(self, dict(params), y0)

    def _predict_differentiable(self, params, y0):
        if self.sensitivity == "forward":
            return forward_sensitivity(lambda inputs: self._predict(*inputs), (params, y0))
        return self._predict(params, y0)

    def _predict(self, params, y0):
        ts = jnp.concatenate([jnp.array([self.t0]), self.times]) if self.prepend_t0 else self.times
        options = dict(self.options)
        if self.sensitivity == "forward" and _takes_adjoint(self.model, self.method):
            options["adjoint"] = ode.ForwardMode()
        sol = simulate(self.model, y0, ts, params, method=self.method, throw=False, **options)
        ys = jax.tree_util.tree_map(lambda leaf: leaf[1:], sol.ys) if self.prepend_t0 else sol.ys
        prediction = self.observe(ys) if callable(self.observe) else ys[..., jnp.asarray(self.observe)]
        return prediction, jnp.all(sol.success)

    def __call__(self, observations: ArrayLike | None = None) -> None:
        """Run the model; `observations` (shape `(T, K)`, NaN = missing) or `None` to sample them."""
        if observations is not None:
            observations = self.check_observations(observations)
        values = self.sample_parameters()
        y0 = self.sample_initial_state()
        prediction, success = self.predict(values, y0)
        numpyro.deterministic("prediction", prediction)
        valid = success & self.likelihood.valid_prediction(prediction)
        # A failed draw scores -inf; the stand-in prediction only keeps the
        # likelihood (and its gradient) finite so that the total is -inf, not NaN.
        numpyro.factor("simulation_failed", jnp.where(valid, 0.0, -jnp.inf))
        safe_prediction = jnp.where(valid, prediction, 1.0)
        noise = self.likelihood.sample_noise(len(self.observed_names))
        distribution = self.likelihood.distribution(safe_prediction, noise)
        if observations is None:
            numpyro.sample("obs", distribution)
            return
        observed = ~jnp.isnan(observations)
        filled = jnp.where(observed, observations, self.likelihood.safe_fill())
        numpyro.sample("obs", distribution.mask(observed), obs=filled)

    # -- checks and metadata --

    def _resolve_sensitivity(self, sensitivity: str) -> str:
        if sensitivity not in ("auto", "forward", "reverse"):
            raise ValueError(
                f"SimulationModel: sensitivity must be 'auto', 'forward' or 'reverse', got {sensitivity!r}"
            )
        if sensitivity == "forward" and "adjoint" in dict(self.options):
            raise ValueError(
                "SimulationModel: sensitivity='forward' sets the solver's adjoint itself; drop adjoint= "
                "or use sensitivity='reverse'"
            )
        if sensitivity != "auto":
            return sensitivity
        shapes = [prior.shape() for prior in self.priors.values()]
        if isinstance(self.y0, dist.Distribution):
            shapes.append(self.y0.shape())
        small = count_inputs(shapes) <= FORWARD_MAX_INPUTS
        return "forward" if small and "adjoint" not in dict(self.options) else "reverse"

    def check_observations(self, observations: ArrayLike) -> Array:
        """Validate shape (always) and values (when concrete); NaN entries are allowed (masked)."""
        observations = jnp.asarray(observations, dtype=jnp.result_type(float))
        expected = (self.times.shape[0], len(self.observed_names))
        if observations.shape != expected:
            raise ValueError(
                f"SimulationModel: observations has shape {observations.shape}; expected {expected} = "
                f"(len(times), number of observed components {self.observed_names})"
            )
        if not isinstance(observations, jax.core.Tracer):
            values = np.asarray(observations)
            if np.isinf(values).any():
                index = tuple(int(i) for i in np.argwhere(np.isinf(values))[0])
                raise ValueError(f"SimulationModel: observations{list(index)} is infinite; use NaN for a missing value")
            self.likelihood.check_observations(values)
        return observations

    def site_dims(self) -> tuple[dict[str, tuple[str, ...]], dict[str, Any]]:
        """Dimension names per site and their coordinates, for labelled (ArviZ) output."""
        dims = {"obs": ("time", "observed"), "prediction": ("time", "observed")}
        coords: dict[str, Any] = {"time": np.asarray(self.times), "observed": list(self.observed_names)}
        if self.likelihood.noise_site is not None:
            dims[self.likelihood.noise_site] = ("observed",)
        if isinstance(self.y0, dist.Distribution) and self.state_names is not None:
            if self.y0.shape() == (len(self.state_names),):
                dims["y0"] = ("state",)
                coords["state"] = list(self.state_names)
        return dims, coords

    def _check_against_model(self) -> int:
        """Check priors, `observe` and shapes against the model; return the number of observed components."""
        placeholders = dict(self.params)
        for name, prior in self.priors.items():
            placeholders[name] = jnp.zeros(prior.shape(), dtype=jnp.result_type(float))
        y0 = self.y0
        if isinstance(y0, dist.Distribution):
            y0 = jnp.ones(y0.shape(), dtype=jnp.result_type(float))
        used = used_parameters(self.model, y0, placeholders)
        unused = [name for name in self.priors if name not in used]
        if unused:
            raise ValueError(
                f"SimulationModel: prior {unused[0]!r} matches no parameter of the model (its right-hand "
                f"side never reads params[{unused[0]!r}]); parameters it reads: {sorted(used)}"
            )
        if not callable(self.observe):
            size = jnp.shape(y0)[-1] if jnp.ndim(y0) else 0
            if jnp.ndim(y0) != 1 or max(self.observe) >= size or min(self.observe) < -size:
                raise ValueError(
                    f"SimulationModel: observe={self.observe} does not index the components of a 1-D state of "
                    f"shape {jnp.shape(y0)}; for other states give observe= as a function ys -> (T, K) array"
                )
        prediction, _ = jax.eval_shape(self.predict, placeholders, y0)
        if prediction.ndim != 2 or prediction.shape[0] != self.times.shape[0]:
            raise ValueError(
                f"SimulationModel: observe= gives predictions of shape {prediction.shape}; expected "
                f"({self.times.shape[0]}, K) = (len(times), number of observed components)"
            )
        return prediction.shape[1]


@eqx.filter_jit
def _predict_compiled(model: SimulationModel, params, y0):
    # One compiled program for the whole prediction and its sensitivities: NumPyro
    # runs the model un-jitted in places (HMC's initial gradient, vmapped over
    # chains; tracing the model for its sites), and op by op the solve and its
    # checks cost hundreds of small compilations there (~10 s on Lotka-Volterra).
    return model._predict_differentiable(params, y0)


def _inference_method(model: AbstractModel) -> AbstractMethod | None:
    """The default method for inference: the model's, with Tsit5's stages unrolled for small states."""
    method = model.default_method()
    if type(method) is ode.Tsit5 and method.unroll is False:
        return ode.Tsit5(unroll=None)
    return None


def _takes_adjoint(model: AbstractModel, method: AbstractMethod | None) -> bool:
    """Whether the method that will run has an `adjoint=` option (the diffrax-based ODE methods)."""
    method = model.default_method() if method is None else method
    return "adjoint" in method.options


def _check_times(times) -> Array:
    times = jnp.asarray(times, dtype=jnp.result_type(float))
    if times.ndim != 1 or times.shape[0] < 1:
        raise ValueError(f"SimulationModel: times must be a non-empty 1-D array, got shape {times.shape}")
    if not np.all(np.diff(np.asarray(times)) > 0):
        raise ValueError("SimulationModel: times must be strictly increasing")
    return times


def _check_priors(priors) -> dict[str, dist.Distribution]:
    if not isinstance(priors, Mapping):
        raise TypeError(
            f"SimulationModel: priors must be a dict {{name: numpyro distribution}}, got {type(priors).__name__}"
        )
    for name, prior in priors.items():
        if not isinstance(name, str):
            raise TypeError(f"SimulationModel: prior names must be strings, got {name!r}")
        if name in _RESERVED:
            raise ValueError(f"SimulationModel: {name!r} is a reserved site name; rename the parameter")
        if not isinstance(prior, dist.Distribution):
            raise TypeError(
                f"SimulationModel: priors[{name!r}] must be a numpyro distribution, got {type(prior).__name__}"
            )
    return dict(priors)


def _resolve_observe(observe, state_names) -> tuple[tuple[int, ...] | Callable, tuple[str, ...]]:
    if callable(observe):
        return observe, ()  # names are filled in from the prediction's shape below
    if observe is None:
        if state_names is None:
            raise ValueError(
                "SimulationModel: the model does not name its state components; give observe= as indices "
                "(e.g. observe=[0, 1]) or as a function ys -> (T, K) array"
            )
        return tuple(range(len(state_names))), tuple(state_names)
    if isinstance(observe, (str, int)):
        observe = [observe]
    indices, names = [], []
    for item in observe:
        if isinstance(item, str):
            if state_names is None or item not in state_names:
                raise ValueError(
                    f"SimulationModel: observe= names {item!r}, which is not a state component {state_names}"
                )
            indices.append(state_names.index(item))
        elif isinstance(item, (int, np.integer)):
            indices.append(int(item))
        else:
            raise TypeError(f"SimulationModel: observe= entries must be names or integer indices, got {item!r}")
        in_range = state_names is not None and -len(state_names) <= indices[-1] < len(state_names)
        names.append(state_names[indices[-1]] if in_range else f"state_{indices[-1]}")
    return tuple(indices), tuple(names)


def _check_observed_names(names, num_observed: int) -> tuple[str, ...]:
    names = (names,) if isinstance(names, str) else tuple(names)
    if len(names) != num_observed or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(
            f"SimulationModel: observed_names must be {num_observed} distinct strings (one per observed "
            f"component), got {names!r}"
        )
    return names
