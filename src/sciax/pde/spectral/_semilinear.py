"""`SemilinearPDE`: `u_t = L u + N(t, u, params)` on a periodic grid, `L` diagonal in Fourier space."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Complex, PyTree, Real

from ..._labels import Labels
from ..._param_spec import ParamSpec
from ..._replace_static import replace_static
from ...grid import Grid, fourier
from ._abstract_semilinear import AbstractSemilinearPDE
from ._boundary import check_periodic


class SemilinearPDE(AbstractSemilinearPDE):
    """A semilinear evolution equation `u_t = L u + N(t, u, params)` on a periodic `Grid`.

    `L` is linear, constant in time and diagonal in Fourier space (given by its
    symbol, per component); `N` is any nonlinear term, evaluated pseudo-spectrally.
    This structure is what the spectral steppers (`sciax.pde.ETDRK4`, `IFRK4`,
    `CNAB2`) exploit; `rhs` gives the full right-hand side so that any `sciax.ode`
    method integrates the same model by the method of lines, and `imex_split`
    gives `(N, L)` for the `sciax.ode` IMEX methods.

    A final class: build new equations by instantiating it (see
    `sciax.pde.spectral.burgers` and friends), not by subclassing.

    **Arguments:**

    - `grid`: the periodic `sciax.pde.Grid`.
    - `linear`: `linear(k, params) -> symbol`, where `k` is the tuple of angular
      wavenumbers from `sciax.pde.spectral.wavenumbers(grid)` (each broadcastable to the rfft
      layout, shape `sciax.pde.spectral.spectral_shape(grid)`). Returns a real (dissipative)
      or complex (dispersive) array broadcastable to that shape, or to
      `(C, *spectral_shape)` for a different symbol per field; in 1/time units.
      E.g. the heat equation: `lambda k, p: -p["nu"] * k[0] ** 2`.
    - `nonlinear`: `nonlinear(t, u, params, grid) -> N` in physical space, `N` of the
      state's shape; `None` for a linear equation. Use `sciax.pde.spectral.derivative` etc. inside.
    - `nonlinear_spectral`: alternatively (not both), `nonlinear_spectral(t, u_hat, params, grid)
      -> N_hat` in Fourier space (rfft layout, `u_hat` already dealiased). Saves the
      transforms a physical-space `N` built from derivatives would repeat; the catalogue uses it.
    - `fields`: `None` (default) for a single field, state shape `grid.shape`; or the names
      of `C >= 1` fields, state shape `(C, *grid.shape)` (e.g. `("u", "v")` for Gray–Scott).
    - `dealias`: `False` (default), `True` for Orszag's 2/3 rule (right for quadratic `N`), or
      a fraction in (0, 1] (`1/2` for cubic `N`, see `sciax.pde.spectral.dealias_mask`):
      applied to the input and the output spectrum of `N`.
    - `bc`: the boundary condition; only periodic is possible (`None`, `"periodic"` or
      `sciax.pde.Periodic()`), anything else raises `ValueError` pointing to `sciax.pde.fd`.
    - `variable`, `units`, `long_name`, `time_units`: labels for `Solution.to_xarray`
      (a multi-field state is one variable with dims `("field", *grid.dims)`, fields in
      the order of `fields`, named in its `long_name`).
    - `param_shapes`: the params the equation expects, checked by `sciax.simulate` before
      the first evaluation, as for `sciax.ode.ODE`: e.g. `{"nu": ()}` for a scalar
      viscosity, `{}` for none. Default `None`: nothing is checked. Every catalogue
      equation declares its params.

    `params` (any pytree) may enter both `linear` and `N`; gradients flow to it
    through every method. `linear`, `nonlinear` and `grid` are static configuration
    (prefer module-level functions: they are hashed for jit caching). Every FFT goes
    through `to_spectral`/`to_physical`, so a distributed FFT can replace them.
    """

    grid: Grid = eqx.field(static=True)
    linear: Callable = eqx.field(static=True)
    nonlinear: Callable | None = eqx.field(static=True)
    nonlinear_spectral: Callable | None = eqx.field(static=True)
    fields: tuple[str, ...] | None = eqx.field(static=True)
    dealias_fraction: float | None = eqx.field(static=True)
    info: Labels = eqx.field(static=True)
    param_spec: ParamSpec | None = eqx.field(static=True)

    def __init__(
        self,
        grid: Grid,
        linear: Callable,
        nonlinear: Callable | None = None,
        *,
        nonlinear_spectral: Callable | None = None,
        fields: Sequence[str] | None = None,
        dealias: bool | float = False,
        bc=None,
        variable: str = "u",
        units: str | None = None,
        long_name: str | None = None,
        time_units: str | None = None,
        param_shapes: Mapping[str, tuple] | tuple | None = None,
    ):
        if not isinstance(grid, Grid):
            raise TypeError(f"SemilinearPDE: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
        check_periodic(bc, grid, "SemilinearPDE")
        if not callable(linear):
            raise TypeError(
                f"SemilinearPDE: linear must be callable linear(k, params) -> symbol, got {type(linear).__name__}"
            )
        for name, fn in (("nonlinear", nonlinear), ("nonlinear_spectral", nonlinear_spectral)):
            if fn is not None and not callable(fn):
                raise TypeError(f"SemilinearPDE: {name} must be callable or None, got {type(fn).__name__}")
        if nonlinear is not None and nonlinear_spectral is not None:
            raise ValueError(
                "SemilinearPDE: give nonlinear (physical space) or nonlinear_spectral (Fourier space), not both"
            )
        if fields is not None:
            if isinstance(fields, str) or not all(isinstance(f, str) for f in fields) or len(fields) == 0:
                raise TypeError(f"SemilinearPDE: fields must be None or a non-empty sequence of names, got {fields!r}")
            if len(set(fields)) != len(fields):
                raise ValueError(f"SemilinearPDE: fields must be distinct, got {tuple(fields)!r}")
            fields = tuple(fields)
        self.dealias_fraction = _dealias_fraction(dealias, grid)
        self.grid = grid
        self.linear = linear
        self.nonlinear = nonlinear
        self.nonlinear_spectral = nonlinear_spectral
        self.fields = fields
        if fields is not None and long_name is None:
            long_name = "fields: " + ", ".join(fields)
        self.info = Labels.build(
            variable=variable,
            dims=grid.dims if fields is None else ("field", *grid.dims),
            coords=dict(zip(grid.dims, grid.coords())),
            units=None if units is None else {variable: units},
            long_names=None if long_name is None else {variable: long_name},
            time_units=time_units,
        )
        self.param_spec = ParamSpec.build(param_shapes, "SemilinearPDE")

    @property
    def state_shape(self) -> tuple[int, ...]:
        """`grid.shape`, or `(C, *grid.shape)` for `C` named fields."""
        return self.grid.shape if self.fields is None else (len(self.fields), *self.grid.shape)

    def linear_symbol(self, params: PyTree) -> Complex[Array, "..."]:
        """The symbol of `L`, broadcast to the rfft layout of the state (`(C, *spectral_shape)` for fields).

        Real or complex dtype, as `linear` returns it; differentiable in `params`.
        """
        symbol = jnp.asarray(self.linear(fourier.wavenumbers(self.grid), params))
        shape = self.state_shape[: -self.grid.ndim] + fourier.spectral_shape(self.grid)
        try:
            return jnp.broadcast_to(symbol, shape)
        except ValueError:
            raise ValueError(
                f"SemilinearPDE: linear(k, params) returned shape {symbol.shape}, which does not broadcast "
                f"to the spectral (rfft) shape {shape} of the state on the grid {self.grid.shape}"
            ) from None

    def check_state(self, u, what: str = "the state u") -> None:
        """Raise `ValueError`/`TypeError` unless `u` is a real array of shape `state_shape`."""
        if not hasattr(u, "shape") or tuple(u.shape) != self.state_shape:
            extra = "" if self.fields is None else f" (fields {self.fields} on the grid)"
            raise ValueError(
                f"SemilinearPDE: {what} has shape {getattr(u, 'shape', type(u).__name__)}, "
                f"but the grid has shape {self.grid.shape}; expected {self.state_shape}{extra}"
            )
        if not jnp.issubdtype(u.dtype, jnp.floating):
            raise TypeError(f"SemilinearPDE: {what} must be a real floating-point array, got dtype {u.dtype}")

    def nonlinear_hat(self, t: Real[Array, ""], u_hat: Complex[Array, "..."], params: PyTree) -> Complex[Array, "..."]:
        """The rfft of `N(t, u, params)` from `u_hat = rfft(u)` (dealiased if asked); zeros for a linear model."""
        if self.nonlinear is None and self.nonlinear_spectral is None:
            return jnp.zeros_like(u_hat)
        mask = None if self.dealias_fraction is None else fourier.dealias_mask(self.grid, self.dealias_fraction)
        if mask is not None:
            u_hat = jnp.where(mask, u_hat, 0)
        if self.nonlinear_spectral is not None:
            n_hat = jnp.asarray(self.nonlinear_spectral(t, u_hat, params, self.grid))
            _check_returned(n_hat.shape, u_hat.shape, "nonlinear_spectral(t, u_hat, params, grid)", "its input u_hat")
            n_hat = n_hat.astype(u_hat.dtype)
        else:
            u = fourier.to_physical(u_hat, self.grid)
            n = jnp.asarray(self.nonlinear(t, u, params, self.grid))
            _check_returned(n.shape, self.state_shape, "nonlinear(t, u, params, grid)", "the state")
            n_hat = fourier.to_spectral(n.astype(u.dtype), self.grid)
        return n_hat if mask is None else jnp.where(mask, n_hat, 0)

    def on_grid(self, grid: Grid) -> SemilinearPDE:
        """This equation with its FFTs on `grid`, a grid of the same shape (e.g. a `sciax.parallel.ShardedGrid`)."""
        if tuple(grid.shape) != tuple(self.grid.shape):
            raise ValueError(f"SemilinearPDE.on_grid: grid has shape {tuple(grid.shape)}, expected {self.grid.shape}")
        return replace_static(self, grid=grid)  # keeps the labels built from the original grid

    def labels(self) -> Labels:
        return self.info

    def check_params(self, params: PyTree) -> None:
        if self.param_spec is not None:
            self.param_spec.check(params)


def _check_returned(shape, expected, what: str, against: str) -> None:
    if tuple(shape) != tuple(expected):
        raise ValueError(
            f"SemilinearPDE: {what} returned shape {tuple(shape)}, but {against} has shape {tuple(expected)}; "
            "they must match"
        )


def _dealias_fraction(dealias, grid: Grid) -> float | None:
    if dealias is False or dealias is None:
        return None
    fraction = 2 / 3 if dealias is True else dealias
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, (int, float, np.integer, np.floating))
        or not 0 < fraction <= 1
    ):
        raise ValueError(f"SemilinearPDE: dealias must be True, False or a fraction in (0, 1], got {dealias!r}")
    mask = fourier.dealias_mask(grid, fraction)
    for axis, n in enumerate(grid.shape):
        # the mode |m| = 1 along each axis must survive, or the dealiased N sees only the mean
        if not mask[tuple(1 if i == axis else 0 for i in range(grid.ndim))]:
            raise ValueError(
                f"SemilinearPDE: grid axis {axis} has {n} points, too few for dealias={dealias!r} "
                "(it keeps no mode but the mean); "
                f"use at least {int(np.floor(2 / fraction)) + 1} points or dealias=False"
            )
    return float(fraction)
