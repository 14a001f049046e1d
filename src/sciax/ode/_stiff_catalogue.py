"""Stiff problems from the IVP test set (Mazzia & Magherini, Test Set for IVP Solvers,
release 2.4, 2008, https://archimede.uniba.it/~testset/): HIRES and POLLU, plus
`stiff_problem` returning the standard setup of HIRES, ROBER and POLLU.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._param_spec import ParamSpec
from ._catalogue import robertson, scalars
from ._ode import ODE

# POLLU rate constants k1..k25 (Verwer 1994, as in the test set), in 1/min or 1/(ppm min).
POLLU_RATES = np.array(
    [
        0.35,
        26.6,
        1.23e4,
        8.6e-4,
        8.2e-4,
        1.5e4,
        1.3e-4,
        2.4e4,
        1.65e4,
        9.0e3,
        2.2e-2,
        1.2e4,
        1.88,
        1.63e4,
        4.8e6,
        3.5e-4,
        1.75e-2,
        1.0e8,
        4.44e11,
        1.24e3,
        2.1,
        5.78,
        4.74e-2,
        1.78e3,
        3.12,
    ]
)


def hires_terms(y) -> list:
    """The 8 components of HIRES's right-hand side, as a list (NumPy or JAX inputs)."""
    y1, y2, y3, y4, y5, y6, y7, y8 = (y[i] for i in range(8))
    r = 280.0 * y6 * y8
    return [
        -1.71 * y1 + 0.43 * y2 + 8.32 * y3 + 0.0007,
        1.71 * y1 - 8.75 * y2,
        -10.03 * y3 + 0.43 * y4 + 0.035 * y5,
        8.32 * y2 + 1.71 * y3 - 1.12 * y4,
        -1.745 * y5 + 0.43 * y6 + 0.43 * y7,
        -r + 0.69 * y4 + 1.71 * y5 - 0.43 * y6 + 0.69 * y7,
        r - 1.81 * y7,
        -r + 1.81 * y7,
    ]


def _hires(t, y, p):
    return jnp.stack(hires_terms(y))


def hires() -> ODE:
    """HIRES (Schäfer 1975; Hairer & Wanner II §IV.10): plant physiology, 8 species.

    Standard setup: `y0 = [1, 0, 0, 0, 0, 0, 0, 0.0057]`, `t ∈ [0, 321.8122]`;
    the rate constants are fixed: no params (pass `None`).
    """
    return ODE(_hires, names=tuple(f"y{i}" for i in range(1, 9)), param_shapes=scalars("hires"))  # none


def pollu_terms(y, k) -> list:
    """The 20 components of POLLU's right-hand side, as a list (plain arithmetic, so it
    serves NumPy as well as JAX inputs)."""
    y = [y[i] for i in range(20)]
    r = [
        k[0] * y[0],
        k[1] * y[1] * y[3],
        k[2] * y[4] * y[1],
        k[3] * y[6],
        k[4] * y[6],
        k[5] * y[6] * y[5],
        k[6] * y[8],
        k[7] * y[8] * y[5],
        k[8] * y[10] * y[1],
        k[9] * y[10] * y[0],
        k[10] * y[12],
        k[11] * y[9] * y[1],
        k[12] * y[13],
        k[13] * y[0] * y[5],
        k[14] * y[2],
        k[15] * y[3],
        k[16] * y[3],
        k[17] * y[15],
        k[18] * y[15],
        k[19] * y[16] * y[5],
        k[20] * y[18],
        k[21] * y[18],
        k[22] * y[0] * y[3],
        k[23] * y[18] * y[0],
        k[24] * y[19],
    ]
    r = [None] + r  # 1-based, as in the test set's description
    return [
        -r[1] - r[10] - r[14] - r[23] - r[24] + r[2] + r[3] + r[9] + r[11] + r[12] + r[22] + r[25],
        -r[2] - r[3] - r[9] - r[12] + r[1] + r[21],
        -r[15] + r[1] + r[17] + r[19] + r[22],
        -r[2] - r[16] - r[17] - r[23] + r[15],
        -r[3] + 2.0 * r[4] + r[6] + r[7] + r[13] + r[20],
        -r[6] - r[8] - r[14] - r[20] + r[3] + 2.0 * r[18],
        -r[4] - r[5] - r[6] + r[13],
        r[4] + r[5] + r[6] + r[7],
        -r[7] - r[8],
        -r[12] + r[7] + r[9],
        -r[9] - r[10] + r[8] + r[11],
        r[9],
        -r[11] + r[10],
        -r[13] + r[12],
        r[14],
        -r[18] - r[19] + r[16],
        -r[20],
        r[20],
        -r[21] - r[22] - r[24] + r[23] + r[25],
        -r[25] + r[24],
    ]


def _pollu(t, y, k):
    return jnp.stack(pollu_terms(y, k))


def pollu() -> ODE:
    """POLLU (Verwer 1994): the chemistry of an air-pollution model, 20 species and 25
    reactions. params: one array of the 25 rate constants, shape `(25,)` (`POLLU_RATES`). Standard setup:
    `y0` zero except `y2 = 0.2, y4 = 0.04, y7 = 0.1, y8 = 0.3, y9 = 0.01, y17 = 0.007`,
    `t ∈ [0, 60]` (minutes)."""
    return ODE(
        _pollu,
        names=tuple(f"y{i}" for i in range(1, 21)),
        time_units="min",
        param_shapes=ParamSpec.build((25,), "sciax.ode.pollu()"),
    )


def stiff_problem(name: str) -> tuple[ODE, jnp.ndarray, float, object]:
    """`(model, y0, t_end, params)` of a standard stiff test problem, starting at t = 0.

    `name`: `"hires"` (t_end 321.8122), `"rober"` (Robertson, t_end 1e11) or
    `"pollu"` (t_end 60).
    """
    if name == "hires":
        y0 = jnp.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057])
        return hires(), y0, 321.8122, None
    if name == "rober":
        return robertson(), jnp.array([1.0, 0.0, 0.0]), 1e11, {"k1": 0.04, "k2": 3e7, "k3": 1e4}
    if name == "pollu":
        y0 = np.zeros(20)
        y0[[1, 3, 6, 7, 8, 16]] = [0.2, 0.04, 0.1, 0.3, 0.01, 0.007]
        return pollu(), jnp.asarray(y0), 60.0, jnp.asarray(POLLU_RATES)
    raise ValueError(f"stiff_problem: unknown name {name!r}; expected 'hires', 'rober' or 'pollu'")
