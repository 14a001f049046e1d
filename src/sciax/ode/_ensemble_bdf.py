"""A `BDF` ensemble integrated as one system: a shared step and order, one Newton iteration for all members.

Under `jax.vmap` every member of a `BDF` solve runs its own step-size control in
lockstep: each `lax.cond` becomes a `select` that evaluates both branches, the loop
runs as many iterations as the slowest member, and each batched GMRES as many as its
slowest member. The ensemble solvers for GPUs do better by integrating the members
as one block-diagonal system with one step size and order (DiffEqGPU.jl's
`EnsembleGPUArray`, Utkarsh et al., CMAME 2024, §3): the error norm (and Newton's
convergence norm) is the largest of the members' own norms, so every member passes
its own error test at every step, and all the members' linear algebra is done at
once — one Jacobian (a block-diagonal sparsity pattern: the colouring of one member
serves all), one SuperLU factorisation of the block-diagonal Newton matrix, or one
GMRES with the members' preconditioners applied side by side.

The price is that every member takes the smallest step any member needs at that
time; for members that differ in parameters or initial values by modest amounts
this costs a few steps and saves the per-member control flow and host round trips.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax.flatten_util import ravel_pytree

from .. import _checks
from .._solution import Solution
from ..linalg import AbstractPreconditioner, SparsityPattern
from ._adjoint_loop import loop_kind
from ._bdf import _DONE, BDF, _integrate, _Linear, _raise_if_failed
from ._bdf_krylov import KrylovLinear
from ._sparsity import resolve_pattern


class _MemberwiseInverse(AbstractPreconditioner):
    """The members' own preconditioners, batched along the leading member axis, each on its block."""

    batched: AbstractPreconditioner
    unravel: object = eqx.field(static=True)
    shape: tuple[int, int] = eqx.field(static=True)
    dtype: object = eqx.field(static=True)
    symmetric: bool = eqx.field(static=True)

    def apply(self, r):
        def one(p, x):
            out = p.apply(self.unravel(x)) if isinstance(p, AbstractPreconditioner) else p.mv(self.unravel(x))
            return ravel_pytree(out)[0]

        return eqx.filter_vmap(one)(self.batched, r)

    def structure(self):
        return jax.ShapeDtypeStruct(self.shape, self.dtype)


class _MemberwisePreconditioner(eqx.Module):
    """`preconditioner(t, y, c, params)` of one member, made one for the stacked `(M, n)` ensemble state."""

    inner: object = eqx.field(static=True)
    unravel: object = eqx.field(static=True)

    def __call__(self, t, ys, c, params):
        batched = eqx.filter_vmap(lambda y, p: self.inner(t, self.unravel(y), c, p))(ys, params)
        return _MemberwiseInverse(
            batched=batched, unravel=self.unravel, shape=ys.shape, dtype=ys.dtype, symmetric=False
        )


def _block_pattern(method: BDF, model, y0, params, n: int, members: int) -> SparsityPattern:
    """One member's pattern (dense blocks for `"auto"`) repeated down the diagonal."""
    if isinstance(method.jacobian, str) and method.jacobian == "auto":
        block = sp.csr_matrix(np.ones((n, n), bool))
    else:
        block = resolve_pattern("BDF", method.jacobian, model, y0, params).csr
    return SparsityPattern(sp.kron(sp.identity(members, format="csr"), block, format="csr"), with_diagonal=True)


def solve_shared_step(model, method: BDF, y0, ts, params, *, rtol, atol, dt0, max_steps, adjoint, throw) -> Solution:
    """Integrate members `y0` `(M, ...)` with parameters `params` (leaves `(M, ...)`) as one `BDF` system.

    Returns a `Solution` batched over members: `ys` `(M, T, ...)`, `ts` `(M, T)`,
    `success` and every stat `(M,)` (the shared counts, the same for every member).
    """
    if not isinstance(method, BDF):
        raise TypeError(f"simulate_ensemble: path='shared_step' runs sciax.ode.BDF, got {type(method).__name__}")
    if callable(method.jacobian):
        raise TypeError(
            "simulate_ensemble: path='shared_step' needs jacobian='auto', 'sparse', 'jvp' or a sparsity pattern "
            "(one member's), not a Jacobian function"
        )
    if getattr(model, "mass", None) is not None:
        raise ValueError("simulate_ensemble: path='shared_step' has no mass matrix; use path='vmap'")
    kind = loop_kind("BDF", adjoint)
    rtol, atol = _checks.check_positive("rtol", rtol), _checks.check_positive("atol", atol)
    dt0 = _checks.check_positive("dt0", dt0)
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"simulate_ensemble: max_steps must be a positive integer, got {max_steps!r}")
    pattern = "jvp"
    if not (isinstance(method.jacobian, str) and method.jacobian == "jvp"):
        members = jax.tree_util.tree_leaves(y0)[0].shape[0]
        one_y, one_p = (jax.tree_util.tree_map(lambda x: x[0], tree) for tree in (y0, params))
        pattern = _block_pattern(method, model, one_y, one_p, ravel_pytree(one_y)[0].size, members)
    return _solve(model, method, pattern, y0, ts, params, rtol, atol, dt0, int(max_steps), kind, throw)


@eqx.filter_jit
def _solve(model, method: BDF, pattern, y0, ts, params, rtol, atol, dt0, max_steps, kind, throw) -> Solution:
    # One compiled program per model, method and options (see `_bdf._solve`).
    members = jax.tree_util.tree_leaves(y0)[0].shape[0]
    flat_one, unravel = ravel_pytree(jax.tree_util.tree_map(lambda x: x[0], y0))
    n = flat_one.size
    ys0 = jax.vmap(lambda y: ravel_pytree(y)[0])(y0)
    ts = jnp.asarray(ts, ys0.dtype)

    def f(t, y):
        def one(y, p):
            return ravel_pytree(model.rhs(t, unravel(y), p))[0]

        return jax.vmap(one)(y.reshape(members, n), params).reshape(-1)

    if isinstance(pattern, str):
        preconditioner = None
        if method.preconditioner is not None:
            preconditioner = _MemberwisePreconditioner(method.preconditioner, unravel)
        stacked = lambda y: y.reshape(members, n)  # noqa: E731
        linear = KrylovLinear(f, (stacked, params), method.linear_solver, preconditioner, blocks=members)
        lazy = False
    else:
        linear = _Linear(pattern, method.linear_solver)
        lazy = method.lazy_factorisation
    setup = (rtol, atol, dt0, max_steps, method.ndf, lazy, kind)
    state, stats = _integrate(f, linear, (None, params), ys0.reshape(-1), ts, *setup, members=members)
    written = jnp.arange(ts.size)[:, None] < state["idx"]
    flat = jnp.where(written, state["ys"], jnp.inf).reshape(ts.size, members, n)
    ys = jax.vmap(jax.vmap(unravel))(jnp.moveaxis(flat, 1, 0))
    if throw:
        ys = _raise_if_failed(ys, state, ts)
    success = jnp.broadcast_to(state["status"] == _DONE, (members,))
    stats = {k: jnp.broadcast_to(v, (members,)) for k, v in stats.items()}
    return Solution(
        ts=jnp.broadcast_to(ts, (members, ts.size)), ys=ys, stats=stats, success=success, labels=model.labels()
    )


__all__ = ["solve_shared_step"]
