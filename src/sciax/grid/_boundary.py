"""Boundary conditions for finite-difference stencils, and the halo that applies them.

Convention: a non-periodic boundary face lies half a spacing beyond the edge
point (cell-centred), i.e. at `origin - dx/2` and `origin + length - dx/2`.
Stencils never look at a boundary condition directly: they ask an
`AbstractHalo` for the field padded by `width` points on every side. The
`BoundaryHalo` fills the padding from boundary conditions; a sharded grid can
give a halo that fills interior sides from neighbouring devices instead.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ._grid import Grid
from ._regions import take


class AbstractBoundary(eqx.Module):
    """One boundary condition, applied to one side of one axis of a `Grid`."""

    # Whether `ghost` is zero whatever it is given: a padded layout's ghosts then never need writing.
    zero_ghosts: ClassVar[bool] = False

    @abc.abstractmethod
    def ghost(self, mirror: Array, offsets: Array, dx: float, t, *, flux: bool) -> Array:
        """Ghost values from `mirror`, the edge values reflected about the boundary face.

        `mirror` holds, along the padded axis, the interior point at distance
        `(2m+1) dx / 2` from the face inside for each ghost point at the same
        distance outside; `offsets` is `2m + 1` broadcast along that axis.
        `flux=True` pads a staggered (face-centred) derivative field, e.g. the
        acceleration `grad(p) / rho` of the acoustic scheme.
        """


class Periodic(AbstractBoundary):
    """Periodic: the field wraps around. Must be given on both sides of an axis."""

    def ghost(self, mirror, offsets, dx, t, *, flux):  # never called: periodic axes wrap
        raise NotImplementedError


class Dirichlet(AbstractBoundary):
    """The value on the boundary face: `u = value`.

    `value` is a number or a function `value(t)` returning a number or an array
    broadcastable to the face (the grid shape without the padded axis). The
    ghost values are the odd reflection `2 value - u` (second-order boundary
    closure whatever the stencil order). Derivative fields (`flux=True`) are
    padded by even reflection.
    """

    value: float | Callable = eqx.field(static=True, default=0.0)

    def __init__(self, value: float | Callable = 0.0):
        if not callable(value) and not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"Dirichlet: value must be a number or a function value(t), got {type(value).__name__}")
        self.value = value if callable(value) else float(value)

    def ghost(self, mirror, offsets, dx, t, *, flux):
        if flux:
            return mirror
        g = self.value(t) if callable(self.value) else self.value
        return 2 * jnp.asarray(g, mirror.dtype) - mirror


class Neumann(AbstractBoundary):
    """The outward normal derivative on the boundary face: `du/dn = flux` (default 0, no flux).

    Ghost values `u + (2m+1) dx * flux` (exact for linear profiles, second order).
    With `flux=0` this is even reflection (numpy's `"symmetric"` padding) of the
    field and of its derivative fields, which is the edge rule of the classic
    variable-density acoustic scheme reproduced by `sciax.pde.AcousticWave`.
    """

    flux: float = eqx.field(static=True, default=0.0)

    def __init__(self, flux: float = 0.0):
        if not isinstance(flux, (int, float, np.integer, np.floating)):
            raise TypeError(f"Neumann: flux must be a number, got {type(flux).__name__}")
        self.flux = float(flux)

    def ghost(self, mirror, offsets, dx, t, *, flux):
        if flux or self.flux == 0.0:
            return mirror
        return mirror + offsets * (dx * self.flux)


class ZeroPadding(AbstractBoundary):
    """Every ghost point outside the grid holds zero: of the field, of the face fields a staggered scheme
    pads (`flux=True`) and of the coefficients it pads (e.g. `AcousticWave`'s `1/rho` or `rho`).

    Devito's edge (its halos hold zeros, which no operator writes). For a field on the points: `u = 0`
    one spacing past the edge point, for a 3-point stencil a Dirichlet condition there, for wider
    stencils a zero extension (first order at the edge). On a staggered grid the face `i + 1/2` belongs
    to the point `i`, so the two sides differ: the face below the first point is a ghost (no flux through
    it: a rigid wall), the one above the last point is computed, from zeros past it (as in Devito's
    staggered fields, e.g. its elastic examples; its acoustic operator computes that lower face inline).
    For comparing with Devito, porting from it, or behind an absorbing layer, where the edge rule hardly
    matters. A padded layout's ghosts along an axis with zeros on both sides are written once, never per
    step (`AbstractHalo.zero_ghosts`; `AcousticWave`'s padded-state `Leapfrog` step).
    """

    zero_ghosts: ClassVar[bool] = True

    def ghost(self, mirror, offsets, dx, t, *, flux):
        return jnp.zeros_like(mirror)


class Outflow(AbstractBoundary):
    """Outflow (transmissive, zero gradient): ghost cells mirror the interior cells next to the face.

    The finite-volume rule of Toro ("Riemann Solvers and Numerical Methods for Fluid Dynamics",
    3rd ed., section 14.2): waves leave the domain without a reflection from the boundary itself.
    The same ghost values as `Neumann(0)`; a separate name for conservation laws.
    """

    def ghost(self, mirror, offsets, dx, t, *, flux):
        return mirror


class Reflective(AbstractBoundary):
    """A reflective solid wall. A scalar field is mirrored (even reflection); the
    finite-volume systems of `sciax.pde.fv` mirror the velocity normal to the wall with a
    change of sign, so the normal velocity vanishes on the face (Toro, section 14.2).
    """

    def ghost(self, mirror, offsets, dx, t, *, flux):
        return mirror


class AbstractAbsorbing(AbstractBoundary):
    """An absorbing layer of `width` points inside the grid, along one side.

    The layer is part of the computational grid (fields are computed there);
    beyond it the halo is filled by even reflection. The equation's model applies
    the damping (`sciax.pde.AbstractFDModel` for a `Sponge`, `AcousticWave` for a `CPML`).
    """

    width: int = eqx.field(static=True)

    def ghost(self, mirror, offsets, dx, t, *, flux):
        return mirror


def _check_width(name: str, width) -> int:
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
        raise ValueError(f"{name}: width must be an integer >= 1 (points in the layer), got {width!r}")
    return int(width)


class Sponge(AbstractAbsorbing):
    """A sponge layer: adds `-sigma(x) u` to the right-hand side in the last `width` points.

    `sigma = strength * depth**2`, `depth` going from 0 at the inner edge of the
    layer to 1 at the grid edge. `strength` in 1/time units; the damping relaxes
    `u` towards 0. For any first-order-in-time FD model. The layers along an axis
    (`width` points each) must leave at least one point undamped: a wider layer is
    refused when the model is built, naming width and grid size.
    """

    strength: float = eqx.field(static=True)

    def __init__(self, width: int, strength: float):
        self.width = _check_width("Sponge", width)
        if not (isinstance(strength, (int, float, np.integer, np.floating)) and strength > 0):
            raise ValueError(f"Sponge: strength must be a number > 0 (1/time), got {strength!r}")
        self.strength = float(strength)


class CPML(AbstractAbsorbing):
    """Convolutional perfectly matched layer for wave equations (Komatitsch & Martin 2007).

    Profiles at depth `q` in `[0, 1]` of a layer of thickness `L = width * dx`:
    damping `d = d0 q**power` with `d0 = -(power + 1) c_max ln(reflection) / (2 L)`,
    frequency shift `alpha = alpha_max (1 - q)` with `alpha_max = pi f0` by default
    (f0: the source's dominant frequency), `c_max` the largest velocity of the model
    (held fixed under differentiation, so gradients see a fixed layer), stretching
    `kappa = 1 + (kappa_max - 1) q**power`.
    Defaults (`power=2`, `reflection=1e-3`, `kappa_max=1`) follow the paper's
    numerical examples. Only `sciax.pde.AcousticWave` accepts it.

    Reference: D. Komatitsch and R. Martin, "An unsplit convolutional perfectly
    matched layer improved at grazing incidence for the seismic wave equation",
    Geophysics 72(5) (2007) SM155–SM167.
    """

    reflection: float = eqx.field(static=True)
    power: float = eqx.field(static=True)
    kappa_max: float = eqx.field(static=True)
    alpha_max: float | None = eqx.field(static=True)

    def __init__(
        self,
        width: int = 20,
        *,
        reflection: float = 1e-3,
        power: float = 2.0,
        kappa_max: float = 1.0,
        alpha_max: float | None = None,
    ):
        self.width = _check_width("CPML", width)
        if not 0 < reflection < 1:
            raise ValueError(f"CPML: reflection must lie in (0, 1), got {reflection!r}")
        if not power > 0 or not kappa_max >= 1:
            raise ValueError(f"CPML: need power > 0 and kappa_max >= 1, got power={power!r}, kappa_max={kappa_max!r}")
        if alpha_max is not None and not alpha_max >= 0:
            raise ValueError(f"CPML: alpha_max must be >= 0 (1/time) or None, got {alpha_max!r}")
        self.reflection, self.power, self.kappa_max = float(reflection), float(power), float(kappa_max)
        self.alpha_max = None if alpha_max is None else float(alpha_max)


Sides = tuple[tuple[AbstractBoundary, AbstractBoundary], ...]


def normalise_boundaries(bc, ndim: int, what: str = "bc") -> Sides:
    """`((low, high), ...)` per axis from one condition, or one per axis, or `(low, high)` pairs."""
    if isinstance(bc, AbstractBoundary):
        sides = ((bc, bc),) * ndim
    elif isinstance(bc, Sequence) and len(bc) == ndim:
        sides = tuple((b, b) if isinstance(b, AbstractBoundary) else tuple(b) for b in bc)
    else:
        raise TypeError(
            f"{what} must be a boundary condition (e.g. sciax.pde.Periodic()) or a sequence of {ndim} entries "
            f"(one per axis, each a condition or a (low, high) pair), got {bc!r}"
        )
    for axis, pair in enumerate(sides):
        if len(pair) != 2 or not all(isinstance(b, AbstractBoundary) for b in pair):
            raise TypeError(f"{what}: axis {axis} needs a condition or a (low, high) pair of conditions, got {pair!r}")
        if isinstance(pair[0], Periodic) != isinstance(pair[1], Periodic):
            raise ValueError(f"{what}: Periodic must be given on both sides of axis {axis}, got {pair!r}")
    return sides


class AbstractHalo(eqx.Module):
    """Fills the halo of a block: how a stencil sees past the edges of its array."""

    @abc.abstractmethod
    def pad(
        self,
        u: Float[Array, "..."],
        width: int,
        *,
        t: ArrayLike = 0.0,
        flux: bool = False,
        axes: Sequence[int] | None = None,
    ) -> Float[Array, "..."]:
        """`u` extended by `width` points on both sides of each axis in `axes` (default: all)."""

    @property
    def foldable(self) -> bool:
        """Whether `pad` reads nothing but the `width` points next to each edge of `u` (and `t`), whatever
        `u`'s extent, so that `sciax.pde`'s one-pass stencil updates may pad thin folded edge blocks
        with it (see `sciax.grid.split_evaluate`). `False` unless a halo says otherwise."""
        return False

    @property
    def pads_from_edges(self) -> bool:
        """Whether `pad` along an axis reads nothing but the `width` points next to each end of that axis
        (and `t`), so that a field's ghosts along it may be padded from the two edge slabs put side by side
        (the padded-state steps of `sciax.pde`'s wave models). `False` unless a halo says otherwise."""
        return False

    def zero_ghosts(self, axis: int) -> bool:
        """Whether `pad` along `axis` gives zeros on both sides, whatever the field (`ZeroPadding`), so that a
        padded layout's ghosts along it need no writing. `False` unless a halo says otherwise."""
        return False

    @property
    def blocks(self) -> int:
        """How many blocks the whole grid is cut into (one CPU device each when sharded): 1 on a whole grid."""
        return 1

    # Where the block sits: models with point sources, receivers or absorbing layers (which live at
    # global positions) ask the halo, so that the same code runs on a whole grid or on one block.
    def placement(self, shape: Sequence[int]) -> tuple[tuple, tuple[int, ...]]:
        """`(offsets, global_shape)` of a block of `shape`: the global index of its first point per
        axis (ints, or traced ints inside `jax.shard_map`) and the whole grid's shape. Default: the
        block is the whole grid."""
        return (0,) * len(shape), tuple(shape)

    def all_max(self, x: Array) -> Array:
        """The maximum of a per-block value over all blocks (the value itself on a whole grid)."""
        return x

    def all_sum(self, x: Array) -> Array:
        """The sum of a per-block value over all blocks (the value itself on a whole grid)."""
        return x


def edges_only(sides: Sides) -> bool:
    """Whether ghost values from these boundary conditions depend on the edge points only: all but a
    `Dirichlet` whose value is a function of `t` (it may return an array shaped like the face)."""
    return not any(isinstance(b, Dirichlet) and callable(b.value) for pair in sides for b in pair)


class BoundaryHalo(AbstractHalo):
    """A halo filled from boundary conditions on a single (unsharded) `Grid`.

    **Arguments:** `grid`; `bc`: one condition for every side, one per axis, or
    `(low, high)` pairs per axis.
    """

    grid: Grid = eqx.field(static=True)
    sides: Sides = eqx.field(static=True)

    def __init__(self, grid: Grid, bc):
        if not isinstance(grid, Grid):
            raise TypeError(f"BoundaryHalo: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
        self.grid = grid
        self.sides = normalise_boundaries(bc, grid.ndim)

    @property
    def foldable(self) -> bool:
        return edges_only(self.sides)

    @property
    def pads_from_edges(self) -> bool:
        return True

    def zero_ghosts(self, axis: int) -> bool:
        return all(b.zero_ghosts for b in self.sides[axis])

    def pad(self, u, width, *, t=0.0, flux=False, axes=None):
        if u.ndim != self.grid.ndim:
            raise ValueError(f"halo: field has {u.ndim} axes but the grid has {self.grid.ndim}")
        if width == 0:
            return u
        for axis in range(u.ndim) if axes is None else axes:
            low, high = self.sides[axis]
            n = u.shape[axis]
            if width > n:
                raise ValueError(f"halo: width {width} exceeds the {n} points along axis {axis}")
            if isinstance(low, Periodic):
                u = jnp.concatenate([take(u, axis, n - width, n), u, take(u, axis, 0, width)], axis=axis)
                continue
            dx = self.grid.spacing[axis]
            shape = [1] * u.ndim
            shape[axis] = width
            odd = jnp.asarray(2 * np.arange(width) + 1, u.dtype).reshape(shape)  # 2m+1 for ghost m = 0..width-1
            lo = low.ghost(jnp.flip(take(u, axis, 0, width), axis), jnp.flip(odd, axis), dx, t, flux=flux)
            hi = high.ghost(jnp.flip(take(u, axis, n - width, n), axis), odd, dx, t, flux=flux)
            u = jnp.concatenate([lo.astype(u.dtype), u, hi.astype(u.dtype)], axis=axis)
        return u


def as_halo(grid: Grid, bc) -> AbstractHalo:
    """An `AbstractHalo` as given, or a `BoundaryHalo(grid, bc)` built from boundary conditions."""
    if isinstance(bc, AbstractHalo):
        return bc
    halo = BoundaryHalo(grid, bc)
    check_layers_fit(grid, halo.sides)
    return halo


def check_layers_fit(grid: Grid, sides: Sides) -> None:
    """Refuse absorbing layers (`Sponge`, `CPML`) that leave no undamped point along an axis.

    Too wide a layer is otherwise accepted silently: its profile is clipped to the grid and
    the run reports success while it damps the whole domain.
    """
    for axis, (low, high) in enumerate(sides):
        layers = [b for b in (low, high) if isinstance(b, AbstractAbsorbing)]
        total, n = sum(b.width for b in layers), grid.shape[axis]
        if layers and total >= n:
            widest = max(layers, key=lambda b: b.width)
            fits = (n - 1) // len(layers)
            raise ValueError(
                f"{type(widest).__name__}: width {widest.width} does not fit grid axis {axis} ({grid.dims[axis]!r}) "
                f"of {n} points (grid shape {grid.shape}): the absorbing layers along it "
                f"({' + '.join(str(b.width) for b in layers)} points) must leave at least one point undamped; "
                f"use width <= {fits} or a finer grid"
            )


def layer_depth(n: int, low: AbstractBoundary, high: AbstractBoundary, kind: type, shift: float = 0.0) -> np.ndarray:
    """Depth in `[0, 1]` into the absorbing layers of type `kind` at points `i + shift`, `i = 0..n-1`.

    0 outside the layers, 1 at the grid edge (numpy, float64).
    """
    x = np.arange(n) + shift
    depth = np.zeros(n)
    if isinstance(low, kind):
        depth = np.maximum(depth, np.clip((low.width - x) / low.width, 0, 1))
    if isinstance(high, kind):
        depth = np.maximum(depth, np.clip((x - (n - 1 - high.width)) / high.width, 0, 1))
    return depth
