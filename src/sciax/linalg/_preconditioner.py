"""Approximate inverses handed to Krylov solvers: `AbstractPreconditioner`, `AbstractFlatPreconditioner`, `Jacobi`."""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jaxtyping import Array, Float

from ._operator import GridOperator


class AbstractPreconditioner(eqx.Module):
    """An approximate inverse `M ~ A^{-1}` of a linear operator `A`, applied matrix-free.

    Give one to `sciax.linalg.solve(..., preconditioner=M)` (CG, BiCGStab, GMRES) or to
    `sciax.linalg.newton_krylov`. Convention: `M` approximates the inverse of `A` as
    given; when CG works on `-A` (a negative definite `A`), `solve` negates `M` too.
    Its arrays are treated as constants (`stop_gradient`): gradients of a solve do
    not depend on the preconditioner.
    """

    @abc.abstractmethod
    def apply(self, r: Float[Array, "*shape"]) -> Float[Array, "*shape"]:
        """`M r`, same shape as `r`."""

    @abc.abstractmethod
    def structure(self) -> jax.ShapeDtypeStruct:
        """Shape and dtype of the vectors `M` acts on."""

    symmetric: eqx.AbstractVar[bool]

    def as_lineax(self, *, negate: bool = False, tags: frozenset = frozenset()) -> lx.FunctionLinearOperator:
        """`M` (or `-M`) as a `lineax.FunctionLinearOperator` with `tags` (plus `symmetric` if it is)."""
        sign = -1.0 if negate else 1.0
        tags = frozenset(tags) | ({lx.symmetric_tag} if self.symmetric else frozenset())
        return lx.FunctionLinearOperator(lambda r: sign * self.apply(r), self.structure(), tags)


class Jacobi(AbstractPreconditioner):
    """Diagonal (Jacobi) preconditioning, `M r = r / diag(A)`.

    **Arguments:** `operator`: a `sciax.linalg.GridOperator` (its diagonal found by colour
    probing, a few applications) or any `lineax` operator (`lineax.diagonal`, which
    materialises a matrix-free operator: small problems only). Raises if the diagonal
    has a zero (at run time when traced).
    """

    diag: Float[Array, "*shape"]
    symmetric: bool = eqx.field(static=True)

    def __init__(self, operator):
        if isinstance(operator, GridOperator):
            diag = operator.diagonal()
        elif isinstance(operator, lx.AbstractLinearOperator):
            struct = operator.in_structure()
            if not isinstance(struct, jax.ShapeDtypeStruct):
                raise TypeError("Jacobi: operator must act on a single array (not a pytree)")
            diag = lx.diagonal(operator).reshape(struct.shape)
        else:
            raise TypeError(
                f"Jacobi: operator must be a GridOperator or a lineax operator, got {type(operator).__name__}"
            )
        diag = jax.lax.stop_gradient(diag)
        if not isinstance(diag, jax.core.Tracer) and np.any(np.asarray(diag) == 0):
            raise ValueError(
                "Jacobi: the operator's diagonal has zero entries; Jacobi preconditioning needs a nonzero diagonal"
            )
        self.diag = eqx.error_if(diag, jnp.any(diag == 0), "Jacobi: the operator's diagonal has zero entries")
        self.symmetric = True

    def apply(self, r):
        return r / self.diag

    def structure(self):
        return jax.ShapeDtypeStruct(self.diag.shape, self.diag.dtype)


class AbstractFlatPreconditioner(AbstractPreconditioner):
    """A preconditioner that works on the flattened state (`ravel_pytree` order), for any pytree state.

    Subclasses implement `apply_flat(r) -> M r` on a 1-D array of `n` entries; `apply`
    flattens the leaves of `r` in `jax.tree_util.tree_leaves` order, the order of a
    Jacobian sparsity pattern over `ravel_pytree(y)`, and restores the structure.
    """

    treedef: jax.tree_util.PyTreeDef = eqx.field(static=True)
    shapes: tuple[tuple[int, ...], ...] = eqx.field(static=True)

    @abc.abstractmethod
    def apply_flat(self, r: Float[Array, " n"]) -> Float[Array, " n"]:
        """`M r` on the flattened state."""

    @abc.abstractmethod
    def dtype(self):
        """The dtype of the vectors `M` acts on."""

    def apply(self, r):
        leaves, treedef = jax.tree_util.tree_flatten(r)
        shapes = tuple(tuple(jnp.shape(leaf)) for leaf in leaves)
        if treedef != self.treedef or shapes != self.shapes:
            raise ValueError(
                f"{type(self).__name__}: built for states with leaves of shapes {list(self.shapes)}, applied to one "
                f"with leaves of shapes {list(shapes)}"
            )
        flat = jnp.concatenate([jnp.ravel(leaf) for leaf in leaves]) if len(leaves) > 1 else jnp.ravel(leaves[0])
        out = self.apply_flat(flat)
        bounds = np.cumsum([0] + [int(np.prod(shape)) for shape in shapes])
        parts = [out[a:b].reshape(shape) for a, b, shape in zip(bounds[:-1], bounds[1:], shapes)]
        return jax.tree_util.tree_unflatten(treedef, parts)

    def structure(self):
        leaves = [jax.ShapeDtypeStruct(shape, self.dtype()) for shape in self.shapes]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    @property
    def size(self) -> int:
        return int(sum(np.prod(shape) for shape in self.shapes))


def flat_layout(like) -> tuple[jax.tree_util.PyTreeDef, tuple[tuple[int, ...], ...]]:
    """`(treedef, leaf shapes)` of a state pytree (arrays or `ShapeDtypeStruct`s), or of one flat size `n`."""
    if isinstance(like, (int, np.integer)):
        like = jax.ShapeDtypeStruct((int(like),), jnp.float64)
    leaves, treedef = jax.tree_util.tree_flatten(like)
    return treedef, tuple(tuple(jnp.shape(leaf)) for leaf in leaves)
