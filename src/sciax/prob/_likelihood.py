"""Observation models: how measured data scatter around a simulated trajectory.

Each likelihood turns the noise-free prediction of the observed components,
shape `(T, K)` (`T` observation times, `K` observed components), into a
NumPyro distribution over the observations. Noise is per observed component:
a number, an array of shape `(K,)`, or a NumPyro prior (sampled once per
component, site name `sigma` or `concentration`).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jaxtyping import Array, ArrayLike, Bool, Float


class AbstractLikelihood(eqx.Module):
    """An observation model `observations ~ D(prediction, noise)`.

    Subclasses give `noise_site` (the NumPyro site name of the noise parameter,
    or `None`), `distribution`, and the validity checks of predictions (a
    prediction outside the support, e.g. a negative rate, gives log density
    `-inf`) and of observations (checked eagerly, with an error naming the entry).
    """

    noise_site: ClassVar[str | None] = None

    @abc.abstractmethod
    def distribution(self, prediction: Float[Array, "T K"], noise: Array | None) -> dist.Distribution:
        """The distribution of the observations, batch shape `(T, K)`."""

    def valid_prediction(self, prediction: Float[Array, "T K"]) -> Bool[Array, ""]:
        """Whether `prediction` lies where the distribution is defined."""
        return jnp.all(jnp.isfinite(prediction))

    def check_observations(self, observations: np.ndarray) -> None:
        """Raise `ValueError` naming the first observation outside the support (NaN entries are masked)."""

    def safe_fill(self) -> float:
        """A value inside the support that stands in for masked (NaN) observations."""
        return 1.0

    def sample_noise(self, num_observed: int) -> Array | None:
        """Sample (or return) the noise parameter, shape `(K,)`, inside a NumPyro model."""
        noise = getattr(self, "noise", None)
        if noise is None:
            return None
        if isinstance(noise, dist.Distribution):
            shape = noise.batch_shape + noise.event_shape
            if shape == ():
                noise = noise.expand([num_observed])
            elif shape != (num_observed,):
                raise ValueError(
                    f"{type(self).__name__}: the prior of {self.noise_site} has shape {shape}; "
                    f"expected () or ({num_observed},), one value per observed component"
                )
            return numpyro.sample(self.noise_site, noise.to_event(1) if noise.event_shape == () else noise)
        value = jnp.asarray(noise)
        if value.shape not in ((), (num_observed,)):
            raise ValueError(
                f"{type(self).__name__}: {self.noise_site} has shape {value.shape}; "
                f"expected () or ({num_observed},), one value per observed component"
            )
        return jnp.broadcast_to(value, (num_observed,))


def _check_noise(noise: Any, name: str, owner: str) -> Any:
    if isinstance(noise, dist.Distribution):
        return noise
    value = np.asarray(noise, dtype=float)
    if value.ndim > 1 or not np.all(value > 0):
        raise ValueError(f"{owner}: {name} must be a positive number, a positive (K,) array or a prior, got {noise!r}")
    return noise


def _first_bad(observations: np.ndarray, bad: np.ndarray) -> str:
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"observations[{', '.join(map(str, index))}] = {observations[index]}"


class NormalLikelihood(AbstractLikelihood):
    """Additive Gaussian noise: `observation ~ Normal(prediction, sigma)`."""

    noise: Any
    noise_site: ClassVar[str] = "sigma"

    def __init__(self, sigma: float | ArrayLike | dist.Distribution):
        self.noise = _check_noise(sigma, "sigma", "NormalLikelihood")

    def distribution(self, prediction, noise):
        return dist.Normal(prediction, noise)


class LogNormalLikelihood(AbstractLikelihood):
    """Multiplicative noise: `log(observation) ~ Normal(log(prediction), sigma)`.

    Observations must be > 0; a prediction <= 0 gives log density `-inf`.
    """

    noise: Any
    noise_site: ClassVar[str] = "sigma"

    def __init__(self, sigma: float | ArrayLike | dist.Distribution):
        self.noise = _check_noise(sigma, "sigma", "LogNormalLikelihood")

    def distribution(self, prediction, noise):
        return dist.LogNormal(jnp.log(prediction), noise)

    def valid_prediction(self, prediction):
        return jnp.all(jnp.isfinite(prediction) & (prediction > 0))

    def check_observations(self, observations):
        bad = ~np.isnan(observations) & ~(observations > 0)
        if bad.any():
            raise ValueError(
                f"LogNormalLikelihood: observations must be > 0, but {_first_bad(observations, bad)}; "
                "use NormalLikelihood, or shift the data"
            )


def _check_counts(observations: np.ndarray, owner: str) -> None:
    bad = ~np.isnan(observations) & ((observations < 0) | (observations != np.round(observations)))
    if bad.any():
        raise ValueError(
            f"{owner}: observations must be non-negative integer counts, but {_first_bad(observations, bad)}"
        )


class PoissonLikelihood(AbstractLikelihood):
    """Counts: `observation ~ Poisson(prediction)`; a negative prediction gives log density `-inf`."""

    def distribution(self, prediction, noise):
        return dist.Poisson(prediction)

    def valid_prediction(self, prediction):
        return jnp.all(jnp.isfinite(prediction) & (prediction >= 0))

    def check_observations(self, observations):
        _check_counts(observations, "PoissonLikelihood")

    def safe_fill(self):
        return 0.0


class NegativeBinomialLikelihood(AbstractLikelihood):
    """Over-dispersed counts: mean `prediction`, variance `prediction + prediction**2 / concentration`.

    NumPyro's `NegativeBinomial2(mean, concentration)`; a large concentration
    approaches Poisson.
    """

    noise: Any
    noise_site: ClassVar[str] = "concentration"

    def __init__(self, concentration: float | ArrayLike | dist.Distribution):
        self.noise = _check_noise(concentration, "concentration", "NegativeBinomialLikelihood")

    def distribution(self, prediction, noise):
        return dist.NegativeBinomial2(prediction, noise)

    def valid_prediction(self, prediction):
        return jnp.all(jnp.isfinite(prediction) & (prediction >= 0))

    def check_observations(self, observations):
        _check_counts(observations, "NegativeBinomialLikelihood")

    def safe_fill(self):
        return 0.0


def as_likelihood(likelihood: AbstractLikelihood) -> AbstractLikelihood:
    if isinstance(likelihood, AbstractLikelihood):
        return likelihood
    if isinstance(likelihood, type) and issubclass(likelihood, AbstractLikelihood):
        raise TypeError(f"likelihood must be an instance; write likelihood={likelihood.__name__}(...)")
    raise TypeError(
        "likelihood must be one of sciax.prob.NormalLikelihood(sigma), LogNormalLikelihood(sigma), "
        f"PoissonLikelihood(), NegativeBinomialLikelihood(concentration); got {likelihood!r:.80}"
    )
