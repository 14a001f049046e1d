"""Central and staggered finite-difference stencils of order 2, 4, 6 and 8.

Every operator pads its input through an `AbstractHalo` (built from boundary
conditions when given those), then applies a fixed stencil to the padded
block, so the same code runs on a whole grid or on one shard of it. All are
linear in `u`, differentiable in every array argument, and `jit`/`vmap` safe.
Weights are exact Taylor-series weights (solved once, in float64, at import).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ._boundary import as_halo
from ._grid import Grid

ORDERS = (2, 4, 6, 8)


def check_order(order, what: str = "order") -> int:
    """Raise `ValueError` unless `order` is one of 2, 4, 6, 8."""
    if isinstance(order, bool) or order not in ORDERS:
        raise ValueError(f"{what} must be one of {ORDERS} (the stencil's order of accuracy), got {order!r}")
    return int(order)


def _taylor_weights(offsets: np.ndarray, deriv: int) -> np.ndarray:
    # Weights w with sum_j w_j f(x + s_j h) = h^deriv f^(deriv)(x) + O(h^len(offsets)).
    k = np.arange(len(offsets))
    vandermonde = offsets[None, :] ** k[:, None]
    rhs = np.zeros(len(offsets))
    rhs[deriv] = float(np.prod(np.arange(1, deriv + 1)))
    return np.linalg.solve(vandermonde, rhs)


@functools.cache
def central(deriv: int, order: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """`(offsets, weights)` of the central stencil for derivative `deriv` (1 or 2), unit spacing."""
    half = order // 2
    offsets = np.arange(-half, half + 1)
    return tuple(int(o) for o in offsets), tuple(_taylor_weights(offsets.astype(float), deriv))


@functools.cache
def staggered(deriv: int, order: int) -> tuple[float, ...]:
    """Weights on the points `i + 1 - half .. i + half` for a value (`deriv=0`) or first
    derivative (`deriv=1`) at the midpoint `i + 1/2`, unit spacing."""
    half = order // 2
    offsets = np.arange(1 - half, half + 1) - 0.5
    return tuple(_taylor_weights(offsets, deriv))


@functools.cache
def symbol_radius(kind: str, order: int) -> float:
    """`max_theta |symbol|` at unit spacing: the spectral radius of the periodic operator.

    `kind`: `"d1"` (central first derivative), `"d2"` (central second derivative),
    `"staggered2"` (backward-after-forward staggered second derivative, `|S|^2`).
    """
    theta = np.linspace(0, np.pi, 2001)
    if kind == "staggered2":
        offsets = np.arange(1 - order // 2, order // 2 + 1) - 0.5
        s = sum(w * np.exp(1j * o * theta) for o, w in zip(offsets, staggered(1, order)))
        return float(np.max(np.abs(s) ** 2))
    offsets, weights = central(1 if kind == "d1" else 2, order)
    s = sum(w * np.exp(1j * o * theta) for o, w in zip(offsets, weights))
    return float(np.max(np.abs(s)))


def shift(up: Array, axis: int, start: int, n: int) -> Array:
    """`up[start : start + n]` along `axis` (a static slice)."""
    index = [slice(None)] * up.ndim
    index[axis] = slice(start, start + n)
    return up[tuple(index)]


def apply(up: Array, axis: int, starts, weights, n: int, scale: float) -> Array:
    """`scale * sum_j weights[j] * up[starts[j] : starts[j] + n]` along `axis`."""
    out = None
    for start, w in zip(starts, weights):
        if w == 0:
            continue
        term = float(w * scale) * shift(up, axis, start, n)
        out = term if out is None else out + term
    return out


def check_field(u, grid: Grid, name: str, what: str = "u"):
    if not isinstance(grid, Grid):
        raise TypeError(f"{name}: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
    u = jnp.asarray(u)
    if u.shape != grid.shape:
        raise ValueError(f"{name}: {what} has shape {u.shape}, but the grid has shape {grid.shape}; they must match")
    return u


def check_axis(axis, grid: Grid, name: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -grid.ndim <= axis < grid.ndim:
        raise ValueError(f"{name}: axis must be an integer in [0, {grid.ndim}) for a {grid.ndim}-D grid, got {axis!r}")
    return int(axis) % grid.ndim


def derivative(
    u: Float[Array, "..."], grid: Grid, axis: int = 0, *, bc, order: int = 2, t: ArrayLike = 0.0
) -> Float[Array, "..."]:
    """Central first derivative `du/dx_axis`, shape `grid.shape`, units of `u` per length.

    `bc`: a boundary condition (`sciax.pde.Periodic()`, ...), one per axis, `(low, high)`
    pairs, or an `AbstractHalo`. `t`: time at which time-dependent boundary values are taken.
    """
    u = check_field(u, grid, "derivative")
    axis, order = check_axis(axis, grid, "derivative"), check_order(order)
    offsets, weights = central(1, order)
    up = as_halo(grid, bc).pad(u, order // 2, t=t, axes=(axis,))
    return apply(up, axis, [o + order // 2 for o in offsets], weights, grid.shape[axis], 1 / grid.spacing[axis])


def second_derivative(
    u: Float[Array, "..."], grid: Grid, axis: int = 0, *, bc, order: int = 2, t: ArrayLike = 0.0
) -> Float[Array, "..."]:
    """Central second derivative `d2u/dx_axis^2`, shape `grid.shape` (see `derivative` for `bc`, `t`)."""
    u = check_field(u, grid, "second_derivative")
    axis, order = check_axis(axis, grid, "second_derivative"), check_order(order)
    offsets, weights = central(2, order)
    up = as_halo(grid, bc).pad(u, order // 2, t=t, axes=(axis,))
    return apply(up, axis, [o + order // 2 for o in offsets], weights, grid.shape[axis], 1 / grid.spacing[axis] ** 2)


def gradient(u: Float[Array, "..."], grid: Grid, *, bc, order: int = 2, t: ArrayLike = 0.0) -> tuple[Array, ...]:
    """`(du/dx, du/dy, ...)`: one central first derivative per axis, each of shape `grid.shape`."""
    return tuple(derivative(u, grid, axis, bc=bc, order=order, t=t) for axis in range(grid.ndim))


def divergence(fields, grid: Grid, *, bc, order: int = 2, t: ArrayLike = 0.0) -> Float[Array, "..."]:
    """`sum_i d(fields[i])/dx_i` for a sequence of `grid.ndim` arrays of shape `grid.shape`."""
    if len(fields) != grid.ndim:
        raise ValueError(f"divergence: fields needs {grid.ndim} components on a {grid.ndim}-D grid, got {len(fields)}")
    return sum(derivative(f, grid, axis, bc=bc, order=order, t=t) for axis, f in enumerate(fields))


def laplacian(u: Float[Array, "..."], grid: Grid, *, bc, order: int = 2, t: ArrayLike = 0.0) -> Float[Array, "..."]:
    """`sum_i d2u/dx_i^2` by central stencils, shape `grid.shape`."""
    return sum(second_derivative(u, grid, axis, bc=bc, order=order, t=t) for axis in range(grid.ndim))


def staggered_derivative(
    u: Float[Array, "..."],
    grid: Grid,
    axis: int = 0,
    *,
    bc,
    order: int = 2,
    t: ArrayLike = 0.0,
    forward: bool = True,
    flux: bool = False,
) -> Float[Array, "..."]:
    """Half-point first derivative for staggered (wave) schemes, shape `grid.shape`.

    `forward=True`: `u` lives on the points `i`, the result on the half points
    `i + 1/2` (`i = 0 .. n-1`). `forward=False`: `u` lives on the half points
    `i + 1/2`, the result on the points `i`. `flux=True` asks the halo to pad
    `u` as a derivative (face) field. Order `order` in the spacing.
    """
    u = check_field(u, grid, "staggered_derivative")
    axis, order = check_axis(axis, grid, "staggered_derivative"), check_order(order)
    half = order // 2
    up = as_halo(grid, bc).pad(u, half, t=t, flux=flux, axes=(axis,))
    # forward: points i+1-half .. i+half; backward: half points (i-1/2) - half + 1 .. (i-1/2) + half.
    first = 1 if forward else 0
    starts = [half + first - half + j for j in range(order)]
    return apply(up, axis, starts, staggered(1, order), grid.shape[axis], 1 / grid.spacing[axis])


def staggered_valid(u: Array, axis: int, order: int, spacing: float) -> Array:
    """The staggered first derivative of `staggered_derivative` where it needs no halo: length
    `n - order + 1` along `axis`, from shifted slices of `u` only (no padded copy).

    Entry `k` is the derivative at `k + order/2 - 1/2` in `u`'s index (so on the half points
    `half - 1 .. n - half - 1` of a point field, or on the points `half .. n - half` of a
    half-point field), bit for bit the value `staggered_derivative` gives there.
    """
    return apply(u, axis, range(order), staggered(1, order), u.shape[axis] - order + 1, 1 / spacing)


def diffusion(
    u: Float[Array, "..."], a: Float[ArrayLike, "..."], grid: Grid, *, bc, order: int = 2, t: ArrayLike = 0.0
) -> Float[Array, "..."]:
    """Variable-coefficient operator `div(a grad u)`, shape `grid.shape`; conservative (flux) form.

    `a`: the coefficient (e.g. diffusivity, length^2/time), an array of shape
    `grid.shape` or a scalar, interpolated to the half points at order `order`.
    `u` is differentiated forward to the half points, including the boundary
    faces (so a Dirichlet or Neumann condition sets the boundary flux), then
    back to the points. Differentiable in `u` and `a`.
    """
    u = check_field(u, grid, "diffusion")
    order = check_order(order)
    halo = as_halo(grid, bc)
    a = jnp.asarray(a, u.dtype)
    if a.ndim:
        a = check_field(a, grid, "diffusion", "the coefficient a")
    out = 0
    for axis in range(grid.ndim):
        n, h = grid.shape[axis], grid.spacing[axis]
        # Half points j + 1/2 for j = -order/2 .. n + order/2 - 1: all that the backward stencil reaches.
        m, starts = n + order, [1 + k for k in range(order)]
        up = halo.pad(u, order, t=t, axes=(axis,))
        flux = apply(up, axis, starts, staggered(1, order), m, 1 / h)
        if a.ndim:
            ap = halo.pad(a, order, flux=True, axes=(axis,))
            flux = apply(ap, axis, starts, staggered(0, order), m, 1.0) * flux
        out = out + apply(flux, axis, list(range(order)), staggered(1, order), n, 1 / h)
    return out if a.ndim else a * out
