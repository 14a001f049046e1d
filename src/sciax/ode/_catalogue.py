"""Classic ODE models, ready to simulate (used by the demo, tests and benchmarks)."""

from __future__ import annotations

import jax.numpy as jnp

from ._ode import ODE


def _lotka_volterra(t, y, p):
    prey, predator = y[..., 0], y[..., 1]
    dprey = p["alpha"] * prey - p["beta"] * prey * predator
    dpredator = p["delta"] * prey * predator - p["gamma"] * predator
    return jnp.stack([dprey, dpredator], axis=-1)


def lotka_volterra() -> ODE:
    """Lotka–Volterra predator–prey model (Lotka 1925; Volterra 1926).

    State `y = [prey, predator]` (shape `(2,)`), params a dict with `alpha`
    (prey growth), `beta` (predation), `gamma` (predator death), `delta`
    (predator growth per prey eaten), all in 1/time units.
    """
    return ODE(
        _lotka_volterra,
        names=("prey", "predator"),
        long_names={"prey": "prey population", "predator": "predator population"},
    )


def _robertson(t, y, p):
    k1, k2, k3 = p["k1"], p["k2"], p["k3"]
    y1, y2, y3 = y[0], y[1], y[2]
    return jnp.stack([-k1 * y1 + k3 * y2 * y3, k1 * y1 - k2 * y2**2 - k3 * y2 * y3, k2 * y2**2])


def robertson() -> ODE:
    """Robertson's stiff chemical kinetics (Robertson 1966), 3 species.

    Standard rates: `{"k1": 0.04, "k2": 3e7, "k3": 1e4}`, `y0 = [1, 0, 0]`.
    """
    return ODE(_robertson, names=("y1", "y2", "y3"))


def _van_der_pol(t, y, p):
    x, v = y[0], y[1]
    return jnp.stack([v, p["mu"] * (1 - x**2) * v - x])


def van_der_pol() -> ODE:
    """Van der Pol oscillator `x'' = mu (1 - x^2) x' - x`, state `[x, x']`; stiff for large `mu`."""
    return ODE(_van_der_pol, names=("x", "v"))
