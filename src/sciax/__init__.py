"""sciax: a JAX SDK for scientific computing.

`sciax.simulate(model, y0, ts, params, method=...)` runs any model (ODE, PDE,
your own `AbstractModel`) and returns a `Solution`; everything is an equinox
Module, so it composes with `jax.jit`, `jax.vmap` and `jax.grad`.
"""

from . import grid, io, linalg, ode, parallel, pde, plot, prob
from ._labels import Labels
from ._method import AbstractMethod
from ._model import AbstractModel
from ._simulate import compiler_options, simulate
from ._solution import Solution

__version__ = "0.1.0"

__all__ = [
    "simulate",
    "compiler_options",
    "Solution",
    "AbstractModel",
    "AbstractMethod",
    "Labels",
    "grid",
    "ode",
    "pde",
    "linalg",
    "prob",
    "parallel",
    "io",
    "plot",
]
