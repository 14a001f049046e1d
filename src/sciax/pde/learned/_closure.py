"""`Corrected`: a model whose right-hand side gets a learned correction, `rhs + net(state)`;
`SpectralCorrected`: the same inside a spectral model's nonlinear term, for the spectral steppers.

The closure form of a hybrid model (the "universal differential equation" of C. Rackauckas et
al., arXiv:2001.04385, 2020; the learned correction of D. Kochkov et al., PNAS 118 (2021)
e2101784118). For ODEs with the network in `params`, `sciax.ode.ODE` with a hybrid right-hand
side already does it (see `notebooks/universal_differential_equation.ipynb`); this wrapper
adds a correction to any existing model, a grid model included, with the network in the model.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from ..._model import AbstractModel
from ...grid import Grid, fourier
from ..spectral._abstract_semilinear import AbstractSemilinearPDE


class _Wraps:
    """The input checks and labels of a wrapper's `model`, shared by both correction wrappers."""

    def check_state(self, y, what: str = "the state") -> None:
        self.model.check_state(y, what)

    def check_params(self, params) -> None:
        self.model.check_params(params)

    def labels(self):
        return self.model.labels()


class Corrected(_Wraps, AbstractModel):
    """`rhs(t, y, params) = model.rhs(t, y, params) + net(y)`.

    **Fields:** `model`: any `sciax.AbstractModel`; `net`: an equinox module (or callable
    pytree) mapping the state to a correction of the same shape (state units per time unit),
    e.g. a convolution over a grid state. Train its weights with `sciax.pde.learned.train` and
    `filter_spec=corrected_spec(model)`, or `equinox.partition` by hand. Differentiable in the
    net's weights, `y0` and `params`. The method defaults to `model`'s; explicit stable steps
    are not adjusted for the correction. `TypeError` at construction for a model that is not a
    `sciax.AbstractModel`; `ValueError` at trace time if `net` does not return the state's shape.

    The spectral steppers (`sciax.pde.ETDRK4`, ...) never call `rhs`, so they refuse this wrapper;
    `SpectralCorrected` puts the correction into a spectral model's nonlinear term instead."""

    model: AbstractModel
    net: eqx.Module

    def __init__(self, model: AbstractModel, net):
        if not isinstance(model, AbstractModel):
            raise TypeError(f"Corrected: model must be a sciax.AbstractModel, got {type(model).__name__}")
        if not callable(net):
            raise TypeError(f"Corrected: net must be a callable module, got {type(net).__name__}")
        self.model, self.net = model, net

    def rhs(self, t, y, params):
        correction = _correction(self.net, y, "Corrected")
        return jax.tree_util.tree_map(lambda a, b: a + b, self.model.rhs(t, y, params), correction)

    def default_method(self):
        return self.model.default_method()

    def initial_state(self, y0, **hidden):
        return self.model.initial_state(y0, **hidden)

    def observed(self, y):
        return self.model.observed(y)


class SpectralCorrected(_Wraps, AbstractSemilinearPDE):
    """A spectral model plus a learned correction, stepped in Fourier space:
    `u_t = L u + N(t, u, params) + net(u)`.

    The correction joins the nonlinear term, `nonlinear_hat = model.nonlinear_hat + rfft(net(u))`,
    so `sciax.pde.ETDRK4`, `IFRK4` and `CNAB2` treat it as they treat `N` (explicitly) while the
    stiff linear part keeps its exact exponential: the hybrid solver of Kochkov et al. (PNAS 118,
    2021), a learned correction inside a spectral solver. The same right-hand side as
    `Corrected(model, net)` (to round-off), which `sciax.ode` methods also integrate.

    **Fields:** `model`: a `sciax.pde.SemilinearPDE` (any `sciax.pde.AbstractSemilinearPDE`);
    `net`: an equinox module mapping the physical state `u` (shape `model.state_shape`, not
    dealiased) to a correction of the same shape (state units per time unit), e.g. a periodic
    convolution. Its spectrum is added whole: `model`'s dealiasing applies to `N` only. Train it with
    `sciax.pde.learned.train` and `filter_spec=corrected_spec(model)`. Differentiable in the net's
    weights, `y0` and `params`. Runs sharded (`sciax.parallel.shard`): the net sees the global state.
    `TypeError` at construction for a model that is not an `AbstractSemilinearPDE`; `ValueError` at
    trace time if `net` does not return the state's shape."""

    model: AbstractSemilinearPDE
    net: eqx.Module

    def __init__(self, model: AbstractSemilinearPDE, net):
        if not isinstance(model, AbstractSemilinearPDE):
            raise TypeError(
                "SpectralCorrected: model must be a sciax.pde.SemilinearPDE (an AbstractSemilinearPDE), got "
                f"{type(model).__name__}; use sciax.pde.learned.Corrected for other models"
            )
        if not callable(net):
            raise TypeError(f"SpectralCorrected: net must be a callable module, got {type(net).__name__}")
        self.model, self.net = model, net

    @property
    def grid(self) -> Grid:
        return self.model.grid

    @property
    def state_shape(self) -> tuple[int, ...]:
        return self.model.state_shape

    def linear_symbol(self, params):
        return self.model.linear_symbol(params)

    def nonlinear_hat(self, t, u_hat, params):
        u = fourier.to_physical(u_hat, self.grid)
        correction = jnp.asarray(_correction(self.net, u, "SpectralCorrected")).astype(u.dtype)
        return self.model.nonlinear_hat(t, u_hat, params) + fourier.to_spectral(correction, self.grid)

    def on_grid(self, grid: Grid) -> SpectralCorrected:
        return SpectralCorrected(self.model.on_grid(grid), self.net)


def _correction(net, y, who: str):
    correction = net(y)
    shapes = (jax.tree_util.tree_map(lambda a: a.shape, y), jax.tree_util.tree_map(lambda a: a.shape, correction))
    if shapes[0] != shapes[1]:
        raise ValueError(f"{who}: net must return the state's shape {shapes[0]}, got {shapes[1]}")
    return correction


def corrected_spec(model: Corrected | SpectralCorrected):
    """The `equinox.partition` filter selecting the inexact arrays of `model.net` only."""
    frozen = jax.tree_util.tree_map(lambda _: False, model)
    return eqx.tree_at(lambda m: m.net, frozen, jax.tree_util.tree_map(eqx.is_inexact_array, model.net))
