"""Preconditioner factories for Newton–Krylov stiff solvers: from a sparse Jacobian, and operator splits.

A stiff solver's Newton matrix `I - cJ` changes with `c = h/α` and with the state,
so a preconditioner is rebuilt from them: `sciax.ode.BDF(jacobian="jvp", ...,
preconditioner=P)` calls `P(t, y, c, params)` whenever `c` changes.
`JacobianPreconditioner` builds `J` by colouring (`sparse_jacobian`, one `jvp` per
colour of the pattern) and returns block-Jacobi or incomplete-LU preconditioning of
`I - cJ`; `OperatorSplit` chains two such factories into the operator-split product
`(I - cB)^{-1} (I - cA)^{-1}` of `(I - c(A + B))^{-1}` (error `O(c^2 AB)`; Knoll &
Keyes, J. Comput. Phys. 193 (2004) 357, §3.3), e.g. the FFT inverse of the
diffusion (`sciax.ode.DiffusionPreconditioner`) then block-Jacobi on the reactions.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, PyTree

from ._block_jacobi import BlockJacobi, check_blocks, contiguous_blocks, point_blocks
from ._incomplete_lu import IncompleteLU
from ._preconditioner import AbstractPreconditioner
from ._sparse_jacobian import sparse_jacobian
from ._sparsity_pattern import SparsityPattern

_KINDS = ("block_jacobi", "ilu")


class JacobianPreconditioner(eqx.Module):
    """`P(t, y, c, params)`: a preconditioner of `I - cJ`, `J = ∂rhs/∂y` by colouring on a sparsity pattern.

    **Arguments:**

    - `rhs`: the right-hand side `rhs(t, y, params)` whose Jacobian is used (e.g.
      `model.rhs`, or only its reaction part for `OperatorSplit`).
    - `pattern`: `J`'s sparsity over the flattened state (`SparsityPattern`, scipy sparse,
      `BCOO`; e.g. `model.jacobian_sparsity(y0)` or `sciax.linalg.jacobian_sparsity`).
      It must contain every nonzero of `J` (check with `check_sparsity_pattern`).
    - `kind`: `"block_jacobi"` (`BlockJacobi` of `I - cJ`; exact when `J` is
      block-diagonal) or `"ilu"` (`IncompleteLU` of `I - cJ`, on the host).
    - `fields`: for block-Jacobi, blocks of the species at each grid point of a
      field-major state (`point_blocks`); or `block_size`: consecutive blocks
      (`contiguous_blocks`); or `blocks`: an explicit `(num_blocks, size)` index array.
      Exactly one of them.
    - `ilu_options`: `drop_tol`, `fill_factor`, `ordering` of `IncompleteLU`.

    Cost per build: one `jvp` of `rhs` per colour of `pattern` (2 for a block-diagonal
    reaction Jacobian of two species, ~10 for a two-species five-point stencil) plus
    the factorisation. `jit`/`vmap` safe; treated as a constant by the solver.
    """

    rhs: Callable = eqx.field(static=True)
    pattern: SparsityPattern = eqx.field(static=True, converter=lambda p: SparsityPattern(p, with_diagonal=True))
    kind: str = eqx.field(static=True, default="block_jacobi")
    fields: int | None = eqx.field(static=True, default=None)
    block_size: int | None = eqx.field(static=True, default=None)
    blocks: tuple | None = eqx.field(static=True, default=None, converter=lambda b: _as_tuple(b))
    ilu_options: tuple = eqx.field(static=True, default=(), converter=lambda o: tuple(sorted(dict(o).items())))

    def __check_init__(self):
        if not callable(self.rhs):
            raise TypeError(f"JacobianPreconditioner: rhs must be a function rhs(t, y, params), got {self.rhs!r}")
        if self.kind not in _KINDS:
            raise ValueError(f"JacobianPreconditioner: kind must be one of {_KINDS}, got {self.kind!r}")
        given = sum(x is not None for x in (self.fields, self.block_size, self.blocks))
        if self.kind == "block_jacobi" and given != 1:
            raise ValueError(
                "JacobianPreconditioner: kind='block_jacobi' needs exactly one of fields=, block_size= or blocks="
            )
        if self.kind == "ilu" and given:
            raise ValueError("JacobianPreconditioner: fields=, block_size= and blocks= are for kind='block_jacobi'")

    def __call__(self, t, y: PyTree[Array], c, params) -> AbstractPreconditioner:
        y_flat, unravel = ravel_pytree(y)
        n = y_flat.size
        if self.pattern.shape != (n, n):
            raise ValueError(
                f"JacobianPreconditioner: the sparsity pattern has shape {self.pattern.shape}, but the state has "
                f"{n} entries (flattened), so it must be ({n}, {n})"
            )
        y_flat, t, c = (jax.lax.stop_gradient(x) for x in (y_flat, t, c))

        def fn(x):
            return ravel_pytree(self.rhs(t, unravel(x), params))[0]

        jac = sparse_jacobian(fn, y_flat, self.pattern).data
        c = jnp.asarray(c, jac.dtype)
        if self.kind == "ilu":
            return IncompleteLU.newton(jac, self.pattern, c, y, **dict(self.ilu_options))
        return BlockJacobi.newton(jac, self.pattern, c, self._blocks(n), y)

    def _blocks(self, n: int):
        if self.fields is not None:
            return point_blocks(n, self.fields)
        if self.block_size is not None:
            return contiguous_blocks(n, self.block_size)
        return check_blocks(self.blocks, n)


class Composed(AbstractPreconditioner):
    """`M r = second(first(r))`: apply `first`, then `second` (the inverse of a product `A_second A_first`)."""

    first: AbstractPreconditioner
    second: AbstractPreconditioner
    symmetric: bool = eqx.field(static=True)

    def __check_init__(self):
        a, b = (jax.tree_util.tree_flatten(p.structure()) for p in (self.first, self.second))
        shapes_a, shapes_b = ([leaf.shape for leaf in leaves] for leaves, _ in (a, b))
        if a[1] != b[1] or shapes_a != shapes_b:
            raise ValueError(
                f"Composed: {type(self.first).__name__} acts on states with leaves of shapes {shapes_a}, "
                f"{type(self.second).__name__} on {shapes_b}; they must match"
            )

    def apply(self, r):
        return self.second.apply(self.first.apply(r))

    def structure(self):
        return self.first.structure()


class OperatorSplit(eqx.Module):
    """`P(t, y, c, params)` chaining two preconditioner factories: `first`'s, then `second`'s.

    For `J = A + B` (e.g. diffusion + reactions), `first` approximating `(I - cA)^{-1}`
    and `second` `(I - cB)^{-1}`, the result approximates `(I - cJ)^{-1}` up to
    `O(c^2 AB)`. Typical: `OperatorSplit(DiffusionPreconditioner(grid, bc, D),
    JacobianPreconditioner(reactions, reaction_pattern, fields=k))`, where
    `reactions(t, y, params)` is the right-hand side without diffusion (its pattern
    block-diagonal, so two `jvp`s build it). Both must act on states shaped like `y`
    (else a `ValueError` names both).
    """

    first: Callable = eqx.field(static=True)
    second: Callable = eqx.field(static=True)

    def __call__(self, t, y, c, params) -> Composed:
        return Composed(first=self.first(t, y, c, params), second=self.second(t, y, c, params), symmetric=False)


def _as_tuple(blocks):
    if blocks is None:
        return None
    return tuple(tuple(int(i) for i in row) for row in np.asarray(blocks).tolist())


__all__ = ["JacobianPreconditioner", "OperatorSplit", "Composed"]
