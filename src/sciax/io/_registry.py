"""The catalogue a run config may name: models (with their params) and methods.

A fixed mapping from names to constructors, so a config selects code but never
supplies any.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .. import ode, pde
from ..pde import spectral

ODE, SPECTRAL = "ode", "spectral"


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A catalogue model a config can name.

    `build(grid)` (spectral) or `build()` (ODE) returns the model; `params` are
    required, `optional` maps optional params to their defaults; `state` names
    the components of an ODE state, `fields` the fields of a multi-field PDE;
    `ndims` the grid dimensions the equation allows.
    """

    kind: str
    build: Callable
    params: tuple[str, ...] = ()
    optional: tuple[tuple[str, float], ...] = ()
    state: tuple[str, ...] = ()
    fields: tuple[str, ...] | None = None
    ndims: tuple[int, ...] = (1, 2, 3)


MODELS: dict[str, ModelSpec] = {
    "lotka_volterra": ModelSpec(ODE, ode.lotka_volterra, ("alpha", "beta", "gamma", "delta"), state=("prey", "predator")),
    "van_der_pol": ModelSpec(ODE, ode.van_der_pol, ("mu",), state=("x", "v")),
    "robertson": ModelSpec(ODE, ode.robertson, ("k1", "k2", "k3"), state=("y1", "y2", "y3")),
    "heat": ModelSpec(SPECTRAL, spectral.heat, ("nu",)),
    "burgers": ModelSpec(SPECTRAL, spectral.burgers, ("nu",), ndims=(1,)),
    "kuramoto_sivashinsky": ModelSpec(SPECTRAL, spectral.kuramoto_sivashinsky, ndims=(1,)),
    "kdv": ModelSpec(SPECTRAL, spectral.kdv, ndims=(1,)),
    "allen_cahn": ModelSpec(SPECTRAL, spectral.allen_cahn, ("epsilon",)),
    "cahn_hilliard": ModelSpec(SPECTRAL, spectral.cahn_hilliard, ("mobility", "gamma")),
    "swift_hohenberg": ModelSpec(SPECTRAL, spectral.swift_hohenberg, ("r", "kc"), optional=(("g", 0.0),)),
    "gray_scott": ModelSpec(SPECTRAL, spectral.gray_scott, ("Du", "Dv", "F", "kappa"), fields=("u", "v")),
    "navier_stokes_2d": ModelSpec(SPECTRAL, spectral.navier_stokes_2d, ("nu",), optional=(("drag", 0.0),), ndims=(2,)),
}


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """A method a config can name: for which model kind, and how its step is given.

    - `"dt"`: a fixed step, required; passed to the constructor (`dt_option=False`)
      or as the option `dt0` (`dt_option=True`, diffrax fixed-step methods).
    - `"adaptive"`: optional `rtol`, `atol`, `dt0` and `max_steps` options.
    """

    kind: str
    build: Callable
    step: str
    dt_option: bool = False


METHODS: dict[str, MethodSpec] = {
    **{name: MethodSpec(ODE, getattr(ode, name), "adaptive") for name in ("Tsit5", "Dopri5", "Dopri8", "Kvaerno5", "Rodas5P")},
    **{name: MethodSpec(ODE, getattr(ode, name), "dt", dt_option=True) for name in ("Euler", "Heun", "RK4")},
    **{name: MethodSpec(SPECTRAL, getattr(pde, name), "dt") for name in ("ETDRK1", "ETDRK2", "ETDRK4", "IFRK4", "CNAB2")},
}


def methods_for(kind: str) -> tuple[str, ...]:
    """Names of the methods that integrate models of `kind`."""
    return tuple(name for name, spec in METHODS.items() if spec.kind == kind)
