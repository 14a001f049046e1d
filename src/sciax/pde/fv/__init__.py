"""Finite volumes for conservation laws with shocks (`sciax.pde.fv`).

- Models (`AbstractFVModel`, dimension by dimension on 1-, 2- and 3-D grids): `Advection` and
  `Burgers` (1-D), `Euler` (1-D, 2-D and 3-D, ideal gas, `gamma` a parameter;
  `euler_conserved`/`euler_primitive`), `ShallowWater` (1-D and 2-D, bathymetry, well-balanced by hydrostatic
  reconstruction, dry states). Boundary conditions per side: `Periodic`, `Outflow`,
  `Reflective` (from `sciax.grid`).
- Reconstructions (`AbstractReconstruction`): `PiecewiseConstant`, `MUSCL` (minmod, van Leer,
  MC), `WENO5JS`, `WENO5Z`; component-wise, or characteristic-wise for `Euler(characteristic=True)`.
- Numerical fluxes (`AbstractNumericalFlux`): `Rusanov`, `HLL`, `HLLC` and `Roe` (with Harten and
  Hyman's entropy fix), the last two for Euler.
- Several dimensions: the flux differences of each axis summed; the face flux at the face centre
  (default) or averaged over Gauss nodes across the face (`Euler(face_quadrature=3)`, fifth order
  with WENO5 on smooth flows). `sciax.parallel.shard` runs these models over a device mesh.
- Time stepping: `SSPRK2`, `SSPRK3` (`method=sciax.pde.fv.SSPRK3(cfl=0.5)`), the step from the CFL
  condition chosen inside `jit` at every step.
- `exact_riemann_euler`: Toro's exact Riemann solver for the Euler equations.
"""

from ...grid import Outflow, Periodic, Reflective
from ._advection import Advection
from ._burgers import Burgers
from ._euler import Euler, euler_conserved, euler_primitive
from ._exact_riemann import exact_riemann_euler
from ._hll import HLL
from ._hllc import HLLC
from ._model import AbstractFVModel
from ._muscl import MUSCL
from ._numerical_flux import AbstractNumericalFlux, Rusanov
from ._reconstruction import AbstractReconstruction, PiecewiseConstant
from ._roe import Roe
from ._shallow_water import ShallowWater
from ._ssprk import SSPRK2, SSPRK3, AbstractSSPRK
from ._weno import WENO5JS, WENO5Z, AbstractWENO5

__all__ = [
    "AbstractFVModel",
    "Advection",
    "Burgers",
    "Euler",
    "euler_conserved",
    "euler_primitive",
    "ShallowWater",
    "Periodic",
    "Outflow",
    "Reflective",
    "AbstractReconstruction",
    "PiecewiseConstant",
    "MUSCL",
    "AbstractWENO5",
    "WENO5JS",
    "WENO5Z",
    "AbstractNumericalFlux",
    "Rusanov",
    "HLL",
    "HLLC",
    "Roe",
    "AbstractSSPRK",
    "SSPRK2",
    "SSPRK3",
    "exact_riemann_euler",
]
