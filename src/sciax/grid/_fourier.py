"""Fourier pseudo-spectral operators on a periodic `Grid` (real FFT layout).

Every function takes a real field `u` whose last `grid.ndim` axes are the grid
(any leading axes are batch axes) and uses `jnp.fft.rfftn`/`irfftn` over those
axes. In the spectral ("rfft") layout the last grid axis has `n // 2 + 1`
entries (non-negative wavenumbers only); the others have `n` entries in FFT
order. All operators are linear, exact for trigonometric polynomials the grid
resolves, and differentiable (jvp and vjp) in `u`.

Wavenumbers are angular: `k = 2 pi m / L` for integer mode `m`, in inverse
length units of the grid.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Complex, Float

from ._grid import Grid


def spectral_shape(grid: Grid) -> tuple[int, ...]:
    """Shape of the rfft layout: `grid.shape[:-1] + (grid.shape[-1] // 2 + 1,)`."""
    return grid.shape[:-1] + (grid.shape[-1] // 2 + 1,)


def _mode_numbers(grid: Grid, axis: int) -> np.ndarray:
    """Integer mode numbers `m` along `axis` in rfft layout, shaped to broadcast."""
    n = grid.shape[axis]
    m = np.arange(n // 2 + 1) if axis == grid.ndim - 1 else np.fft.fftfreq(n, 1.0 / n).round()
    view = [1] * grid.ndim
    view[axis] = m.shape[0]
    return m.reshape(view)


def _axes(grid: Grid) -> tuple[int, ...]:
    return tuple(range(-grid.ndim, 0))


def _check_axis(grid: Grid, axis: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -grid.ndim <= axis < grid.ndim:
        raise ValueError(f"axis must be an integer in [0, {grid.ndim}) for this {grid.ndim}-D grid, got {axis!r}")
    return int(axis) % grid.ndim


def wavenumbers(grid: Grid) -> tuple[Float[Array, "..."], ...]:
    """Angular wavenumbers `k_i = 2 pi m_i / L_i`, one per axis, in rfft layout.

    Entry `i` has shape `(1, .., spectral_shape[i], .., 1)` so that the tuple
    broadcasts against a spectral array; `k_i` is in 1/length units.
    """
    dtype = jnp.result_type(float)
    return tuple(
        jnp.asarray(2 * np.pi / length * _mode_numbers(grid, i), dtype=dtype) for i, length in enumerate(grid.lengths)
    )


def nyquist_mask(grid: Grid, axis: int) -> Bool[np.ndarray, "..."]:
    """`True` at the Nyquist mode `|m| = n/2` along `axis` (never, when `n` is odd)."""
    axis = _check_axis(grid, axis)
    n = grid.shape[axis]
    return (
        (np.abs(_mode_numbers(grid, axis)) * 2 == n) if n % 2 == 0 else np.zeros_like(_mode_numbers(grid, axis), bool)
    )


def derivative_symbol(grid: Grid, axis: int = 0, order: int = 1) -> Complex[Array, "..."]:
    """The Fourier symbol `(i k_axis)^order` of `d^order/dx_axis^order`, in rfft layout.

    For odd orders the Nyquist mode (even `n`) is set to zero: its derivative is
    not a real trigonometric polynomial on the grid, and zeroing it keeps the
    result real. Broadcasts against a spectral array.
    """
    axis = _check_axis(grid, axis)
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 0:
        raise ValueError(f"order must be a non-negative integer, got {order!r}")
    k = wavenumbers(grid)[axis]
    symbol = (1j * k) ** int(order)
    if order % 2 == 1:
        symbol = jnp.where(jnp.asarray(nyquist_mask(grid, axis)), 0, symbol)
    return symbol


def laplacian_symbol(grid: Grid) -> Float[Array, "..."]:
    """The symbol `-|k|^2` of the Laplacian, full rfft-layout shape."""
    ks = wavenumbers(grid)
    return -sum(jnp.broadcast_to(k, spectral_shape(grid)) ** 2 for k in ks)


def dealias_mask(grid: Grid, fraction: float = 2 / 3) -> Bool[np.ndarray, "..."]:
    """Dealiasing mask in rfft layout: keeps modes with `|m_i| < fraction * n_i / 2` on every axis.

    The default `fraction = 2/3` is Orszag's 2/3 rule, `3 |m_i| < n_i`: multiplying
    the spectrum of a quadratic product by this mask (and the factors, before the
    product) removes all aliasing errors. `fraction = 1/2` does the same for cubic
    products (`4 |m_i| < n_i`); in general `2 / (p + 1)` for degree `p`.
    The comparison is exact (rational), so `n = 12, fraction = 2/3` keeps `|m| <= 3`.
    """
    ratio = _as_fraction(fraction)
    keep = np.ones(spectral_shape(grid), bool)
    for i, n in enumerate(grid.shape):
        # 2 |m| < (p/q) n  <=>  2 q |m| < p n, in integers
        keep = keep & (2 * ratio.denominator * np.abs(_mode_numbers(grid, i)) < ratio.numerator * n)
    return keep


def _as_fraction(fraction) -> Fraction:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.integer, np.floating, Fraction)):
        raise TypeError(f"dealias fraction must be a number in (0, 1], got {fraction!r}")
    if not 0 < float(fraction) <= 1:
        raise ValueError(f"dealias fraction must be in (0, 1], got {fraction!r}")
    # float(2/3) is not exactly 2/3: recover the intended small rational
    return Fraction(fraction).limit_denominator(1000)


@functools.singledispatch
def forward_transform(grid: Grid, u: Float[Array, "*batch *grid"]) -> Complex[Array, "*batch *spectral"]:
    """The real FFT over the grid axes, chosen by the type of `grid` (`jnp.fft.rfftn` for a `Grid`).

    A hook: a grid subclass that lives on several devices (`sciax.parallel`)
    registers its distributed FFT here (`forward_transform.register(ThatGrid)`),
    so every spectral model runs on it unchanged. Arguments are already checked.
    """
    return jnp.fft.rfftn(u, axes=_axes(grid))


@functools.singledispatch
def inverse_transform(grid: Grid, u_hat: Complex[Array, "*batch *spectral"]) -> Float[Array, "*batch *grid"]:
    """The inverse of `forward_transform` (`jnp.fft.irfftn` for a `Grid`); same dispatch on the grid type."""
    return jnp.fft.irfftn(u_hat, s=grid.shape, axes=_axes(grid))


def to_spectral(u: Float[Array, "*batch *grid"], grid: Grid) -> Complex[Array, "*batch *spectral"]:
    """`rfftn` of `u` over its last `grid.ndim` axes (which must equal `grid.shape`)."""
    _check_field(u, grid)
    return forward_transform(grid, u)


def to_physical(u_hat: Complex[Array, "*batch *spectral"], grid: Grid) -> Float[Array, "*batch *grid"]:
    """`irfftn` over the last `grid.ndim` axes, back to real values of shape `grid.shape`."""
    if tuple(jnp.shape(u_hat)[-grid.ndim :]) != spectral_shape(grid):
        raise ValueError(
            f"to_physical: spectral array has trailing shape {tuple(jnp.shape(u_hat)[-grid.ndim :])}, "
            f"expected {spectral_shape(grid)} for a grid of shape {grid.shape}"
        )
    return inverse_transform(grid, u_hat)


def _check_field(u, grid: Grid) -> None:
    shape = tuple(jnp.shape(u))
    if shape[-grid.ndim :] != grid.shape or len(shape) < grid.ndim:
        raise ValueError(
            f"field has shape {shape}, but its last {grid.ndim} axes must equal the grid shape {grid.shape}"
        )


def derivative(
    u: Float[Array, "*batch *grid"], grid: Grid, axis: int = 0, order: int = 1
) -> Float[Array, "*batch *grid"]:
    """Spectral derivative `d^order u / dx_axis^order` (Nyquist mode dropped for odd orders)."""
    return to_physical(derivative_symbol(grid, axis, order) * to_spectral(u, grid), grid)


def gradient(u: Float[Array, "*batch *grid"], grid: Grid) -> tuple[Float[Array, "*batch *grid"], ...]:
    """Spectral gradient `(du/dx, du/dy, ...)`, one array per axis."""
    u_hat = to_spectral(u, grid)
    return tuple(to_physical(derivative_symbol(grid, i, 1) * u_hat, grid) for i in range(grid.ndim))


def laplacian(u: Float[Array, "*batch *grid"], grid: Grid) -> Float[Array, "*batch *grid"]:
    """Spectral Laplacian `sum_i d^2 u / dx_i^2`."""
    return to_physical(laplacian_symbol(grid) * to_spectral(u, grid), grid)


def inverse_laplacian(f: Float[Array, "*batch *grid"], grid: Grid) -> Float[Array, "*batch *grid"]:
    """The zero-mean solution `phi` of `laplacian(phi) = f - mean(f)` on the periodic box.

    The Laplacian is singular on constants, so the zero mode is mapped to 0: the
    mean of `f` is ignored (a periodic Poisson problem is solvable only for
    zero-mean `f`) and the returned `phi` has zero mean.
    """
    symbol = laplacian_symbol(grid)
    is_zero = symbol == 0
    inverse = jnp.where(is_zero, 0.0, 1.0 / jnp.where(is_zero, 1.0, symbol))
    return to_physical(inverse * to_spectral(f, grid), grid)


def divergence(v: Float[Array, "*batch D *grid"], grid: Grid) -> Float[Array, "*batch *grid"]:
    """Spectral divergence `sum_i d v_i / dx_i` of a vector field whose axis `-ndim-1` holds the `ndim` components."""
    _check_vector(v, grid, "divergence")
    v_hat = to_spectral(v, grid)
    return to_physical(
        sum(derivative_symbol(grid, i, 1) * jnp.take(v_hat, i, axis=-grid.ndim - 1) for i in range(grid.ndim)), grid
    )


def curl(
    v: Float[Array, "*batch D *grid"], grid: Grid
) -> Float[Array, "*batch *grid"] | Float[Array, "*batch 3 *grid"]:
    """Spectral curl of a vector field whose axis `-ndim-1` holds the components.

    - 2-D: `v = (v_x, v_y)` gives the scalar vorticity `d v_y/dx - d v_x/dy`, shape `(*batch, nx, ny)`.
    - 3-D: `v = (v_x, v_y, v_z)` gives the vector `curl v`, shape `(*batch, 3, nx, ny, nz)`.

    Linear and differentiable; one forward and one (batched) inverse FFT.
    """
    if grid.ndim == 1:
        raise ValueError("curl: needs a 2-D or 3-D grid, got a 1-D grid")
    _check_vector(v, grid, "curl")
    v_hat = to_spectral(v, grid)
    d = [derivative_symbol(grid, i, 1) for i in range(grid.ndim)]
    c = [jnp.take(v_hat, i, axis=-grid.ndim - 1) for i in range(grid.ndim)]
    if grid.ndim == 2:
        return to_physical(d[0] * c[1] - d[1] * c[0], grid)
    out = jnp.stack([d[1] * c[2] - d[2] * c[1], d[2] * c[0] - d[0] * c[2], d[0] * c[1] - d[1] * c[0]], axis=-4)
    return to_physical(out, grid)


def _check_vector(v, grid: Grid, name: str) -> None:
    shape = tuple(jnp.shape(v))
    if len(shape) < grid.ndim + 1 or shape[-grid.ndim - 1 :] != (grid.ndim, *grid.shape):
        raise ValueError(
            f"{name}: vector field has shape {shape}, expected trailing shape {(grid.ndim, *grid.shape)} "
            f"(one component per axis of the {grid.ndim}-D grid {grid.shape})"
        )
