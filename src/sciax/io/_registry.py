"""The catalogue a run config may name: models (with their params) and methods.

A fixed mapping from names to constructors, so a config selects code but never
supplies any.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .. import ode, pde
from ..pde import fd, spectral

# Model kinds: how a model is built and which methods integrate it.
ODE, SPECTRAL, FD = "ode", "spectral", "fd"
FD_ORDERS = (2, 4, 6, 8)


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A catalogue model a config can name.

    `build()` (ODE), `build(grid)` (spectral) or `build(grid, bc=..., **options)` (FD)
    returns the model. `params` are required, `optional` maps optional params to
    their defaults, `vectors` are params given as one number per grid axis (e.g. a
    velocity), `positive` the params that must be > 0 (diffusivities). `options` maps
    the extra `[model]` keys a model takes to their
    allowed values (the first is the default). `state` names the components of an
    ODE state, `fields` the fields of a multi-field PDE (stacked along a leading
    axis for spectral models, a dict for FD models); `ndims` the grid dimensions
    the equation allows.
    """

    kind: str
    build: Callable
    params: tuple[str, ...] = ()
    optional: tuple[tuple[str, float], ...] = ()
    vectors: tuple[str, ...] = ()
    positive: tuple[str, ...] = ()
    options: tuple[tuple[str, tuple], ...] = ()
    state: tuple[str, ...] = ()
    fields: tuple[str, ...] | None = None
    ndims: tuple[int, ...] = (1, 2, 3)


_ORDER = (("order", FD_ORDERS),)

MODELS: dict[str, ModelSpec] = {
    "lotka_volterra": ModelSpec(
        ODE, ode.lotka_volterra, ("alpha", "beta", "gamma", "delta"), state=("prey", "predator")
    ),
    "van_der_pol": ModelSpec(ODE, ode.van_der_pol, ("mu",), state=("x", "v")),
    "robertson": ModelSpec(ODE, ode.robertson, ("k1", "k2", "k3"), state=("y1", "y2", "y3")),
    "heat": ModelSpec(SPECTRAL, spectral.heat, ("nu",), positive=("nu",)),
    "burgers": ModelSpec(SPECTRAL, spectral.burgers, ("nu",), positive=("nu",), ndims=(1,)),
    "kuramoto_sivashinsky": ModelSpec(SPECTRAL, spectral.kuramoto_sivashinsky, ndims=(1,)),
    "kdv": ModelSpec(SPECTRAL, spectral.kdv, ndims=(1,)),
    "allen_cahn": ModelSpec(SPECTRAL, spectral.allen_cahn, ("epsilon",)),
    "cahn_hilliard": ModelSpec(SPECTRAL, spectral.cahn_hilliard, ("mobility", "gamma")),
    "swift_hohenberg": ModelSpec(SPECTRAL, spectral.swift_hohenberg, ("r", "kc"), optional=(("g", 0.0),)),
    "gray_scott": ModelSpec(
        SPECTRAL, spectral.gray_scott, ("Du", "Dv", "F", "kappa"), positive=("Du", "Dv"), fields=("u", "v")
    ),
    "navier_stokes_2d": ModelSpec(SPECTRAL, spectral.navier_stokes_2d, ("nu",), optional=(("drag", 0.0),), ndims=(2,)),
    # Finite differences (sciax.pde.fd): any boundary conditions, stencil order 2-8.
    "fd_heat": ModelSpec(FD, fd.heat, ("D",), positive=("D",), options=_ORDER),
    "fd_advection_diffusion": ModelSpec(
        FD,
        fd.advection_diffusion,
        ("D",),
        vectors=("velocity",),
        positive=("D",),
        options=(*_ORDER, ("scheme", ("central", "upwind", "weno5"))),
    ),
    "fd_burgers": ModelSpec(FD, fd.burgers, ("nu",), positive=("nu",), options=_ORDER, ndims=(1,)),
    "fd_gray_scott": ModelSpec(
        FD, fd.gray_scott, ("Du", "Dv", "F", "k"), positive=("Du", "Dv"), options=_ORDER, fields=("u", "v")
    ),
    "fd_fitzhugh_nagumo": ModelSpec(
        FD,
        fd.fitzhugh_nagumo,
        ("Du", "Dv", "epsilon", "a", "b"),
        positive=("Du", "Dv"),
        options=_ORDER,
        fields=("u", "v"),
    ),
}


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """A method a config can name, and how its step is given.

    - `"dt"`: a fixed step, required; passed to the constructor (`dt_option=False`)
      or as the option `dt0` (`dt_option=True`, diffrax fixed-step methods).
    - `"adaptive"`: optional `rtol`, `atol`, `dt0` and `max_steps` options.
    """

    build: Callable
    step: str
    dt_option: bool = False


_ADAPTIVE = {
    name: MethodSpec(getattr(ode, name), "adaptive") for name in ("Tsit5", "Dopri5", "Dopri8", "Kvaerno5", "Rodas5P")
}

# Per model kind, the methods a config may name. FD models are integrated by the method of
# lines: the adaptive sciax.ode methods, or sciax.pde's fixed-step RK4 (CFL-checked) and the
# implicit theta methods. Leapfrog/AcousticWave are left out: a leapfrog run carries two time
# levels but outputs observations, so a chunk could not restart from the stored output.
METHODS: dict[str, dict[str, MethodSpec]] = {
    ODE: {
        **_ADAPTIVE,
        **{name: MethodSpec(getattr(ode, name), "dt", dt_option=True) for name in ("Euler", "Heun", "RK4")},
    },
    SPECTRAL: {name: MethodSpec(getattr(pde, name), "dt") for name in ("ETDRK1", "ETDRK2", "ETDRK4", "IFRK4", "CNAB2")},
    FD: {
        **_ADAPTIVE,
        **{name: MethodSpec(getattr(pde, name), "dt") for name in ("RK4", "BackwardEuler", "CrankNicolson")},
    },
}


def methods_for(kind: str) -> tuple[str, ...]:
    """Names of the methods that integrate models of `kind`."""
    return tuple(METHODS[kind])


# `[grid] bc` names -> boundary condition classes; the optional `bc_value` is the Dirichlet
# value or the Neumann flux.
BOUNDARIES: dict[str, Callable] = {"periodic": pde.Periodic, "dirichlet": pde.Dirichlet, "neumann": pde.Neumann}
