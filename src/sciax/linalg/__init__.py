"""Linear and nonlinear solvers for grids, over lineax and optimistix (`sciax.linalg`).

lineax solves linear systems and optimistix nonlinear ones; this package adds
what they lack for PDEs:

- Operators: `GridOperator`, any FD stencil on a `sciax.pde.Grid` with its boundary
  conditions, matrix-free with lineax tags (`laplacian_operator`, `diffusion_operator`,
  `stencil_operator`); `.as_lineax()`, `.as_dense()`, `.as_sparse()` (BCOO).
- `solve(operator, b, method=None, *, rtol, atol, max_steps, preconditioner, throw)`:
  CG, BiCGStab, GMRES (restarted), LU/Cholesky/QR (dense), multigrid, fast; returns a
  `LinearSolveResult` with iterations and the final residual.
- Preconditioners: `Jacobi`, `Multigrid` (geometric V-cycles, 1-3 D, Dirichlet/Neumann/
  periodic; also `method="multigrid"`), `FastPoisson` (exact inverse); from a sparse
  matrix `BlockJacobi` (`point_blocks`, `contiguous_blocks`) and `IncompleteLU` (host
  ILU); for stiff Newton–Krylov solvers (`BDF(jacobian="jvp", preconditioner=...)`) the
  factories `JacobianPreconditioner` (either, from a coloured sparse Jacobian) and
  `OperatorSplit` (two chained, e.g. FFT diffusion then reaction blocks; `Composed`).
- Fast direct solvers: `FastPoisson` / `solve_fd_poisson` (FFT periodic, DST Dirichlet,
  DCT Neumann). The spectral periodic solve is `sciax.pde.spectral.solve_poisson`.
- Sparse Jacobians: `sparse_jacobian(fn, x, pattern)` (one `jvp` per colour of
  `column_colouring(pattern)`, a `BCOO`), `stencil_pattern` (the pattern of an FD
  right-hand side), `check_sparsity_pattern`, `SparsityPattern` (hashable, static),
  `detect_sparsity` (numerical, from `jvp`s at random states), `jacobian_sparsity`
  (symbolic, index sets propagated through the jaxpr; no state needed).
- Sparse direct solves: `sparse_solve(values, b, pattern)` with `SparseLU` (SuperLU on
  the host, factorisations memoised by value, differentiable, `vmap`-able).
- Nonlinear: `newton_krylov` (optimistix Newton + preconditioned Krylov), `steady_state`.
- lineax solvers usable anywhere lineax takes one: `MultigridSolver`, `DirectSolver`,
  `Preconditioned`, and `UnrolledLU` (small dense systems, fast under `vmap`; the
  default stage solver of the Rosenbrock methods up to 12 states; `small_dense_solver(n)`
  picks it or `lineax.LU()` by size; its factor/solve as `lu_factor_unrolled`, `lu_solve_unrolled`).

Implicit time steppers built on these are `sciax.pde.BackwardEuler` and
`sciax.pde.CrankNicolson`.
"""

from ._block_jacobi import BlockJacobi, contiguous_blocks, point_blocks
from ._fast_poisson import FastPoisson, dst2, idst2
from ._incomplete_lu import IncompleteLU
from ._jacobian_preconditioner import Composed, JacobianPreconditioner, OperatorSplit
from ._lineax_solvers import DirectSolver, MultigridSolver, Preconditioned
from ._multigrid import Multigrid
from ._newton_krylov import newton_krylov, steady_state
from ._operator import GridOperator, diffusion_operator, laplacian_operator, stencil_operator
from ._poisson import solve_fd_poisson
from ._preconditioner import AbstractFlatPreconditioner, AbstractPreconditioner, Jacobi
from ._solve import LinearSolveResult, solve
from ._sparse_jacobian import check_sparsity_pattern, column_colouring, sparse_jacobian, stencil_pattern
from ._sparse_lu import SparseLU, sparse_solve
from ._sparsity_detection import detect_sparsity
from ._sparsity_pattern import SparsityPattern
from ._sparsity_tracer import SparsityTracerError, jacobian_sparsity
from ._unrolled_lu import UnrolledLU, lu_factor_unrolled, lu_solve_unrolled, small_dense_solver

__all__ = [
    "GridOperator",
    "laplacian_operator",
    "diffusion_operator",
    "stencil_operator",
    "solve",
    "LinearSolveResult",
    "AbstractPreconditioner",
    "Jacobi",
    "AbstractFlatPreconditioner",
    "BlockJacobi",
    "point_blocks",
    "contiguous_blocks",
    "IncompleteLU",
    "JacobianPreconditioner",
    "OperatorSplit",
    "Composed",
    "Multigrid",
    "FastPoisson",
    "solve_fd_poisson",
    "dst2",
    "idst2",
    "newton_krylov",
    "steady_state",
    "MultigridSolver",
    "DirectSolver",
    "Preconditioned",
    "UnrolledLU",
    "small_dense_solver",
    "lu_factor_unrolled",
    "lu_solve_unrolled",
    "sparse_jacobian",
    "column_colouring",
    "check_sparsity_pattern",
    "stencil_pattern",
    "SparsityPattern",
    "SparseLU",
    "sparse_solve",
    "detect_sparsity",
    "jacobian_sparsity",
    "SparsityTracerError",
]
