"""`Corrected`: a model whose right-hand side gets a learned correction, `rhs + net(state)`.

The closure form of a hybrid model (the "universal differential equation" of C. Rackauckas et
al., arXiv:2001.04385, 2020; the learned correction of D. Kochkov et al., PNAS 118 (2021)
e2101784118). For ODEs with the network in `params`, `sciax.ode.ODE` with a hybrid right-hand
side already does it (see `notebooks/universal_differential_equation.ipynb`); this wrapper
adds a correction to any existing model, a grid model included, with the network in the model.
"""

from __future__ import annotations

import equinox as eqx
import jax

from ..._model import AbstractModel


class Corrected(AbstractModel):
    """`rhs(t, y, params) = model.rhs(t, y, params) + net(y)`.

    **Fields:** `model`: any `sciax.AbstractModel`; `net`: an equinox module (or callable
    pytree) mapping the state to a correction of the same shape (state units per time unit),
    e.g. a convolution over a grid state. Train its weights with `sciax.pde.learned.train` and
    `filter_spec=corrected_spec(model)`, or `equinox.partition` by hand. Differentiable in the
    net's weights, `y0` and `params`. The method defaults to `model`'s; explicit stable steps
    are not adjusted for the correction. `TypeError` at construction for a model that is not a
    `sciax.AbstractModel`; `ValueError` at trace time if `net` does not return the state's shape."""

    model: AbstractModel
    net: eqx.Module

    def __init__(self, model: AbstractModel, net):
        if not isinstance(model, AbstractModel):
            raise TypeError(f"Corrected: model must be a sciax.AbstractModel, got {type(model).__name__}")
        if not callable(net):
            raise TypeError(f"Corrected: net must be a callable module, got {type(net).__name__}")
        self.model, self.net = model, net

    def rhs(self, t, y, params):
        correction = self.net(y)
        shapes = (jax.tree_util.tree_map(lambda a: a.shape, y), jax.tree_util.tree_map(lambda a: a.shape, correction))
        if shapes[0] != shapes[1]:
            raise ValueError(f"Corrected: net must return the state's shape {shapes[0]}, got {shapes[1]}")
        return jax.tree_util.tree_map(lambda a, b: a + b, self.model.rhs(t, y, params), correction)

    def default_method(self):
        return self.model.default_method()

    def check_state(self, y, what: str = "the state") -> None:
        self.model.check_state(y, what)

    def check_params(self, params) -> None:
        self.model.check_params(params)

    def labels(self):
        return self.model.labels()

    def initial_state(self, y0, **hidden):
        return self.model.initial_state(y0, **hidden)

    def observed(self, y):
        return self.model.observed(y)


def corrected_spec(model: Corrected):
    """The `equinox.partition` filter selecting the inexact arrays of `model.net` only."""
    frozen = jax.tree_util.tree_map(lambda _: False, model)
    return eqx.tree_at(lambda m: m.net, frozen, jax.tree_util.tree_map(eqx.is_inexact_array, model.net))
