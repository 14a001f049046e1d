"""Compartmental epidemic models (Kermack & McKendrick, Proc. R. Soc. A 115 (1927) 700):
SIR and SEIR with frequency-dependent transmission, optionally with a cumulative-incidence
state for fitting case counts."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp

from ._catalogue import scalars
from ._ode import ODE

_LONG_NAMES = {
    "S": "susceptible",
    "E": "exposed (infected, not yet infectious)",
    "I": "infectious",
    "R": "removed (recovered)",
    "C": "cumulative incidence (entries into I)",
}


class _Compartmental(eqx.Module):
    """`flows(y, p) -> (derivatives, new cases)` as a right-hand side, optionally appending the new
    cases as the derivative of a cumulative state `C` (hashable: it is a static field of the ODE)."""

    flows: Callable = eqx.field(static=True)
    incidence: bool = eqx.field(static=True)

    def __call__(self, t, y, p):
        derivatives, cases = self.flows(y, p)
        return jnp.stack([*derivatives, cases] if self.incidence else derivatives, axis=-1)


def _model(name: str, flows: Callable, compartments: tuple[str, ...], params: tuple[str, ...], incidence) -> ODE:
    if not isinstance(incidence, bool):
        raise TypeError(f"{name}: incidence must be True or False, got {incidence!r}")
    names = (*compartments, "C") if incidence else compartments
    return ODE(
        _Compartmental(flows, incidence),
        names=names,
        long_names={n: _LONG_NAMES[n] for n in names},
        param_shapes=scalars(name, *params),
    )


def _sir_flows(y, p):
    s, i, r = y[..., 0], y[..., 1], y[..., 2]
    infection = p["beta"] * s * i / (s + i + r)
    recovery = p["gamma"] * i
    return [-infection, infection - recovery, recovery], infection


def sir(*, incidence: bool = False) -> ODE:
    """The SIR model: `S' = -beta S I / N`, `I' = beta S I / N - gamma I`, `R' = gamma I`.

    `N = S + I + R` is the (conserved) population, computed from the state, so the
    state may be counts or fractions of the population (`N = 1`); it must have
    `N > 0`. Params: a dict of scalars `beta` (transmission rate) and `gamma`
    (recovery rate), both 1/time; the basic reproduction number is
    `R0 = beta / gamma`. State `[S, I, R]`.

    `incidence=True` appends `C`, the cumulative number of new infections
    (`C' = beta S I / N`, start it at 0): `C(t_k) - C(t_{k-1})` is the incidence
    over each output interval, the quantity case counts usually measure. It does
    not enter the other equations.
    """
    return _model("sir", _sir_flows, ("S", "I", "R"), ("beta", "gamma"), incidence)


def _seir_flows(y, p):
    s, e, i, r = y[..., 0], y[..., 1], y[..., 2], y[..., 3]
    infection = p["beta"] * s * i / (s + e + i + r)
    onset = p["sigma"] * e
    recovery = p["gamma"] * i
    return [-infection, infection - onset, onset - recovery, recovery], onset


def seir(*, incidence: bool = False) -> ODE:
    """The SEIR model: SIR with a latent compartment `E`.

    `S' = -beta S I / N`, `E' = beta S I / N - sigma E`, `I' = sigma E - gamma I`,
    `R' = gamma I`, with `N = S + E + I + R` computed from the state (counts or
    fractions, `N > 0`). Params: a dict of scalars `beta` (transmission), `sigma`
    (1 / mean latent period) and `gamma` (1 / mean infectious period), all
    1/time; `R0 = beta / gamma`. State `[S, E, I, R]`.

    `incidence=True` appends `C`, the cumulative number of new infectious cases
    (`C' = sigma E`, entries into `I`; start it at 0), whose differences over the
    output intervals are the incidence that case counts measure.
    """
    return _model("seir", _seir_flows, ("S", "E", "I", "R"), ("beta", "sigma", "gamma"), incidence)
