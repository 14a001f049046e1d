"""Reaction–diffusion and phase-field equations on periodic grids in 1, 2 or 3 dimensions.

Each function returns a `SemilinearPDE`. The split into a stiff linear part `L`
(diagonal in Fourier space) and a nonlinear part `N` is stated per equation: it
matters for the exponential steppers, whose result depends on it at the level of
the time-discretisation error. Polynomial nonlinearities are dealiased by the
rule for their degree unless `dealias=` says otherwise (`1/2` for cubic terms).
"""

from __future__ import annotations

import jax.numpy as jnp

from ..._param_spec import ParamSpec
from ...grid import Grid
from ...grid.fourier import laplacian_symbol, to_physical, to_spectral
from ._semilinear import SemilinearPDE


def scalar_params(equation: str, *names: str, optional: tuple[str, ...] = ()) -> ParamSpec:
    """The declaration of a catalogue equation's params: a dict of scalars `names`
    (checked by `sciax.simulate`, which then names what is missing or misshapen)."""
    names = names + tuple(n for n in optional if n not in names)
    return ParamSpec.build({n: () for n in names}, f"sciax.pde.spectral.{equation}()", optional=optional)


def param(p, key: str, equation: str):
    """`p[key]`, or a `KeyError` naming the equation and the params it needs."""
    try:
        return p[key]
    except (KeyError, TypeError, IndexError):
        raise KeyError(f"{equation}: params must be a dict with key {key!r}, got {p!r:.120}") from None


def _k2(k):
    return sum(ki**2 for ki in k)


# --- Allen–Cahn: u_t = eps lap(u) + u - u^3;  L = -eps |k|^2 + 1,  N = -u^3


def _allen_cahn_linear(k, p):
    return 1.0 - param(p, "epsilon", "allen_cahn") * _k2(k)


def _allen_cahn_nonlinear(t, u, p, grid):
    return -(u**3)


def allen_cahn(grid: Grid, *, dealias: bool | float = 0.5, bc=None) -> SemilinearPDE:
    """Allen–Cahn equation `u_t = epsilon * laplacian(u) + u - u^3` (1-3 D).

    Params: `{"epsilon": diffusion coefficient}` (length^2/time); the stable phases are
    `u = +-1`, joined by fronts of width ~ `sqrt(2 epsilon)` (1-D steady kink
    `tanh(x / sqrt(2 epsilon))`). Split: `L = 1 - epsilon |k|^2`, `N = -u^3`
    (the split of Kassam & Trefethen 2005 and of exponax's `AllenCahn`).
    """
    return SemilinearPDE(
        grid,
        _allen_cahn_linear,
        _allen_cahn_nonlinear,
        dealias=dealias,
        bc=bc,
        long_name="phase field",
        param_shapes=scalar_params("allen_cahn", "epsilon"),
    )


# --- Cahn–Hilliard: u_t = M lap(u^3 - u - gamma lap u);  L = M (|k|^2 - gamma |k|^4),  N = M lap(u^3)


def _cahn_hilliard_linear(k, p):
    k2 = _k2(k)
    return param(p, "mobility", "cahn_hilliard") * (k2 - param(p, "gamma", "cahn_hilliard") * k2**2)


def _cahn_hilliard_nonlinear(t, u_hat, p, grid):
    cube = to_spectral(to_physical(u_hat, grid) ** 3, grid)
    return param(p, "mobility", "cahn_hilliard") * laplacian_symbol(grid) * cube


def cahn_hilliard(grid: Grid, *, dealias: bool | float = 0.5, bc=None) -> SemilinearPDE:
    """Cahn–Hilliard equation `u_t = M laplacian(u^3 - u - gamma laplacian(u))` (1-3 D).

    Params: `{"mobility": M, "gamma": gamma}` (`gamma` = interface energy, length^2).
    Conserves the mean of `u`; modes with `|k|^2 < 1/gamma` grow (spinodal
    decomposition). Split: `L = M (|k|^2 - gamma |k|^4)`, `N = M laplacian(u^3)`.
    """
    return SemilinearPDE(
        grid,
        _cahn_hilliard_linear,
        nonlinear_spectral=_cahn_hilliard_nonlinear,
        dealias=dealias,
        bc=bc,
        long_name="concentration",
        param_shapes=scalar_params("cahn_hilliard", "mobility", "gamma"),
    )


# --- Swift–Hohenberg: u_t = r u - (kc^2 + lap)^2 u + g u^2 - u^3


def _swift_hohenberg_linear(k, p):
    kc = param(p, "kc", "swift_hohenberg")
    return param(p, "r", "swift_hohenberg") - (kc**2 - _k2(k)) ** 2


def _swift_hohenberg_nonlinear(t, u, p, grid):
    return param(p, "g", "swift_hohenberg") * u**2 - u**3


def swift_hohenberg(grid: Grid, *, dealias: bool | float = 0.5, bc=None) -> SemilinearPDE:
    """Swift–Hohenberg equation `u_t = r u - (kc^2 + laplacian)^2 u + g u^2 - u^3` (1-3 D).

    Params: `{"r": control parameter, "kc": critical wavenumber, "g": quadratic coefficient}`
    (`g = 0` for the symmetric equation). Patterns of wavelength `2 pi / kc`
    form for `r > 0`. Split: `L = r - (kc^2 - |k|^2)^2`, `N = g u^2 - u^3`.
    """
    return SemilinearPDE(
        grid,
        _swift_hohenberg_linear,
        _swift_hohenberg_nonlinear,
        dealias=dealias,
        bc=bc,
        param_shapes=scalar_params("swift_hohenberg", "r", "kc", "g"),
    )


# --- Gray–Scott: u_t = Du lap u - u v^2 + F (1 - u),  v_t = Dv lap v + u v^2 - (F + kappa) v


def _gray_scott_linear(k, p):
    k2 = _k2(k)
    return jnp.stack([-param(p, "Du", "gray_scott") * k2, -param(p, "Dv", "gray_scott") * k2])


def _gray_scott_nonlinear(t, y, p, grid):
    u, v = y[0], y[1]
    f, kappa = param(p, "F", "gray_scott"), param(p, "kappa", "gray_scott")
    uv2 = u * v**2
    return jnp.stack([f * (1 - u) - uv2, uv2 - (f + kappa) * v])


def gray_scott(grid: Grid, *, dealias: bool | float = 0.5, bc=None) -> SemilinearPDE:
    """Gray–Scott reaction–diffusion system (Pearson, Science 261 (1993) 189), two fields `(u, v)`.

    `u_t = Du laplacian(u) - u v^2 + F (1 - u)`,  `v_t = Dv laplacian(v) + u v^2 - (F + kappa) v`.
    State shape `(2, *grid.shape)`. Params: `{"Du", "Dv"}` (length^2/time), `{"F", "kappa"}`
    (feed and kill rates, 1/time). Split: `L = diag(-Du |k|^2, -Dv |k|^2)`, `N` = the reactions.
    """
    return SemilinearPDE(
        grid,
        _gray_scott_linear,
        _gray_scott_nonlinear,
        fields=("u", "v"),
        dealias=dealias,
        bc=bc,
        variable="concentration",
        param_shapes=scalar_params("gray_scott", "Du", "Dv", "F", "kappa"),
    )
