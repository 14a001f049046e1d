"""`AbstractNumericalFlux`: the flux through a face from the two states beside it (an approximate
Riemann solver), and `Rusanov`, the local Lax-Friedrichs flux."""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float, PyTree


def davis_speeds(model, left, right, params):
    """Davis's bounds on the slowest and fastest signal speeds of the Riemann problem at each face:
    `min` and `max` of the characteristic speeds of both states (Toro, eq. 10.48)."""
    low_l, high_l = model.wave_speeds(left, params)
    low_r, high_r = model.wave_speeds(right, params)
    return jnp.minimum(low_l, low_r), jnp.maximum(high_l, high_r)


class AbstractNumericalFlux(eqx.Module):
    """A numerical flux `F(left, right)` for a finite-volume model.

    `left`, `right`: states at the faces, shape `(fields, faces)` (the left one from the cell
    before the face); returns the flux through each face, the same shape. Consistent:
    `F(u, u) = f(u)`, the model's physical flux. Differentiable.
    """

    def check_model(self, model) -> None:
        """`TypeError` unless this flux can serve `model` (default: any model)."""

    @abc.abstractmethod
    def __call__(
        self, model, left: Float[Array, "fields faces"], right: Float[Array, "fields faces"], params: PyTree
    ) -> Float[Array, "fields faces"]:
        """The flux through each face."""


class Rusanov(AbstractNumericalFlux):
    """Rusanov's (local Lax-Friedrichs) flux `(f(l) + f(r)) / 2 - s (r - l) / 2`, with `s` the
    largest characteristic speed in modulus of either state. The most dissipative, for any model
    (Toro, section 10.5.1)."""

    def __call__(self, model, left, right, params):
        low, high = davis_speeds(model, left, right, params)
        s = jnp.maximum(jnp.abs(low), jnp.abs(high))
        return 0.5 * (model.flux(left, params) + model.flux(right, params)) - 0.5 * s * (right - left)
