"""Classic ODE models, ready to simulate (used by the demo, tests and benchmarks).

Each model declares its params (`ParamSpec`), so `sciax.simulate` names a missing,
misspelt or wrongly shaped parameter before the right-hand side runs.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._param_spec import ParamSpec
from ._ode import ODE


def scalars(model: str, *names: str) -> ParamSpec:
    """The spec of a dict of scalar params `names` for the catalogue model `model`."""
    return ParamSpec.build({name: () for name in names}, f"sciax.ode.{model}()")


def _lotka_volterra(t, y, p):
    prey, predator = y[..., 0], y[..., 1]
    dprey = p["alpha"] * prey - p["beta"] * prey * predator
    dpredator = p["delta"] * prey * predator - p["gamma"] * predator
    return jnp.stack([dprey, dpredator], axis=-1)


def lotka_volterra() -> ODE:
    """Lotka–Volterra predator–prey model (Lotka 1925; Volterra 1926).

    State `y = [prey, predator]` (shape `(2,)`), params a dict of scalars `alpha`
    (prey growth), `beta` (predation), `gamma` (predator death), `delta`
    (predator growth per prey eaten), all in 1/time units.
    """
    return ODE(
        _lotka_volterra,
        names=("prey", "predator"),
        long_names={"prey": "prey population", "predator": "predator population"},
        param_shapes=scalars("lotka_volterra", "alpha", "beta", "gamma", "delta"),
    )


def _robertson(t, y, p):
    k1, k2, k3 = p["k1"], p["k2"], p["k3"]
    y1, y2, y3 = y[0], y[1], y[2]
    return jnp.stack([-k1 * y1 + k3 * y2 * y3, k1 * y1 - k2 * y2**2 - k3 * y2 * y3, k2 * y2**2])


def robertson() -> ODE:
    """Robertson's stiff chemical kinetics (Robertson 1966), 3 species.

    Params: a dict of scalar rates `k1`, `k2`, `k3`; standard values
    `{"k1": 0.04, "k2": 3e7, "k3": 1e4}`, `y0 = [1, 0, 0]`.
    """
    return ODE(_robertson, names=("y1", "y2", "y3"), param_shapes=scalars("robertson", "k1", "k2", "k3"))


def _van_der_pol(t, y, p):
    x, v = y[0], y[1]
    return jnp.stack([v, p["mu"] * (1 - x**2) * v - x])


def van_der_pol() -> ODE:
    """Van der Pol oscillator `x'' = mu (1 - x^2) x' - x`, state `[x, x']`, params
    `{"mu": scalar}`; stiff for large `mu`."""
    return ODE(_van_der_pol, names=("x", "v"), param_shapes=scalars("van_der_pol", "mu"))


def _lorenz(t, y, p):
    x, y_, z = y[..., 0], y[..., 1], y[..., 2]
    return jnp.stack([p["sigma"] * (y_ - x), x * (p["rho"] - z) - y_, x * y_ - p["beta"] * z], axis=-1)


def lorenz() -> ODE:
    """The Lorenz (1963) system: `x' = sigma (y - x)`, `y' = x (rho - z) - y`, `z' = x y - beta z`.

    State `[x, y, z]` (shape `(3,)`), params a dict of scalars `sigma`, `rho`,
    `beta`; Lorenz's chaotic values are `{"sigma": 10, "rho": 28, "beta": 8/3}`
    (E. N. Lorenz, J. Atmos. Sci. 20 (1963) 130). Chaotic: nearby trajectories
    separate like `exp(0.9 t)`, so pointwise accuracy is lost after `t ~ 30`
    even at `rtol = 1e-12`.
    """
    return ODE(_lorenz, names=("x", "y", "z"), param_shapes=scalars("lorenz", "sigma", "rho", "beta"))
