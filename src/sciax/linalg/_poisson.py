"""`solve_fd_poisson`: the finite-difference Poisson/Helmholtz problem with boundary values, in one call."""

from __future__ import annotations

from jaxtyping import ArrayLike, Float

from ..grid import Grid
from ._operator import laplacian_operator
from ._solve import LinearSolveResult, solve


def solve_fd_poisson(
    f: Float[ArrayLike, "*grid"],
    grid: Grid,
    bc,
    *,
    order: int = 2,
    shift: Float[ArrayLike, ""] = 0.0,
    method: str = "fast",
    t: ArrayLike = 0.0,
    **options,
) -> LinearSolveResult:
    """Solve `laplacian(u) + shift * u = f` on `grid`, the boundary conditions `bc` included.

    `bc` may carry values (`Dirichlet(g)`, `Neumann(flux)`, per side); they move to the
    right-hand side (`f - A.offset(t)`). `method="fast"` (FFT/DST/DCT, exact to round-off;
    same kind of condition on both sides of each axis), `"multigrid"`, `"cg"` (with
    `preconditioner=`), ... as for `sciax.linalg.solve`, which gets `options`.
    Pure Neumann/periodic with `shift = 0` needs `sum(f - offset) = 0` (sources balance
    boundary fluxes): raises unless `project=True`; returns the zero-mean solution.
    For the spectral (not finite-difference) periodic solve see `sciax.pde.spectral.solve_poisson`.
    Differentiable in `f` and `shift`.
    """
    op = laplacian_operator(grid, bc, order=order, shift=shift)
    return solve(op, f - op.offset(t), method, **options)
