"""`solve_poisson`: the direct spectral solve of `(laplacian - s) phi = f` on a periodic box."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ...grid import Grid
from ...grid.fourier import laplacian_symbol, to_physical, to_spectral


def solve_poisson(
    f: Float[Array, "*batch *grid"], grid: Grid, *, screening: ArrayLike = 0.0, check_mean: bool = True
) -> Float[Array, "*batch *grid"]:
    """Solve `laplacian(phi) - screening * phi = f` on the periodic `grid`: one FFT pair, O(N log N).

    - `screening = 0` (Poisson): solvable only for zero-mean `f`; returns the zero-mean
      solution. With `check_mean=True`, a mean of `f` above round-off
      (`1000 eps max|f|`) raises, at run time (`equinox.error_if`), since dropping it
      would solve a different problem; `check_mean=False` projects it out silently.
    - `screening > 0` (screened Poisson / modified Helmholtz): always solvable.

    Exact for trigonometric polynomials the grid resolves. Differentiable in `f` and in
    `screening`; `f` may have leading batch axes. Units: `phi` has units of `f` times length^2.
    """
    if isinstance(screening, (int, float, np.number)) and not screening >= 0:
        raise ValueError(f"solve_poisson: screening must be >= 0, got {screening!r}")
    f_hat = to_spectral(f, grid)
    symbol = laplacian_symbol(grid) - screening
    singular = symbol == 0
    phi = to_physical(f_hat / jnp.where(singular, 1.0, symbol) * jnp.where(singular, 0.0, 1.0), grid)
    if check_mean:
        axes = tuple(range(-grid.ndim, 0))
        mean = jnp.mean(f, axis=axes)
        tol = 1000 * jnp.finfo(jnp.result_type(f)).eps * jnp.max(jnp.abs(f), axis=axes)
        bad = jnp.any(jnp.logical_and(jnp.abs(mean) > tol, jnp.any(singular)))
        if not isinstance(bad, jax.core.Tracer) and bool(bad):
            raise ValueError(
                f"solve_poisson: f has mean {np.abs(np.asarray(mean)).max():.3g}, but a periodic Poisson problem "
                "(screening=0) needs zero-mean f; subtract the mean or pass check_mean=False to project it out"
            )
        phi = eqx.error_if(
            phi, bad, "solve_poisson: f must have zero mean for a periodic Poisson problem (screening=0)"
        )
    return phi
