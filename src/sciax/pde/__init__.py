"""Partial differential equations: grids, models and time steppers.

- Geometry: `Grid` (1-3 dims, uniform, no boundary logic).
- Spectral (periodic) models: `SemilinearPDE` (`u_t = L u + N(t, u, params)`, `L`
  diagonal in Fourier space); Fourier operators and the spectral equation catalogue
  in `sciax.pde.spectral`.
- Methods: `ETDRK1`, `ETDRK2`, `ETDRK4` (`method=sciax.pde.ETDRK4(dt=...)`), or
  any `sciax.ode` method by the method of lines.
"""

from . import spectral
from ._etdrk import ETDRK1, ETDRK2, ETDRK4, AbstractETDRK
from ._grid import Grid
from ._semilinear import SemilinearPDE

__all__ = [
    "Grid",
    "SemilinearPDE",
    "AbstractETDRK",
    "ETDRK1",
    "ETDRK2",
    "ETDRK4",
    "spectral",
]
