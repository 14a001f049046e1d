"""`GridOperator`: a finite-difference stencil on a `Grid`, with its boundary conditions, as a
matrix-free linear operator (and its constructors `laplacian_operator`, `diffusion_operator`, `stencil_operator`)."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jax.experimental import sparse as jsparse
from jaxtyping import Array, ArrayLike, Float, PyTree

from .._checks import is_concrete
from ..grid import BoundaryHalo, Dirichlet, Grid, Neumann, Periodic, Sides, normalise_boundaries, stencils
from ..grid.stencils import check_order
from ._probe import probe_diagonal, probe_sparse

DENSE_LIMIT = 16384  # largest size materialised densely (a 16384^2 float64 matrix is 2 GiB)


class _Laplacian(eqx.Module):
    """`sciax.pde.fd.laplacian` as a stencil (a Module with static fields, so equal stencils hash equal)."""

    order: int = eqx.field(static=True)

    def __call__(self, u, grid, halo, coeffs):
        return stencils.laplacian(u, grid, bc=halo, order=self.order)


class _Diffusion(eqx.Module):
    """`sciax.pde.fd.diffusion`, `div(a grad u)`, with `coeffs["a"]` the coefficient."""

    order: int = eqx.field(static=True)

    def __call__(self, u, grid, halo, coeffs):
        return stencils.diffusion(u, coeffs["a"], grid, bc=halo, order=self.order)


def _homogeneous(sides: Sides, what: str) -> Sides:
    """The same conditions with zero boundary values: the linear part of an affine stencil."""
    out = []
    for pair in sides:
        new = []
        for b in pair:
            if isinstance(b, Periodic):
                new.append(b)
            elif isinstance(b, Dirichlet):
                new.append(Dirichlet(0.0))
            elif isinstance(b, Neumann):
                new.append(Neumann(0.0))
            else:
                raise ValueError(f"{what}: boundary conditions must be Periodic, Dirichlet or Neumann, got {b!r}")
        out.append(tuple(new))
    return tuple(out)


class GridOperator(eqx.Module):
    """The linear operator `A u = scale * stencil(u) + shift * u` on a `Grid` (final).

    `stencil(u, grid, halo, coeffs)` is any FD stencil of `sciax.pde.fd` (or your own)
    evaluated with the *homogeneous* boundary conditions; what non-zero boundary
    values add is the constant `offset()`, so the discrete problem
    `scale * stencil_bc(u) + shift * u = f` is `A u = f - offset()`.

    Build it with `sciax.linalg.laplacian_operator`, `sciax.linalg.diffusion_operator` or
    `sciax.linalg.stencil_operator`. Matrix-free: `mv`, `as_lineax()` (a tagged
    `lineax.FunctionLinearOperator`), `diagonal()`; for small problems
    `as_dense()` and `as_sparse()` (a `jax.experimental.sparse.BCOO`).
    Array fields (`coeffs`, `scale`, `shift`) are differentiable; geometry and
    boundary conditions are static.
    """

    grid: Grid = eqx.field(static=True)
    sides: Sides = eqx.field(static=True)
    bc_sides: Sides = eqx.field(static=True)  # with the boundary values, for `offset`
    stencil: Callable = eqx.field(static=True)
    coeffs: PyTree
    scale: Float[ArrayLike, ""]
    shift: Float[ArrayLike, ""]
    radius: int = eqx.field(static=True)
    tags: frozenset = eqx.field(static=True)
    singular: bool = eqx.field(static=True)  # constant null space (pure Neumann/periodic, no shift)
    dtype: np.dtype = eqx.field(static=True)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.grid.shape

    @property
    def periodic(self) -> tuple[bool, ...]:
        return tuple(isinstance(lo, Periodic) for lo, _ in self.sides)

    def mv(self, u: Float[Array, "*grid"]) -> Float[Array, "*grid"]:
        """`A u` (boundary values excluded), shape `grid.shape`."""
        halo = BoundaryHalo(self.grid, self.sides)
        return self.scale * self.stencil(u, self.grid, halo, self.coeffs) + self.shift * u

    def __call__(self, u):
        return self.mv(u)

    def offset(self, t: ArrayLike = 0.0) -> Float[Array, "*grid"]:
        """`scale * stencil(0)` with the real boundary values: move it to the right-hand side."""
        halo = BoundaryHalo(self.grid, self.bc_sides)
        zero = jnp.zeros(self.grid.shape, self.dtype)
        return self.scale * self.stencil(zero, self.grid, halo, self.coeffs)

    def structure(self) -> jax.ShapeDtypeStruct:
        return jax.ShapeDtypeStruct(self.grid.shape, self.dtype)

    def as_lineax(self) -> lx.FunctionLinearOperator:
        """A matrix-free `lineax.FunctionLinearOperator` carrying `tags`."""
        return lx.FunctionLinearOperator(self.mv, self.structure(), self.tags)

    def diagonal(self) -> Float[Array, "*grid"]:
        """The diagonal of `A` by colour probing (a few operator applications)."""
        return _diagonal(self)

    def as_dense(self) -> Float[Array, "N N"]:
        """The `(N, N)` matrix, `N = grid.size`, acting on C-order flattened fields."""
        n = self.grid.size
        if n > DENSE_LIMIT:
            raise ValueError(f"as_dense: the grid has {n} points; dense matrices are limited to {DENSE_LIMIT}")
        return _dense(self)

    def as_sparse(self) -> jsparse.BCOO:
        """The matrix as a `BCOO` sparse array (needs concrete coefficients: not under `jit`)."""
        rows, cols, vals = probe_sparse(self.mv, self.grid, self.periodic, self.radius, self.dtype)
        order = np.lexsort((cols, rows))
        idx = np.stack([rows[order], cols[order]], axis=1)
        return jsparse.BCOO((jnp.asarray(vals[order]), jnp.asarray(idx)), shape=(self.grid.size,) * 2)

    def coarsen(self, coarse_grid: Grid, restrict_field: Callable) -> GridOperator:
        """The same operator rediscretised on `coarse_grid`; grid-shaped coefficients are
        restricted with `restrict_field` (cell averages), other leaves kept (for multigrid)."""
        coeffs = jax.tree_util.tree_map(
            lambda c: restrict_field(c) if jnp.shape(c) == self.grid.shape else c, self.coeffs
        )
        return GridOperator(
            coarse_grid,
            self.sides,
            self.bc_sides,
            self.stencil,
            coeffs,
            self.scale,
            self.shift,
            self.radius,
            self.tags,
            self.singular,
            self.dtype,
        )

    def __init__(self, grid, sides, bc_sides, stencil, coeffs, scale, shift, radius, tags, singular, dtype):
        self.grid, self.sides, self.bc_sides, self.stencil = grid, sides, bc_sides, stencil
        self.coeffs, self.scale, self.shift = coeffs, scale, shift
        self.radius, self.tags, self.singular, self.dtype = radius, frozenset(tags), bool(singular), dtype


# Compiled once per operator structure: eager probing would dispatch hundreds of small ops.
@eqx.filter_jit
def _diagonal(op: GridOperator):
    return probe_diagonal(op.mv, op.grid, op.periodic, op.radius, op.dtype)


@eqx.filter_jit
def _dense(op: GridOperator):
    n = op.grid.size
    eye = jnp.eye(n, dtype=op.dtype).reshape((n,) + op.grid.shape)
    return jax.vmap(op.mv)(eye).reshape(n, n).T


def stencil_operator(
    grid: Grid,
    stencil: Callable,
    bc,
    coeffs: PyTree = None,
    *,
    scale: Float[ArrayLike, ""] = 1.0,
    shift: Float[ArrayLike, ""] = 0.0,
    radius: int = 1,
    symmetric: bool = False,
    definite: str | None = None,
    nullspace: bool = False,
    dtype=None,
) -> GridOperator:
    """Any FD stencil as a `GridOperator`: `A u = scale * stencil(u, grid, halo, coeffs) + shift * u`.

    - `stencil(u, grid, halo, coeffs)`: linear in `u` given homogeneous boundary
      conditions (pass `bc=halo` to `sciax.pde.fd` stencils). Make it a function or an
      `equinox.Module` with static fields: it is static configuration.
    - `bc`: `Periodic`, `Dirichlet` or `Neumann` (one, per axis, or `(low, high)` pairs).
    - `coeffs`: arrays (differentiable); grid-shaped leaves are cell-averaged when
      multigrid coarsens the operator.
    - `radius`: how many points the stencil reaches along an axis (for probing).
    - `symmetric`, `definite` (`"negative"`/`"positive"` semidefinite for `stencil`
      itself), `nullspace` (constants are in the kernel of `stencil`): what you assert
      about the stencil; the tags of `A` follow from them and the signs of `scale`, `shift`.
    """
    if not isinstance(grid, Grid):
        raise TypeError(f"stencil_operator: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
    if not callable(stencil):
        raise TypeError(f"stencil_operator: stencil must be callable stencil(u, grid, halo, coeffs), got {stencil!r}")
    if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 1:
        raise ValueError(f"stencil_operator: radius must be an integer >= 1 (points reached per axis), got {radius!r}")
    if definite not in (None, "negative", "positive"):
        raise ValueError(f"stencil_operator: definite must be None, 'negative' or 'positive', got {definite!r}")
    bc_sides = normalise_boundaries(bc, grid.ndim, "stencil_operator: bc")
    sides = _homogeneous(bc_sides, "stencil_operator")
    dtype = np.dtype(dtype or jnp.result_type(float, *jax.tree_util.tree_leaves(coeffs)))
    tags = {lx.symmetric_tag} if symmetric else set()
    sign = _definiteness(definite, scale, shift) if symmetric else None
    if sign == "negative":
        tags.add(lx.negative_semidefinite_tag)
    elif sign == "positive":
        tags.add(lx.positive_semidefinite_tag)
    if sign is not None and not (is_concrete(scale) and is_concrete(shift)):
        bad = (jnp.asarray(scale) < 0) | (jnp.asarray(shift) * (1 if sign == "negative" else -1) > 0)
        scale = eqx.error_if(
            jnp.asarray(scale),
            bad,
            f"stencil_operator: traced scale/shift are assumed to keep the "
            f"operator {sign} semidefinite (scale >= 0, shift of the stencil's sign); pass concrete values",
        )
    singular = bool(nullspace) and is_concrete(shift) and float(np.asarray(shift)) == 0.0
    return GridOperator(
        grid,
        sides,
        bc_sides,
        stencil,
        coeffs,
        jnp.asarray(scale, dtype),
        jnp.asarray(shift, dtype),
        int(radius),
        frozenset(tags),
        singular,
        dtype,
    )


def _definiteness(definite, scale, shift) -> str | None:
    # sign(A) from sign(stencil), sign(scale), sign(shift); None when mixed. Traced values
    # (e.g. under jax.grad) are assumed to keep the stencil's sign (scale >= 0 and shift of
    # the opposite sign), checked at run time in `stencil_operator`.
    if definite is None:
        return None
    if not (is_concrete(scale) and is_concrete(shift)):
        return definite
    s, c = float(np.asarray(scale)), float(np.asarray(shift))
    flip = {"negative": "positive", "positive": "negative"}
    part = definite if s >= 0 else flip[definite]
    if c == 0 or (c < 0) == (part == "negative"):
        return part
    return None


def laplacian_operator(
    grid: Grid,
    bc,
    *,
    order: int = 2,
    scale: Float[ArrayLike, ""] = 1.0,
    shift: Float[ArrayLike, ""] = 0.0,
    dtype=None,
) -> GridOperator:
    """`A u = scale * laplacian(u) + shift * u`: Poisson (`shift=0`), screened Poisson /
    modified Helmholtz (`shift < 0`), Helmholtz (`shift = k^2 > 0`, indefinite).

    Central stencils of `order` 2, 4, 6 or 8 with homogeneous reflections are
    diagonalised by FFT/DST/DCT, hence symmetric and negative semidefinite: the
    operator is tagged `symmetric` and, for `scale > 0, shift <= 0`, `negative_semidefinite`
    (CG negates it). Pure Neumann/periodic with `shift = 0` is singular (constants).
    """
    order = check_order(order, "laplacian_operator: order")
    sides = normalise_boundaries(bc, grid.ndim, "laplacian_operator: bc") if isinstance(grid, Grid) else None
    nullspace = sides is not None and not any(isinstance(b, Dirichlet) for pair in sides for b in pair)
    return stencil_operator(
        grid,
        _Laplacian(order),
        bc,
        None,
        scale=scale,
        shift=shift,
        radius=order // 2,
        symmetric=True,
        definite="negative",
        nullspace=nullspace,
        dtype=dtype,
    )


def diffusion_operator(
    grid: Grid,
    a: Float[ArrayLike, "*grid"],
    bc,
    *,
    order: int = 2,
    scale: Float[ArrayLike, ""] = 1.0,
    shift: Float[ArrayLike, ""] = 0.0,
) -> GridOperator:
    """`A u = scale * div(a grad u) + shift * u` (conservative form), `a > 0` scalar or grid-shaped.

    Symmetric and negative semidefinite at `order=2` (tagged so); higher orders
    interpolate `a` with one-sided reflections and are left untagged (use GMRES).
    Differentiable in `a`, `scale`, `shift`.
    """
    order = check_order(order, "diffusion_operator: order")
    if not isinstance(grid, Grid):
        raise TypeError(f"diffusion_operator: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
    a = jnp.asarray(a)
    if a.ndim and a.shape != grid.shape:
        raise ValueError(
            f"diffusion_operator: a has shape {a.shape}, but the grid has shape {grid.shape}; they must match"
        )
    if is_concrete(a) and not np.all(np.asarray(a) > 0):  # NumPy: a may be closed over by a jit trace
        raise ValueError(f"diffusion_operator: a must be > 0 everywhere, got minimum {float(np.asarray(a).min())!r}")
    sides = normalise_boundaries(bc, grid.ndim, "diffusion_operator: bc")
    nullspace = not any(isinstance(b, Dirichlet) for pair in sides for b in pair)
    # Half points use order // 2 points each side, twice: reach order - 1.
    return stencil_operator(
        grid,
        _Diffusion(order),
        bc,
        {"a": a},
        scale=scale,
        shift=shift,
        radius=order - 1,
        symmetric=order == 2,
        definite="negative" if order == 2 else None,
        nullspace=nullspace,
    )
