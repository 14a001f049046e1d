"""Partial differential equations: grids, models and time steppers.

- Geometry: `Grid` (1-3 dims, uniform, no boundary logic).
- Spectral (periodic) models: `SemilinearPDE` (`u_t = L u + N(t, u, params)`, `L`
  diagonal in Fourier space; `AbstractSemilinearPDE` the interface the spectral steppers
  step); Fourier operators and the spectral equation catalogue
  in `sciax.pde.spectral`.
- Methods: `ETDRK1`, `ETDRK2`, `ETDRK4` (`method=sciax.pde.ETDRK4(dt=...)`),
  integrating-factor `IFRK4`, IMEX `CNAB2` (all `AbstractSpectralStepper`), or
  any `sciax.ode` method by the method of lines.
- Finite differences: boundary conditions `Periodic`, `Dirichlet`, `Neumann`, `ZeroPadding`,
  `Sponge`, `CPML` (per side; `AbstractHalo`/`BoundaryHalo` fill stencil halos);
  models `AbstractFDModel`, `FDModel`, `AbstractWaveModel`, `AcousticWave` (+ `ricker`);
  `ElasticWave`;
  fixed-step methods `RK4(dt)`, `Leapfrog(dt)`, `StaggeredLeapfrog(dt)` (CFL-checked), implicit
  `BackwardEuler(dt)`, `CrankNicolson(dt)` (Newton–Krylov steps via `sciax.linalg`). Stencils and the FD
  equation catalogue are in `sciax.pde.fd`.

The package is laid out by family on the `sciax.grid` floor: `pde.fd` (finite-difference
models, `RK4`, implicit steppers), `pde.spectral` (`SemilinearPDE`, ETDRK/IFRK4/CNAB2),
`pde.waves` (`AcousticWave`, `Leapfrog`; `ElasticWave`, `StaggeredLeapfrog`), `pde.seismic`
(full-waveform inversion), `pde.fv`
(finite volumes for conservation laws with shocks in 1-D to 3-D: Euler, shallow water,
Burgers; WENO/MUSCL, HLLC, SSP-RK with a CFL step), `pde.learned` (learned finite-volume
reconstructions trained through `simulate`, forced Burgers); every
fixed-step method runs on the driver of `pde/_fixed_step.py` (`AbstractFixedStep` for methods stepping a model's state,
`AbstractSpectralStepper` for Fourier-space steppers). `Grid` and the boundary conditions
are `sciax.grid`'s, re-exported here.
"""

from ..grid import (
    CPML,
    AbstractAbsorbing,
    AbstractBoundary,
    AbstractHalo,
    BoundaryHalo,
    Dirichlet,
    Grid,
    Neumann,
    Outflow,
    Periodic,
    Reflective,
    Sponge,
    ZeroPadding,
)
from . import fd, fv, learned, seismic, spectral, waves
from ._fixed_step import AbstractFixedStep
from .fd._implicit import AbstractTheta, BackwardEuler, CrankNicolson
from .fd._model import AbstractFDModel, FDModel
from .fd._rk4 import RK4
from .spectral._abstract_semilinear import AbstractSemilinearPDE
from .spectral._cnab2 import CNAB2
from .spectral._etdrk import ETDRK1, ETDRK2, ETDRK4, AbstractETDRK
from .spectral._ifrk4 import IFRK4
from .spectral._semilinear import SemilinearPDE
from .spectral._stepper import AbstractSpectralStepper
from .waves import (
    AbstractStaggeredModel,
    AbstractWaveModel,
    AcousticWave,
    ElasticWave,
    Leapfrog,
    StaggeredLeapfrog,
    ricker,
)

__all__ = [
    "Grid",
    "SemilinearPDE",
    "AbstractSemilinearPDE",
    "AbstractETDRK",
    "ETDRK1",
    "ETDRK2",
    "ETDRK4",
    "IFRK4",
    "CNAB2",
    "AbstractSpectralStepper",
    "spectral",
    "fd",
    "fv",
    "learned",
    "waves",
    "seismic",
    "AbstractBoundary",
    "AbstractAbsorbing",
    "Periodic",
    "Dirichlet",
    "Neumann",
    "Outflow",
    "Reflective",
    "Sponge",
    "ZeroPadding",
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
    "ElasticWave",
    "AbstractStaggeredModel",
    "StaggeredLeapfrog",
    "AbstractTheta",
    "BackwardEuler",
    "CrankNicolson",
]
