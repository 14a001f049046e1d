"""Classic semilinear PDEs on a periodic grid, ready to simulate with `sciax.pde.ETDRK4`.

Each function returns a `SemilinearPDE`. The quadratic nonlinearities are
written in conservative form `(u^2)_x / 2` and dealiased by the 2/3 rule
unless `dealias=False`. Every equation takes `bc=` (periodic only; anything else
raises `ValueError` pointing to the finite-difference models in `sciax.pde.fd`), and
declares its params, so `sciax.simulate` names a missing or misshapen one.
"""

from __future__ import annotations

from ...grid import Grid
from ...grid.fourier import derivative_symbol, to_physical, to_spectral
from ._reaction import scalar_params
from ._semilinear import SemilinearPDE


def _require_1d(grid: Grid, name: str) -> None:
    if not isinstance(grid, Grid):
        raise TypeError(f"{name}: grid must be a sciax.pde.Grid, got {type(grid).__name__}")
    if grid.ndim != 1:
        raise ValueError(f"{name}: this equation is 1-D; got a {grid.ndim}-D grid of shape {grid.shape}")


def _diffusion(k, p):
    return -p["nu"] * sum(ki**2 for ki in k)


def heat(grid: Grid, *, bc=None) -> SemilinearPDE:
    """Heat equation `u_t = nu * laplacian(u)` in 1, 2 or 3 dimensions.

    Params: `{"nu": diffusivity}` (length^2/time). Linear, so `ETDRK*` are exact.
    """
    return SemilinearPDE(
        grid, _diffusion, None, bc=bc, long_name="temperature", param_shapes=scalar_params("heat", "nu")
    )


def _burgers_nonlinear(t, u_hat, p, grid):
    # in Fourier space: one inverse and one forward FFT per evaluation
    return -0.5 * derivative_symbol(grid) * to_spectral(to_physical(u_hat, grid) ** 2, grid)


def burgers(grid: Grid, *, dealias: bool | float = True, bc=None) -> SemilinearPDE:
    """Viscous Burgers equation `u_t + u u_x = nu u_xx` (1-D).

    Params: `{"nu": viscosity}` (length^2/time). Exact periodic solutions by the
    Cole–Hopf transform `u = -2 nu phi_x / phi` with `phi_t = nu phi_xx`.
    """
    _require_1d(grid, "burgers")
    return SemilinearPDE(
        grid,
        _diffusion,
        nonlinear_spectral=_burgers_nonlinear,
        dealias=dealias,
        bc=bc,
        long_name="velocity",
        param_shapes=scalar_params("burgers", "nu"),
    )


def _ks_linear(k, p):
    return k[0] ** 2 - k[0] ** 4


def kuramoto_sivashinsky(grid: Grid, *, dealias: bool | float = True, bc=None) -> SemilinearPDE:
    """Kuramoto–Sivashinsky equation `u_t = -u_xx - u_xxxx - u u_x` (1-D, no params: pass `None`).

    Modes with `0 < |k| < 1` grow; chaotic for domains longer than a few times `2 pi`.
    """
    _require_1d(grid, "kuramoto_sivashinsky")
    return SemilinearPDE(
        grid,
        _ks_linear,
        nonlinear_spectral=_burgers_nonlinear,
        dealias=dealias,
        bc=bc,
        param_shapes=scalar_params("kuramoto_sivashinsky"),  # none
    )


def _kdv_linear(k, p):
    return -((1j * k[0]) ** 3)  # the symbol of -d^3/dx^3, i k^3


def _kdv_nonlinear(t, u_hat, p, grid):
    return -3.0 * derivative_symbol(grid) * to_spectral(to_physical(u_hat, grid) ** 2, grid)


def kdv(grid: Grid, *, dealias: bool | float = True, bc=None) -> SemilinearPDE:
    """Korteweg–de Vries equation `u_t + 6 u u_x + u_xxx = 0` (1-D, no params: pass `None`).

    Solitons `u = (c/2) sech^2(sqrt(c)/2 (x - c t - x0))` travel at speed `c`.
    Dispersive: the linear symbol `i k^3` is imaginary.
    """
    _require_1d(grid, "kdv")
    return SemilinearPDE(
        grid,
        _kdv_linear,
        nonlinear_spectral=_kdv_nonlinear,
        dealias=dealias,
        bc=bc,
        param_shapes=scalar_params("kdv"),  # none
    )
