"""Partial differential equations: grids, models and time steppers.

- Geometry: `Grid` (1-3 dims, uniform, no boundary logic).
- Spectral (periodic) models: `SemilinearPDE` (`u_t = L u + N(t, u, params)`, `L`
  diagonal in Fourier space); Fourier operators and the spectral equation catalogue
  in `sciax.pde.spectral`.
- Methods: `ETDRK1`, `ETDRK2`, `ETDRK4` (`method=sciax.pde.ETDRK4(dt=...)`),
  integrating-factor `IFRK4`, IMEX `CNAB2` (all `AbstractSpectralStepper`), or
  any `sciax.ode` method by the method of lines.
- Finite differences: boundary conditions `Periodic`, `Dirichlet`, `Neumann`,
  `Sponge`, `CPML` (per side; `AbstractHalo`/`BoundaryHalo` fill stencil halos);
  models `AbstractFDModel`, `FDModel`, `AbstractWaveModel`, `AcousticWave` (+ `ricker`);
  fixed-step methods `RK4(dt)`, `Leapfrog(dt)` (CFL-checked), implicit
  `BackwardEuler(dt)`, `CrankNicolson(dt)` (Newton–Krylov steps via `sciax.linalg`). Stencils and the FD
  equation catalogue are in `sciax.pde.fd`.
"""

from . import fd, spectral
from ._acoustic import AcousticWave, ricker
from ._cnab2 import CNAB2
from ._etdrk import ETDRK1, ETDRK2, ETDRK4, AbstractETDRK
from ._fd_boundary import (
    CPML,
    AbstractAbsorbing,
    AbstractBoundary,
    AbstractHalo,
    BoundaryHalo,
    Dirichlet,
    Neumann,
    Periodic,
    Sponge,
)
from ._fd_model import AbstractFDModel, FDModel
from ._fd_rk4 import RK4
from ._fixed_step import AbstractFixedStep
from ._grid import Grid
from ._ifrk4 import IFRK4
from ._implicit_steppers import AbstractTheta, BackwardEuler, CrankNicolson
from ._leapfrog import AbstractWaveModel, Leapfrog
from ._semilinear import SemilinearPDE
from ._spectral_stepper import AbstractSpectralStepper

__all__ = [
    "Grid",
    "SemilinearPDE",
    "AbstractETDRK",
    "ETDRK1",
    "ETDRK2",
    "ETDRK4",
    "IFRK4",
    "CNAB2",
    "AbstractSpectralStepper",
    "spectral",
    "fd",
    "AbstractBoundary",
    "AbstractAbsorbing",
    "Periodic",
    "Dirichlet",
    "Neumann",
    "Sponge",
    "CPML",
    "AbstractHalo",
    "BoundaryHalo",
    "AbstractFDModel",
    "FDModel",
    "AbstractWaveModel",
    "AcousticWave",
    "ricker",
    "AbstractFixedStep",
    "RK4",
    "Leapfrog",
    "AbstractTheta",
    "BackwardEuler",
    "CrankNicolson",
]
