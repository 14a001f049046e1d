"""Fourier pseudo-spectral operators on a periodic `Grid` (`sciax.grid.fourier`).

Real-FFT layout, acting on the last `grid.ndim` axes: wavenumbers and symbols
(`wavenumbers`, `spectral_shape`, `derivative_symbol`, `laplacian_symbol`,
`dealias_mask`, `nyquist_mask`), transforms (`to_spectral`, `to_physical`, which
dispatch on the grid type through `forward_transform`/`inverse_transform`: the hook
where `sciax.parallel` registers its distributed FFT), and operators
(`derivative`, `gradient`, `laplacian`, `inverse_laplacian`, `divergence`, `curl`).
Users meet them as `sciax.pde.spectral.*`.
"""

from ._fourier import (
    curl,
    dealias_mask,
    derivative,
    derivative_symbol,
    divergence,
    forward_transform,
    gradient,
    inverse_laplacian,
    inverse_transform,
    laplacian,
    laplacian_symbol,
    nyquist_mask,
    spectral_shape,
    to_physical,
    to_spectral,
    wavenumbers,
)

__all__ = [
    "wavenumbers",
    "spectral_shape",
    "derivative_symbol",
    "laplacian_symbol",
    "dealias_mask",
    "nyquist_mask",
    "forward_transform",
    "inverse_transform",
    "to_spectral",
    "to_physical",
    "derivative",
    "gradient",
    "laplacian",
    "inverse_laplacian",
    "divergence",
    "curl",
]
