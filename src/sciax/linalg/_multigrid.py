"""`Multigrid`: geometric multigrid V-cycles on a `GridOperator`, as a preconditioner or a solver.

The hierarchy rediscretises the operator on ever coarser cell-centred grids
(pairs of cells merged per axis while every axis has an even number >= 4 of
points; grid-shaped coefficients are cell-averaged), smooths with weighted
Jacobi or red–black Gauss–Seidel, transfers with linear interpolation and its
transpose (`_transfer.py`) and solves the coarsest level with a precomputed
pseudo-inverse (so singular pure-Neumann/periodic problems work too). The
coarsest level may have any (odd) size up to `COARSEST_LIMIT` points: a grid
that does not coarsen at all (e.g. 13 x 13) is a one-level "hierarchy" whose
cycle is the dense solve, refined against the current iterate.
Reference: W. L. Briggs, V. E. Henson, S. F. McCormick, *A Multigrid Tutorial*,
2nd ed., SIAM (2000); cell-centred transfers: U. Trottenberg, C. W. Oosterlee,
A. Schüller, *Multigrid*, Academic Press (2001), §2.8.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jaxtyping import Array, Float

from ._operator import GridOperator
from ._preconditioner import AbstractPreconditioner
from ._transfer import can_coarsen, coarse_grid, prolong, restrict, restrict_field

COARSEST_LIMIT = 2048  # largest coarsest level (points) solved densely


@eqx.filter_jit
def _setup(levels):
    # One compiled call for the smoother diagonals and the coarsest pseudo-inverse.
    return tuple(level.diagonal() for level in levels[:-1]), jnp.linalg.pinv(levels[-1].as_dense())


class Multigrid(AbstractPreconditioner):
    """One (or `cycles`) geometric multigrid V-cycle(s) from a zero initial guess: `M r ~ A^{-1} r`.

    **Arguments:**

    - `operator`: a `sciax.linalg.GridOperator` (1-3 D; Periodic, Dirichlet, Neumann).
      Size rule: all axes are halved together while every axis has an even number
      >= 4 of points (and the grid more than 16 points); the coarsest grid reached
      is solved densely and must have at most 2048 points. So give every axis
      `2^k m` points with a small `m` (e.g. 64, 96, 128); odd sizes are fine when
      the whole grid is small (13 x 13, 17 x 17: one dense level). Larger grids
      raise a `ValueError` naming the shape.
    - `smoother`: `"rbgs"` (red–black Gauss–Seidel; stencils of radius 1, i.e. order 2)
      or `"jacobi"` (weighted Jacobi, any stencil). Default: `"rbgs"` when the
      stencil has radius 1, else `"jacobi"`.
    - `pre`, `post`: smoothing sweeps before and after the coarse correction.
    - `omega`: Jacobi weight; default `2d / (2d + 1)` for radius 1 (optimal for the
      `2d+1`-point Laplacian), `2/3` otherwise.
    - `cycles`: V-cycles per application.

    The V-cycle is symmetric (post-smoothing is the adjoint of pre-smoothing and
    restriction is the scaled transpose of prolongation), so for a symmetric
    definite `A` it is a valid CG preconditioner. Assumes near-isotropic spacing
    and smooth coefficients (point smoothers, no semi-coarsening). Arrays are
    constants for differentiation. Use it as `solve(..., method="multigrid")` too.
    """

    levels: tuple[GridOperator, ...]
    diags: tuple[Float[Array, "..."], ...]
    coarse_inverse: Float[Array, "n n"]
    smoother: str = eqx.field(static=True)
    pre: int = eqx.field(static=True)
    post: int = eqx.field(static=True)
    omega: float = eqx.field(static=True)
    cycles: int = eqx.field(static=True)
    symmetric: bool = eqx.field(static=True)

    def __init__(
        self,
        operator: GridOperator,
        *,
        smoother: str | None = None,
        pre: int = 2,
        post: int = 2,
        omega: float | None = None,
        cycles: int = 1,
    ):
        if not isinstance(operator, GridOperator):
            raise TypeError(
                f"Multigrid: operator must be a sciax.linalg.GridOperator (e.g. sciax.linalg.laplacian_operator), "
                f"got {type(operator).__name__}; geometric multigrid needs the grid and the stencil"
            )
        if smoother is None:
            smoother = "rbgs" if operator.radius == 1 else "jacobi"
        if smoother not in ("rbgs", "jacobi"):
            raise ValueError(f"Multigrid: smoother must be 'rbgs' or 'jacobi', got {smoother!r}")
        if smoother == "rbgs" and operator.radius != 1:
            raise ValueError(
                f"Multigrid: smoother='rbgs' needs a stencil of radius 1 (order 2), this one has radius "
                f"{operator.radius}; use smoother='jacobi'"
            )
        for name, value in (("pre", pre), ("post", post), ("cycles", cycles)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, np.integer))
                or value < (1 if name == "cycles" else 0)
            ):
                raise ValueError(f"Multigrid: {name} must be a non-negative integer (cycles >= 1), got {value!r}")
        op = jax.lax.stop_gradient(operator)
        levels = [op]
        while can_coarsen(levels[-1].grid) and levels[-1].grid.size > 16:
            grid = coarse_grid(levels[-1].grid)
            levels.append(levels[-1].coarsen(grid, restrict_field))
        last = levels[-1]
        if last.grid.size > COARSEST_LIMIT:
            raise ValueError(
                f"Multigrid: grid shape {operator.grid.shape} coarsens only to {last.grid.shape} "
                f"({last.grid.size} points > {COARSEST_LIMIT}, the largest coarsest grid solved densely). "
                "Size rule: all axes are halved together while every axis has an even number >= 4 of points, so "
                "give every axis 2^k m points with a small m (e.g. 64, 96, 128), or use method='cg'/'gmres' "
                "(with preconditioner=sciax.linalg.Jacobi(A)) for this shape"
            )
        self.levels = tuple(levels)
        self.diags, self.coarse_inverse = _setup(self.levels)
        d = operator.grid.ndim
        self.omega = float(omega) if omega is not None else (2 * d / (2 * d + 1) if operator.radius == 1 else 2 / 3)
        self.smoother, self.pre, self.post, self.cycles = smoother, int(pre), int(post), int(cycles)
        self.symmetric = lx.symmetric_tag in operator.tags

    def structure(self):
        return self.levels[0].structure()

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """Grid shape of every level, finest first (the last one is solved densely)."""
        return tuple(level.grid.shape for level in self.levels)

    def apply(self, r: Float[Array, "*grid"]) -> Float[Array, "*grid"]:
        x = self.vcycle(r, None)
        for _ in range(self.cycles - 1):
            x = self.vcycle(r, x)
        return x

    def vcycle(
        self, b: Float[Array, "*grid"], x: Float[Array, "*grid"] | None, level: int = 0
    ) -> Float[Array, "*grid"]:
        """One V-cycle for `A_level x = b` from the guess `x` (`None`: zero); returns the improved `x`."""
        op = self.levels[level]
        if level == len(self.levels) - 1:
            # The dense solve corrects the current iterate rather than replacing it: when the
            # finest level is the coarsest (a grid that does not coarsen), repeated cycles are
            # then iterative refinement of the pseudo-inverse instead of the same answer again.
            r = b if x is None else b - op.mv(x)
            e = (self.coarse_inverse @ r.reshape(-1)).reshape(b.shape)
            return e if x is None else x + e
        x = self._smooth(level, b, jnp.zeros_like(b) if x is None else x, self.pre, forward=True)
        coarse = self.levels[level + 1].grid
        rc = restrict(b - op.mv(x), coarse, op.sides)
        ec = self.vcycle(rc, None, level + 1)
        x = x + prolong(ec, coarse, op.sides)
        return self._smooth(level, b, x, self.post, forward=False)

    def _smooth(self, level, b, x, sweeps, *, forward):
        op, diag = self.levels[level], self.diags[level]
        if self.smoother == "jacobi":
            for _ in range(sweeps):
                x = x + self.omega * (b - op.mv(x)) / diag
            return x
        red = jnp.asarray(np.indices(op.grid.shape).sum(axis=0) % 2 == 0, b.dtype)
        colours = (red, 1 - red) if forward else (1 - red, red)
        for _ in range(sweeps):
            for mask in colours:
                x = x + mask * (b - op.mv(x)) / diag
        return x
