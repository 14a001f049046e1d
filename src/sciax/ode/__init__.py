"""Ordinary differential equations: the `ODE` model and methods over diffrax.

Methods (pass one as `sciax.simulate(..., method=...)`):

- non-stiff, adaptive: `Tsit5` (default), `Dopri5`, `Dopri8`;
- fixed step (`dt0=`): `Euler`, `Heun`, `RK4`;
- stiff (implicit): `ImplicitEuler`, `Kvaerno3`, `Kvaerno4`, `Kvaerno5`;
- IMEX (needs `ODE(explicit=..., implicit=...)`): `KenCarp3`, `KenCarp4`, `KenCarp5`.

Adjoints (`adjoint=`), re-exported from diffrax:

- `RecursiveCheckpointAdjoint()` (default): reverse mode (`jax.grad`) by
  discretise-then-optimise with checkpointing; exact gradients of the computed
  solution, memory O(log steps) checkpoints. The right choice almost always.
- `BacksolveAdjoint()`: solves the adjoint ODE backwards; O(1) memory but
  gradients only approximate the discrete ones and it can be unstable for
  dissipative or chaotic systems. For very long solves where memory binds.
- `ForwardMode()`: forward-mode autodiff (`jax.jvp`, `jax.jacfwd`); cheapest when
  there are fewer inputs than outputs (sensitivities to a few parameters or
  initial conditions). Required for forward mode.
"""

from diffrax import BacksolveAdjoint, ForwardMode, RecursiveCheckpointAdjoint

from ._catalogue import lotka_volterra, robertson, van_der_pol
from ._diffrax_method import AbstractDiffraxMethod
from ._explicit import RK4, Dopri5, Dopri8, Euler, Heun, Tsit5
from ._imex import KenCarp3, KenCarp4, KenCarp5
from ._implicit import ImplicitEuler, Kvaerno3, Kvaerno4, Kvaerno5
from ._ode import ODE

__all__ = [
    "ODE",
    "AbstractDiffraxMethod",
    "Euler",
    "Heun",
    "RK4",
    "Tsit5",
    "Dopri5",
    "Dopri8",
    "ImplicitEuler",
    "Kvaerno3",
    "Kvaerno4",
    "Kvaerno5",
    "KenCarp3",
    "KenCarp4",
    "KenCarp5",
    "RecursiveCheckpointAdjoint",
    "BacksolveAdjoint",
    "ForwardMode",
    "lotka_volterra",
    "robertson",
    "van_der_pol",
]
