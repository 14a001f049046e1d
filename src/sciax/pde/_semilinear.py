"""`SemilinearPDE`: `u_t = L u + N(t, u, params)` on a periodic grid, `L` diagonal in Fourier space."""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Complex, Float, PyTree, Real

from .._labels import Labels
from .._method import AbstractMethod
from .._model import AbstractModel
from . import _fourier
from ._grid import Grid


class SemilinearPDE(AbstractModel):
    """A semilinear evolution equation `u_t = L u + N(t, u, params)` on a periodic `Grid`.

    `L` is linear, constant in time and diagonal in Fourier space (given by its
    symbol); `N` is any nonlinear term evaluated pseudo-spectrally (in physical
    space). This structure is what exponential integrators (`sciax.pde.ETDRK4`)
    exploit; `rhs` gives the full right-hand side so that any `sciax.ode` method
    integrates the same model by the method of lines.

    A final class: build new equations by instantiating it (see
    `sciax.pde.spectral.burgers` and friends), not by subclassing.

    **Arguments:**

    - `grid`: the periodic `sciax.pde.Grid`; the state `u` is a real array of shape `grid.shape`.
    - `linear`: `linear(k, params) -> symbol`, where `k` is the tuple of angular
      wavenumbers from `sciax.pde.spectral.wavenumbers(grid)` (each broadcastable to the rfft
      layout, shape `sciax.pde.spectral.spectral_shape(grid)`). Returns a real (dissipative)
      or complex (dispersive) array broadcastable to that shape, in 1/time units.
      E.g. the heat equation: `lambda k, p: -p["nu"] * k[0] ** 2`.
    - `nonlinear`: `nonlinear(t, u, params, grid) -> N`, physical space, `N` of shape
      `grid.shape`; `None` for a linear equation. Use `sciax.pde.spectral.derivative` etc. inside.
    - `dealias`: apply the 2/3 rule to the nonlinear term (its input and output
      spectra); right for quadratic nonlinearities. Default `False`.
    - `variable`, `units`, `long_name`, `time_units`: labels for `Solution.to_xarray`.

    `params` (any pytree) may enter both `linear` and `nonlinear`; gradients flow
    to it through every method. `linear`, `nonlinear` and `grid` are static
    configuration (prefer module-level functions: they are hashed for jit caching).
    """

    grid: Grid = eqx.field(static=True)
    linear: Callable = eqx.field(static=True)
    nonlinear: Callable | None = eqx.field(static=True)
    dealias: bool = eqx.field(static=True)
    info: Labels = eqx.field(static=True)

    def __init__(
        self,
        grid: Grid,
        linear: Callable,
        nonlinear: Callable | None = None,
        *,
        dealias: bool = False,
        variable: str = "u",
        units: str | None = None,
        long_name: str | None = None,
        time_units: str | None = None,
    ):
        if not isinstance(grid, Grid):
            raise TypeError(f"SemilinearPDE: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
        if not callable(linear):
            raise TypeError(f"SemilinearPDE: linear must be callable linear(k, params) -> symbol, got {type(linear).__name__}")
        if nonlinear is not None and not callable(nonlinear):
            raise TypeError(
                f"SemilinearPDE: nonlinear must be callable nonlinear(t, u, params, grid) or None, got {type(nonlinear).__name__}"
            )
        if not isinstance(dealias, bool):
            raise TypeError(f"SemilinearPDE: dealias must be True or False, got {dealias!r}")
        self.grid = grid
        self.linear = linear
        self.nonlinear = nonlinear
        self.dealias = dealias
        self.info = Labels.build(
            variable=variable,
            dims=grid.dims,
            coords=dict(zip(grid.dims, grid.coords())),
            units=None if units is None else {variable: units},
            long_names=None if long_name is None else {variable: long_name},
            time_units=time_units,
        )

    def linear_symbol(self, params: PyTree) -> Complex[Array, "..."]:
        """The symbol of `L`, broadcast to the full rfft layout `spectral_shape(grid)`.

        Real or complex dtype, as `linear` returns it; differentiable in `params`.
        """
        symbol = jnp.asarray(self.linear(_fourier.wavenumbers(self.grid), params))
        shape = _fourier.spectral_shape(self.grid)
        try:
            return jnp.broadcast_to(symbol, shape)
        except ValueError:
            raise ValueError(
                f"SemilinearPDE: linear(k, params) returned shape {symbol.shape}, which does not broadcast "
                f"to the spectral (rfft) shape {shape} of the grid {self.grid.shape}"
            ) from None

    def check_state(self, u, what: str = "the state u") -> None:
        """Raise `ValueError`/`TypeError` unless `u` is a real array of shape `grid.shape`."""
        if not hasattr(u, "shape") or tuple(u.shape) != self.grid.shape:
            raise ValueError(
                f"SemilinearPDE: {what} has shape {getattr(u, 'shape', type(u).__name__)}, "
                f"but the grid has shape {self.grid.shape}; they must match"
            )
        if not jnp.issubdtype(u.dtype, jnp.floating):
            raise TypeError(f"SemilinearPDE: {what} must be a real floating-point array, got dtype {u.dtype}")

    def nonlinear_hat(
        self, t: Real[Array, ""], u_hat: Complex[Array, "..."], params: PyTree
    ) -> Complex[Array, "..."]:
        """The rfft of `N(t, irfft(u_hat), params)` (dealiased if `dealias`); zeros if `nonlinear` is `None`."""
        if self.nonlinear is None:
            return jnp.zeros_like(u_hat)
        mask = _fourier.dealias_mask(self.grid) if self.dealias else None
        if mask is not None:
            u_hat = jnp.where(mask, u_hat, 0)
        u = _fourier.to_physical(u_hat, self.grid)
        n = jnp.asarray(self.nonlinear(t, u, params, self.grid))
        if n.shape != self.grid.shape:
            raise ValueError(
                f"SemilinearPDE: nonlinear(t, u, params, grid) returned shape {n.shape}, "
                f"but the grid has shape {self.grid.shape}; they must match"
            )
        n_hat = _fourier.to_spectral(n.astype(u.dtype), self.grid)
        return n_hat if mask is None else jnp.where(mask, n_hat, 0)

    def rhs(self, t: Real[Array, ""], y: Float[Array, "..."], params: PyTree) -> Float[Array, "..."]:
        """`L u + N(t, u, params)` in physical space, shape `grid.shape` (method of lines)."""
        self.check_state(y)
        u_hat = _fourier.to_spectral(y, self.grid)
        du_hat = self.linear_symbol(params) * u_hat + self.nonlinear_hat(t, u_hat, params)
        return _fourier.to_physical(du_hat, self.grid).astype(y.dtype)

    def default_method(self) -> AbstractMethod:
        """None: an exponential integrator needs a step size, so the caller must choose one.

        Raises `ValueError` asking for `method=sciax.pde.ETDRK4(dt=...)` (or an
        adaptive `sciax.ode` method for the method-of-lines route).
        """
        raise ValueError(
            "simulate: a SemilinearPDE has no default method, because the exponential "
            "integrators take a fixed step: pass method=sciax.pde.ETDRK4(dt=...) (or ETDRK1/ETDRK2), "
            "or an adaptive ODE method such as method=sciax.ode.Tsit5() / sciax.ode.Kvaerno5() "
            "to integrate by the method of lines"
        )

    def labels(self) -> Labels:
        return self.info

