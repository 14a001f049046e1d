"""Fourier pseudo-spectral operators and equations on periodic grids (`sciax.pde.spectral`).

- Operators (real-FFT layout, acting on the last `grid.ndim` axes): `wavenumbers`,
  `spectral_shape`, `to_spectral`, `to_physical`, `derivative`, `derivative_symbol`,
  `gradient`, `laplacian`, `laplacian_symbol`, `inverse_laplacian`, `dealias_mask`,
  `nyquist_mask`.
  Vector calculus: `divergence`, `curl` (2-D scalar, 3-D vector).
- Solves: `solve_poisson` (periodic Poisson / screened Poisson, direct by FFT),
  `stream_function`, `velocity_from_vorticity` (2-D), `project_divergence_free` (3-D).
- Equations (each a `sciax.pde.SemilinearPDE`): `heat`, `burgers`,
  `kuramoto_sivashinsky`, `kdv`, `allen_cahn`, `cahn_hilliard`, `swift_hohenberg`,
  `gray_scott` (two fields), `navier_stokes_2d` (vorticity, optional Kolmogorov
  forcing and drag), `navier_stokes_3d` (velocity, Leray projection).

Step them with `sciax.pde.ETDRK4(dt=...)` (or ETDRK1/2, `IFRK4`, the IMEX `CNAB2`),
or by the method of lines with any `sciax.ode` method (the IMEX `KenCarp*` use the
model's `(N, L)` split). Every FFT goes through `to_spectral`/`to_physical`, which
dispatch on the grid type (`forward_transform`/`inverse_transform`: the hook through
which `sciax.parallel` supplies its distributed FFT).
"""

from ...grid import fourier as _operators
from ...grid.fourier import *  # noqa: F403  (the Fourier operators belong to this namespace too)
from ._catalogue import burgers, heat, kdv, kuramoto_sivashinsky
from ._navier_stokes_2d import navier_stokes_2d, stream_function, velocity_from_vorticity
from ._navier_stokes_3d import navier_stokes_3d, project_divergence_free
from ._poisson import solve_poisson
from ._reaction import allen_cahn, cahn_hilliard, gray_scott, swift_hohenberg

__all__ = [
    "heat",
    "burgers",
    "kuramoto_sivashinsky",
    "kdv",
    "allen_cahn",
    "cahn_hilliard",
    "swift_hohenberg",
    "gray_scott",
    "navier_stokes_2d",
    "navier_stokes_3d",
    "solve_poisson",
    "stream_function",
    "velocity_from_vorticity",
    "project_divergence_free",
    *_operators.__all__,
]
