"""`DiffusionPreconditioner`: the stiff-diffusion inverse that makes Newton–Krylov `BDF` fast on reaction–diffusion.

For `y' = D ∇²y + R(y)` the Newton matrix is `I - c (D ∇² + ∂R/∂y)`. Diffusion is
what makes it stiff and ill-conditioned (eigenvalues down to `-4 d D / h²`); the
reactions are local and, at the step sizes BDF takes, a modest perturbation. So
`(I - c D ∇²)^{-1}`, applied exactly by one FFT/DST/DCT per field
(`sciax.linalg.FastPoisson`), leaves GMRES a near-identity operator to invert —
the "physics-based" preconditioning of Brown & Hindmarsh (1989) and of SUNDIALS'
reaction–diffusion examples (operator splitting as a preconditioner, Knoll &
Keyes, J. Comput. Phys. 193 (2004) 357, §3.3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PyTree

from ..grid import Grid
from ..linalg import AbstractPreconditioner, FastPoisson, laplacian_operator


class _FieldwiseInverse(AbstractPreconditioner):
    """`(I - c D_i ∇²)^{-1}` on every grid-sized slice of every leaf of the state."""

    inverses: tuple[FastPoisson, ...]
    grid_shape: tuple[int, ...] = eqx.field(static=True)
    treedef: jax.tree_util.PyTreeDef = eqx.field(static=True)
    shapes: tuple[tuple[int, ...], ...] = eqx.field(static=True)
    symmetric: bool = eqx.field(static=True)

    def apply(self, r: PyTree[Array]) -> PyTree[Array]:
        leaves = jax.tree_util.tree_leaves(r)
        out = []
        for leaf, inverse in zip(leaves, self.inverses):
            slices = leaf.reshape((-1, *self.grid_shape))
            # A = cD∇² - I is what FastPoisson inverts (negative definite); the result is -(I - cD∇²)^-1 r.
            out.append(-jax.vmap(inverse.apply)(slices).reshape(leaf.shape))
        return jax.tree_util.tree_unflatten(self.treedef, out)

    def structure(self):
        dtype = self.inverses[0].eigenvalues.dtype
        leaves = [jax.ShapeDtypeStruct(shape, dtype) for shape in self.shapes]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


class DiffusionPreconditioner(eqx.Module):
    """`BDF(jacobian="jvp", linear_solver=lineax.GMRES(...), preconditioner=DiffusionPreconditioner(...))`.

    Applies `(I - c D ∇²)^{-1}` exactly (FFT / DST / DCT per axis by the boundary
    condition, `sciax.linalg.FastPoisson`) to each field, ignoring the reactions, which
    the Krylov iteration then resolves in a few steps.

    **Arguments:**

    - `grid`: the `sciax.grid.Grid` the fields live on; `bc`: its boundary condition(s)
      as for `sciax.linalg.laplacian_operator` (periodic, homogeneous Dirichlet or
      Neumann per axis); `order`: the Laplacian's stencil order (2 by default), as in
      the model.
    - `diffusivity`: `D`, a number, one number per leaf of the state, or a function
      `diffusivity(params)` returning either (so `D` may be a fitted parameter).

    Every leaf of the state must hold whole fields on the grid: shape `grid.shape`,
    `(k, *grid.shape)` or a flat `(k * prod(grid.shape),)` (e.g. `concatenate([u, v])`);
    all `k` fields of a leaf share its `D`. Units: `D` in grid units of length² per time.
    """

    grid: Grid = eqx.field(static=True)
    bc: object = eqx.field(static=True)
    diffusivity: float | Sequence[float] | Callable = eqx.field(static=True)
    order: int = eqx.field(static=True, default=2)

    def __check_init__(self):
        if not isinstance(self.grid, Grid):
            raise TypeError(f"DiffusionPreconditioner: grid must be a sciax.grid.Grid, got {type(self.grid).__name__}")

    def __call__(self, t, y: PyTree[Array], c, params) -> _FieldwiseInverse:
        leaves, treedef = jax.tree_util.tree_flatten(y)
        size = int(np.prod(self.grid.shape))
        for leaf in leaves:
            if leaf.size % size:
                raise ValueError(
                    f"DiffusionPreconditioner: a state leaf of shape {leaf.shape} does not hold whole fields on the "
                    f"grid of shape {self.grid.shape}"
                )
        d = self.diffusivity(params) if callable(self.diffusivity) else self.diffusivity
        ds = list(d) if isinstance(d, (list, tuple)) else [d] * len(leaves)
        if len(ds) != len(leaves):
            raise ValueError(
                f"DiffusionPreconditioner: diffusivity has {len(ds)} values for a state with {len(leaves)} leaves"
            )
        c = jax.lax.stop_gradient(c)
        inverses = tuple(
            FastPoisson(laplacian_operator(self.grid, self.bc, order=self.order, scale=c * jnp.asarray(di), shift=-1.0))
            for di in ds
        )
        shapes = tuple(tuple(leaf.shape) for leaf in leaves)
        return _FieldwiseInverse(
            inverses=inverses, grid_shape=self.grid.shape, treedef=treedef, shapes=shapes, symmetric=True
        )


__all__ = ["DiffusionPreconditioner"]
