"""`newton_krylov` and `steady_state`: nonlinear solves over optimistix's Newton whose linear
steps are matrix-free, optionally preconditioned, Krylov solves (Newton–Krylov).

Reference: D. A. Knoll, D. E. Keyes, "Jacobian-free Newton–Krylov methods: a survey of
approaches and applications", J. Comput. Phys. 193 (2004) 357–397. Here the Jacobian is
not approximated by finite differences: optimistix linearises with JAX, so each Krylov
step costs one exact Jacobian-vector product.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import lineax as lx
import optimistix as optx
from jaxtyping import PyTree

from ._lineax_solvers import Preconditioned


def _tolerance(value, dtype, f64: float, f32: float):
    return value if value is not None else (f64 if dtype == jnp.float64 else f32)


def krylov_solver(
    method,
    *,
    linear_rtol: float,
    linear_atol: float,
    max_steps: int | None,
    restart: int,
    preconditioner,
    tags: frozenset,
    what: str,
) -> lx.AbstractLinearSolver:
    """A lineax Krylov solver for a Jacobian with `tags`, wrapped in `Preconditioned`."""
    if isinstance(method, lx.AbstractLinearSolver):
        inner = method
    elif method == "gmres":
        inner = lx.GMRES(
            rtol=linear_rtol, atol=linear_atol, max_steps=max_steps, restart=restart, stagnation_iters=restart
        )
    elif method == "bicgstab":
        inner = lx.BiCGStab(rtol=linear_rtol, atol=linear_atol, max_steps=max_steps)
    elif method == "cg":
        if lx.symmetric_tag not in tags or not {lx.positive_semidefinite_tag, lx.negative_semidefinite_tag} & tags:
            raise ValueError(
                f"{what}: method='cg' needs a symmetric definite Jacobian; pass tags=frozenset({{lineax.symmetric_tag, "
                "lineax.negative_semidefinite_tag}}) (or positive_semidefinite_tag) if it is, else use method='gmres'"
            )
        inner = lx.CG(rtol=linear_rtol, atol=linear_atol, max_steps=max_steps)
    else:
        raise ValueError(f"{what}: method must be 'gmres', 'bicgstab', 'cg' or a lineax solver, got {method!r}")
    negate = isinstance(inner, lx.CG) and lx.negative_semidefinite_tag in tags
    if not hasattr(inner, "atol"):
        return inner
    return Preconditioned(inner, preconditioner, negate)


def newton_krylov(
    fn: Callable[[PyTree, Any], PyTree],
    y0: PyTree,
    args: PyTree = None,
    *,
    method: str | lx.AbstractLinearSolver = "gmres",
    rtol: float | None = None,
    atol: float | None = None,
    max_steps: int = 50,
    linear_rtol: float | None = None,
    linear_max_steps: int | None = None,
    restart: int = 20,
    preconditioner=None,
    tags: frozenset = frozenset(),
    throw: bool = True,
) -> optx.Solution:
    """Solve `fn(y, args) = 0` by Newton's method with Krylov linear solves (`optimistix.Newton`).

    **Arguments:**

    - `fn`: residual, `fn(y, args)` with the structure of `y` (any pytree, e.g. a field
      on a grid, a dict of fields, or `(u, lam)` for an augmented system).
    - `y0`: initial guess. `args`: differentiable parameters.
    - `method`: `"gmres"` (default, restarted every `restart` steps), `"bicgstab"`,
      `"cg"` (needs `tags` saying the Jacobian is symmetric definite), or a lineax solver.
    - `rtol`, `atol`: Newton's (Cauchy) termination: the step is below
      `atol + rtol |y|` and `max|fn| < atol`. Defaults 1e-8 (float64) / 1e-5 (float32).
    - `linear_rtol`: each Krylov solve's tolerance relative to `max|fn(y)|`
      (inexact Newton); default 1e-8 / 1e-5. `linear_max_steps`: Krylov step limit.
    - `preconditioner`: a fixed `sciax.linalg` preconditioner or lineax operator
      approximating the inverse Jacobian (e.g. `Multigrid` of the diffusion part), or
      `preconditioner(jacobian_operator)` rebuilt at each Newton step.
    - `tags`: lineax tags of the Jacobian (e.g. symmetric, negative semidefinite).
    - `throw`: raise if Newton fails; else check `solution.result`.

    **Returns:** the `optimistix.Solution` (`.value`, `.result`, `.stats["num_steps"]`).
    Differentiable with respect to `args` (implicit function theorem, optimistix).
    """
    leaves = jax.tree_util.tree_leaves(y0)
    if not leaves:
        raise ValueError("newton_krylov: y0 is an empty pytree; expected at least one array")
    dtype = jnp.result_type(*leaves)
    rtol = _tolerance(rtol, dtype, 1e-8, 1e-5)
    atol = _tolerance(atol, dtype, 1e-8, 1e-5)
    linear_rtol = _tolerance(linear_rtol, dtype, 1e-8, 1e-5)
    out = jax.eval_shape(fn, y0, args)
    if jax.tree_util.tree_structure(out) != jax.tree_util.tree_structure(y0) or any(
        a.shape != jnp.shape(b) for a, b in zip(jax.tree_util.tree_leaves(out), leaves)
    ):
        raise ValueError(
            "newton_krylov: fn(y, args) must return the structure and shapes of y0 (a square system), "
            f"got {jax.tree_util.tree_map(lambda a: a.shape, out)} for y0 "
            f"{jax.tree_util.tree_map(jnp.shape, y0)}"
        )
    # Near convergence fn(y) is round-off; a Krylov solve asked to reduce it further breaks
    # down, so its absolute tolerance is a fraction of Newton's.
    linear = krylov_solver(
        method,
        linear_rtol=linear_rtol,
        linear_atol=0.01 * atol,
        max_steps=linear_max_steps,
        restart=restart,
        preconditioner=preconditioner,
        tags=frozenset(tags),
        what="newton_krylov",
    )
    solver = optx.Newton(rtol=rtol, atol=atol, linear_solver=linear)
    return optx.root_find(fn, solver, y0, args, max_steps=max_steps, throw=throw, tags=frozenset(tags))


def steady_state(model, y0: PyTree, params: PyTree = None, *, t: float = 0.0, **options) -> optx.Solution:
    """A steady state of `model` (any `sciax.AbstractModel`): `model.rhs(t, y, params) = 0`, by `newton_krylov`.

    `y0`: initial guess (a state of the model); `options` as for `newton_krylov`.
    Differentiable with respect to `params` (e.g. a steady reaction–diffusion pattern's
    sensitivity to its rates).
    """
    rhs = getattr(model, "rhs", None)
    if not callable(rhs):
        raise TypeError(f"steady_state: model must define rhs(t, y, params) (a sciax.AbstractModel), got {model!r:.80}")
    return newton_krylov(lambda y, p: rhs(t, y, p), y0, params, **options)
