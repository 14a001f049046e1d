"""`AbstractSemilinearPDE`: what the spectral steppers need of a model, `u_t = L u + N(t, u, params)`."""

from __future__ import annotations

import abc
from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Complex, Float, PyTree, Real

from ..._method import AbstractMethod
from ..._model import AbstractModel
from ...grid import Grid, fourier


class AbstractSemilinearPDE(AbstractModel):
    """A model `u_t = L u + N(t, u, params)` on a periodic grid with `L` diagonal in Fourier space.

    The interface of the spectral steppers (`sciax.pde.ETDRK4`, `IFRK4`, `CNAB2`) and of the
    distributed FFT of `sciax.parallel.shard`. Concrete models: `sciax.pde.SemilinearPDE` (an
    equation given by its symbol and nonlinear term) and `sciax.pde.learned.SpectralCorrected`
    (a model plus a learned correction in `N`).

    A subclass gives `grid` (a periodic `sciax.pde.Grid`), `state_shape`, `linear_symbol`,
    `nonlinear_hat` and `on_grid`; this base gives the method-of-lines right-hand side `rhs`,
    the IMEX split and `max_growth_rate` from them.
    """

    grid: eqx.AbstractVar[Grid]

    @property
    @abc.abstractmethod
    def state_shape(self) -> tuple[int, ...]:
        """The state's shape: `grid.shape`, or `(C, *grid.shape)` for `C` fields."""

    @abc.abstractmethod
    def linear_symbol(self, params: PyTree) -> Complex[Array, "..."]:
        """The symbol of `L` in the rfft layout of the state (1/time units); differentiable in `params`."""

    @abc.abstractmethod
    def nonlinear_hat(self, t: Real[Array, ""], u_hat: Complex[Array, "..."], params: PyTree) -> Complex[Array, "..."]:
        """The rfft of `N(t, u, params)` from `u_hat = rfft(u)`, the rfft layout of the state."""

    @abc.abstractmethod
    def on_grid(self, grid: Grid) -> AbstractSemilinearPDE:
        """The same model with its FFTs on `grid` (e.g. a `sciax.parallel` sharded grid of the same shape)."""

    def max_growth_rate(self, params: PyTree) -> Real[Array, ""]:
        """`max Re(L)` over all modes (1/time): the fastest exponential growth of the linear part."""
        return jnp.max(jnp.real(self.linear_symbol(params)))

    def rhs(self, t: Real[Array, ""], y: Float[Array, "..."], params: PyTree) -> Float[Array, "..."]:
        """`L u + N(t, u, params)` in physical space, the state's shape (method of lines)."""
        self.check_state(y)
        u_hat = fourier.to_spectral(y, self.grid)
        du_hat = self.linear_symbol(params) * u_hat + self.nonlinear_hat(t, u_hat, params)
        return fourier.to_physical(du_hat, self.grid).astype(y.dtype)

    def imex_split(self) -> tuple[Callable, Callable]:
        """`(N, L)` as physical-space right-hand sides, for the `sciax.ode` IMEX methods (`KenCarp*`)."""

        def explicit(t, y, params):
            u_hat = fourier.to_spectral(y, self.grid)
            return fourier.to_physical(self.nonlinear_hat(t, u_hat, params), self.grid).astype(y.dtype)

        def implicit(t, y, params):
            u_hat = fourier.to_spectral(y, self.grid)
            return fourier.to_physical(self.linear_symbol(params) * u_hat, self.grid).astype(y.dtype)

        return explicit, implicit

    def default_method(self) -> AbstractMethod:
        """None: a spectral stepper needs a step size, so the caller must choose one.

        Raises `ValueError` asking for `method=sciax.pde.ETDRK4(dt=...)` (or an
        adaptive `sciax.ode` method for the method-of-lines route).
        """
        raise ValueError(
            f"simulate: a {type(self).__name__} has no default method, because the spectral steppers "
            "take a fixed step: pass method=sciax.pde.ETDRK4(dt=...) (or ETDRK1/ETDRK2, IFRK4, CNAB2), "
            "or an adaptive ODE method such as method=sciax.ode.Tsit5() / sciax.ode.Kvaerno5() "
            "to integrate by the method of lines"
        )
