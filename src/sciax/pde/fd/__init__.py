"""Finite-difference operators and equations (`sciax.pde.fd`).

- Stencils (orders 2, 4, 6, 8 unless stated; each takes `bc=` boundary conditions
  or an `AbstractHalo`, and `t=` for time-dependent boundary values):
  `derivative`, `second_derivative`, `gradient`, `divergence`, `laplacian`,
  `diffusion` (`div(a grad u)`), `staggered_derivative` (half points),
  `upwind` (order 1), `weno5` (order 5).
- Equations (each an `sciax.pde.FDModel`): `heat`, `advection_diffusion`,
  `burgers`, `gray_scott`, `fitzhugh_nagumo`. The acoustic wave equation is
  `sciax.pde.AcousticWave`.

Step them with `sciax.pde.RK4(dt)` (CFL-checked) or any `sciax.ode` method.
"""

from ...grid.stencils import (
    ORDERS,
    derivative,
    diffusion,
    divergence,
    gradient,
    laplacian,
    second_derivative,
    staggered_derivative,
)
from ._advection import upwind, weno5
from ._advection_diffusion import advection_diffusion
from ._burgers import burgers
from ._fitzhugh_nagumo import fitzhugh_nagumo
from ._gray_scott import gray_scott
from ._heat import heat

__all__ = [
    "ORDERS",
    "derivative",
    "second_derivative",
    "gradient",
    "divergence",
    "laplacian",
    "diffusion",
    "staggered_derivative",
    "upwind",
    "weno5",
    "heat",
    "advection_diffusion",
    "burgers",
    "gray_scott",
    "fitzhugh_nagumo",
]
