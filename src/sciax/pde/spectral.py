"""Fourier pseudo-spectral operators and equations on periodic grids (`sciax.pde.spectral`).

- Operators (real-FFT layout, acting on the last `grid.ndim` axes): `wavenumbers`,
  `spectral_shape`, `to_spectral`, `to_physical`, `derivative`, `derivative_symbol`,
  `gradient`, `laplacian`, `laplacian_symbol`, `inverse_laplacian`, `dealias_mask`,
  `nyquist_mask`.
- Equations (each a `sciax.pde.SemilinearPDE`): `heat`, `burgers`,
  `kuramoto_sivashinsky`, `kdv`.

Step them with `sciax.pde.ETDRK4(dt=...)` (or ETDRK1/2), or by the method of lines
with any `sciax.ode` method.
"""

from ._fourier import (
    dealias_mask,
    derivative,
    derivative_symbol,
    gradient,
    inverse_laplacian,
    laplacian,
    laplacian_symbol,
    nyquist_mask,
    spectral_shape,
    to_physical,
    to_spectral,
    wavenumbers,
)
from ._spectral_catalogue import burgers, heat, kdv, kuramoto_sivashinsky

__all__ = [
    "heat",
    "burgers",
    "kuramoto_sivashinsky",
    "kdv",
    "dealias_mask",
    "derivative",
    "derivative_symbol",
    "gradient",
    "inverse_laplacian",
    "laplacian",
    "laplacian_symbol",
    "nyquist_mask",
    "spectral_shape",
    "to_physical",
    "to_spectral",
    "wavenumbers",
]
