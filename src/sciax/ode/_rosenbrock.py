"""A generic Rosenbrock–Wanner (linearly implicit) solver for diffrax, over a tableau.

Each step evaluates the Jacobian `J = ∂f/∂y` once at `(t0, y0)`, factorises
`I - hγJ` once (dense LU by default) and solves one linear system per stage, so
unlike ESDIRK methods there is no Newton iteration to converge or to fail
(Hairer & Wanner, Solving ODEs II, §IV.7). Being a `diffrax.AbstractAdaptiveSolver`,
it works with `diffeqsolve`'s step-size controllers, `SaveAt`, adjoints and `vmap`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, PyTree

from ..linalg import SparseLU, SparsityPattern, small_dense_solver, sparse_jacobian, sparse_solve
from ._mass import MassMatrix
from ._rosenbrock_reuse import JacobianReuse, reuse_init, reuse_step
from ._rosenbrock_tableaus import RosenbrockTableau

# Iterative lineax solvers need only operator–vector products: with them the
# Jacobian is never formed ("auto" picks the matrix-free path).
ITERATIVE_SOLVERS = (lx.GMRES, lx.BiCGStab, lx.CG)  # (lx.NormalCG is a function building a CG)

# A failed step (singular stage matrix, non-finite stage) is retried smaller; once the
# step is below this many ulps of the time scale, retrying cannot help.
_PERSISTENT_ULPS = 64.0


def is_matrix_free(jacobian, linear_solver) -> bool:
    if jacobian == "auto":
        return isinstance(linear_solver, ITERATIVE_SOLVERS)
    return jacobian == "jvp"


def persistent_failure_step(t, span) -> Array:
    """The step size below which a failing step counts as a persistent failure at `t`.

    Relative to `t`, or to `eps * span` near `t = 0` (so a solve over [0, 1e11]
    may still take steps of 1e-19 at its start).
    """
    eps = jnp.finfo(jnp.result_type(t)).eps
    return _PERSISTENT_ULPS * eps * jnp.maximum(jnp.abs(t), eps * span)


class RosenbrockInterpolation(diffrax.AbstractLocalInterpolation):
    """Dense output `y(θ) = (1-θ) y0 + θ (y1 + (1-θ)(K_0 + θ K_1 + θ² K_2 ...))`,
    `θ = (t - t0)/(t1 - t0)`; `k` holds the `K_j` stacked on a leading axis."""

    t0: Any
    t1: Any
    y0: PyTree[Array]
    y1: PyTree[Array]
    k: PyTree[Array]

    def evaluate(self, t0, t1=None, left: bool = True) -> PyTree[Array]:
        del left
        if t1 is not None:
            return jax.tree_util.tree_map(lambda a, b: a - b, self.evaluate(t1), self.evaluate(t0))
        span = self.t1 - self.t0
        theta = jnp.where(span == 0, 0.0, (t0 - self.t0) / jnp.where(span == 0, 1.0, span))

        def leaf(y0, y1, k):
            poly = k[-1]
            for j in range(k.shape[0] - 2, -1, -1):
                poly = k[j] + theta * poly
            return (1 - theta) * y0 + theta * (y1 + (1 - theta) * poly)

        return jax.tree_util.tree_map(leaf, self.y0, self.y1, self.k)


class RosenbrockSolver(diffrax.AbstractAdaptiveSolver):
    """A Rosenbrock–Wanner method for `diffrax.diffeqsolve` with an `ODETerm`.

    **Fields:**

    - `tableau`: the method's coefficients (`sciax.ode._rosenbrock_tableaus`).
    - `jacobian`: `"auto"` (dense by `jax` forward mode, or matrix-free when
      `linear_solver` is iterative), `"jacfwd"` (dense), `"jvp"` (matrix-free:
      only Jacobian–vector products), or `jac(t, y, args)` returning the Jacobian
      over the flattened state as an `(n, n)` array or a `lineax` operator.
    - `linear_solver`: the `lineax` solver of the stage systems `(I - hγJ) k = r`;
      `None` picks one by the operator (see `_default_solver`).
    - `reject_failures`: a failed step gives an infinite error estimate so an
      adaptive controller retries it smaller (`True`), or ends the solve (`False`,
      for constant steps, which cannot be retried).
    - `mass`: the constant mass matrix `M` of `M y' = f` over the flattened state
      (`sciax.ode.MassMatrix`), or `None` (`M = I`). With `M`, the stages solve
      `(M - hγ J) k_i = hγ f_i + hγ h d_i ∂f/∂t + γ M Σ_j C_ij k_j` (Hairer & Wanner II,
      §VI.4, eq. 4.12 scaled by hγ); a singular `M` is an index-1 DAE, for which the
      Rodas methods are designed (Rodas4: Hairer & Wanner; Rodas5P: Steinebach 2023).
    - `reuse`: `None`, or for a W-method a `JacobianReuse` (its rules and tolerances):
      the Jacobian and the factorisation are kept across steps (`_rosenbrock_reuse.py`).
    """

    tableau: RosenbrockTableau = eqx.field(static=True)
    jacobian: str | Callable | SparsityPattern = eqx.field(static=True, default="auto")
    linear_solver: lx.AbstractLinearSolver | SparseLU | None = None
    reject_failures: bool = eqx.field(static=True, default=True)
    mass: MassMatrix | None = eqx.field(static=True, default=None)
    reuse: JacobianReuse | None = None

    term_structure: ClassVar = diffrax.AbstractTerm
    interpolation_cls: ClassVar[Callable[..., RosenbrockInterpolation]] = RosenbrockInterpolation

    def order(self, terms) -> int:
        return self.tableau.order

    def init(self, terms, t0, t1, y0, args):
        # The solver state is the length of the whole solve: it sets the scale below
        # which a step counts as collapsed near t = 0 (and, reusing Jacobians, what is kept).
        span = jnp.abs(jnp.asarray(t1) - jnp.asarray(t0))
        if self.reuse is not None:
            return reuse_init(self, span, y0)
        return span

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        del made_jump
        if self.reuse is not None:
            return reuse_step(self, terms, t0, t1, y0, args, solver_state)
        span = solver_state
        y_flat, unravel = ravel_pytree(y0)
        f = flat_rhs(terms, args, unravel)
        hg = ((t1 - t0) * self.tableau.gamma).astype(y_flat.dtype)
        f0, dfdt, solve_stage = self._linearise(f, t0, y_flat, args, hg, unravel)
        y1, err, dense, ok = self.stages(f, t0, t1, y_flat, f0, dfdt, solve_stage)
        y1_tree, err_tree, dense_info, result = self.finish(t0, t1, y0, y1, err, dense, ok, span)
        return y1_tree, err_tree, dense_info, span, result

    def stages(self, f, t0, t1, y_flat, f0, dfdt, solve_stage):
        """The step from `y_flat` given the stage solver of `(M - hγJ) k = r`: `(y1, err, dense, ok)`, flat."""
        tab = self.tableau.arrays()
        h = t1 - t0
        hg = (h * self.tableau.gamma).astype(y_flat.dtype)
        ok = jnp.array(True)
        ks = []
        for i in range(self.tableau.num_stages):
            if i == 0:
                fi = f0
            else:
                ui = y_flat + _combine(tab["a"][i, :i], ks)
                fi = f(t0 + tab["c"][i] * h, ui)
            # hγ times the stage right-hand side: γ C_ij k_j replaces hγ (C_ij/h) k_j,
            # so a zero step never divides by zero.
            memory = _combine(tab["c_mat"][i, :i], ks)
            if self.mass is not None and i > 0:
                memory = self.mass.times(memory)
            rhs = hg * fi + (hg * h * tab["d"][i]) * dfdt + self.tableau.gamma * memory
            k, solved = solve_stage(rhs)
            ok = ok & solved
            ks.append(k)

        y1 = y_flat + _combine(tab["b"], ks)
        err = _combine(tab["b_error"], ks)
        if tab["dense"].shape[0]:
            dense = jnp.stack([_combine(row, ks) for row in tab["dense"]])
        else:
            dense = _hermite(y_flat, y1, h * f0, h * f(t1, y1))
        ok = ok & jnp.all(jnp.isfinite(y1)) & jnp.all(jnp.isfinite(err)) & jnp.all(jnp.isfinite(dense))
        return y1, err, dense, ok

    def finish(self, t0, t1, y0, y1, err, dense, ok, span):
        """diffrax's `(y1, y_error, dense_info, result)` from a flat step, a failed one turned into a rejection."""
        y_flat, unravel = ravel_pytree(y0)
        h = t1 - t0
        if self.reject_failures:
            persistent = ~ok & (jnp.abs(h) <= persistent_failure_step(jnp.maximum(jnp.abs(t0), jnp.abs(t1)), span))
            # Rejected (infinite error) while a smaller step may help; then accepted as
            # a no-op with a failure code, which ends the solve where it stands.
            err = jnp.where(ok, err, jnp.where(persistent, 0.0, jnp.inf))
            result = diffrax.RESULTS.where(persistent, diffrax.RESULTS.singular, diffrax.RESULTS.successful)
        else:
            result = diffrax.RESULTS.where(ok, diffrax.RESULTS.successful, diffrax.RESULTS.singular)
        y1 = jnp.where(ok, y1, y_flat)
        dense = jnp.where(ok, dense, 0.0)
        y1_tree = unravel(y1)
        dense_info = dict(y0=y0, y1=y1_tree, k=jax.vmap(unravel)(dense))
        return y1_tree, unravel(err), dense_info, result

    def _identity(self, y) -> Array:
        """`M` of `M y' = f` (the identity for an ODE), as a dense matrix."""
        return jnp.eye(y.size, dtype=y.dtype) if self.mass is None else jnp.asarray(np.asarray(self.mass), y.dtype)

    def _apply_identity(self, v) -> Array:
        """`M v` (`v` for an ODE)."""
        return v if self.mass is None else self.mass.times(v)

    def _linearise(self, f, t0, y, args, hg, unravel):
        """`f(t0, y)`, `∂f/∂t(t0, y)` and `solve_stage(r) -> (k, ok)` solving `(I - hγ J) k = r`."""
        if isinstance(self.jacobian, SparsityPattern):
            return self._linearise_sparse(f, t0, y, hg)
        f0, dfdt, operator = self._stage_operator(f, t0, y, args, hg, unravel)
        linear_solver = _default_solver(operator) if self.linear_solver is None else self.linear_solver
        state = linear_solver.init(operator, {})

        def solve_stage(rhs):
            sol = lx.linear_solve(operator, rhs, linear_solver, state=state, throw=False)
            return sol.value, sol.result == lx.RESULTS.successful

        return f0, dfdt, solve_stage

    def _linearise_sparse(self, f, t0, y, hg):
        """The Jacobian by colouring over `self.jacobian`; stage solves by SuperLU or an iterative solver.

        `self.jacobian` includes the diagonal, so `I - hγJ` has the same entries as `J`
        (and `M - hγJ` too: `M`'s nonzeros are checked to lie in the pattern).
        """
        pattern = self.jacobian
        f0, dfdt = jax.jvp(lambda t: f(t, y), (t0,), (jnp.ones_like(t0),))
        jac = sparse_jacobian(lambda x: f(t0, x), y, pattern).data
        if self.mass is None:
            values = (-hg * jac).at[pattern.diagonal].add(1.0)
        else:
            values = self.mass.newton_matrix(jac, hg, pattern)
        if isinstance(self.linear_solver, lx.AbstractLinearSolver):
            rows, cols, n = jnp.asarray(pattern.rows), jnp.asarray(pattern.cols), y.size
            matvec = lambda v: jax.ops.segment_sum(values * v[cols], rows, num_segments=n)  # noqa: E731
            operator = lx.FunctionLinearOperator(matvec, jax.eval_shape(lambda: y))
            state = self.linear_solver.init(operator, {})

            def solve_iteratively(rhs):
                sol = lx.linear_solve(operator, rhs, self.linear_solver, state=state, throw=False)
                return sol.value, sol.result == lx.RESULTS.successful

            return f0, dfdt, solve_iteratively

        def solve_directly(rhs):
            k = sparse_solve(values, rhs, pattern, self.linear_solver)
            return k, jnp.all(jnp.isfinite(k))

        return f0, dfdt, solve_directly

    def _stage_operator(self, f, t0, y, args, hg, unravel):
        """`f(t0, y)`, `∂f/∂t(t0, y)` and the stage operator `I - hγ J` as a lineax operator."""
        one = jnp.ones_like(t0)
        if callable(self.jacobian):
            f0, dfdt = jax.jvp(lambda t: f(t, y), (t0,), (one,))
            jac = self.jacobian(t0, unravel(y), args)
            if isinstance(jac, lx.AbstractLinearOperator):
                identity = lx.IdentityLinearOperator(jax.eval_shape(lambda: y))
                if self.mass is not None:
                    identity = lx.MatrixLinearOperator(self._identity(y))
                return f0, dfdt, identity - hg * jac
            jac = jnp.asarray(jac)
            if jac.shape != (y.size, y.size):
                raise ValueError(
                    f"simulate: jacobian(t, y, params) returned shape {jac.shape}; expected "
                    f"({y.size}, {y.size}) for a state with {y.size} entries (flattened)"
                )
            return f0, dfdt, lx.MatrixLinearOperator(self._identity(y) - hg * jac)
        # One linearisation of f in (t, y) gives the value, ∂f/∂t and ∂f/∂y·v.
        f0, lin = jax.linearize(f, t0, y)
        dfdt = lin(one, jnp.zeros_like(y))
        zero_t = jnp.zeros_like(t0)
        if is_matrix_free(self.jacobian, self.linear_solver):
            # Never forms J: the iterative solver only applies v ↦ v - hγ J v.
            matvec = lambda v: self._apply_identity(v) - hg * lin(zero_t, v)  # noqa: E731
            return f0, dfdt, lx.FunctionLinearOperator(matvec, jax.eval_shape(lambda: y))
        jac = jax.vmap(lambda v: lin(zero_t, v), out_axes=1)(jnp.eye(y.size, dtype=y.dtype))
        return f0, dfdt, lx.MatrixLinearOperator(self._identity(y) - hg * jac)


def flat_rhs(terms, args, unravel) -> Callable:
    """`f(t, y)` over the flattened state."""

    def f(t, y):
        return ravel_pytree(terms.vf(t, unravel(y), args))[0]

    return f


def _default_solver(operator: lx.AbstractLinearOperator) -> lx.AbstractLinearSolver:
    """Unrolled LU for a small dense stage matrix, LAPACK LU for a large one, and
    lineax's structure-aware choice for a user's operator (e.g. tridiagonal)."""
    if isinstance(operator, lx.MatrixLinearOperator):
        return small_dense_solver(operator.in_size())
    return lx.AutoLinearSolver(well_posed=True)


def _combine(weights: np.ndarray, vectors: list[Array]) -> Array | float:
    """`Σ_j w_j v_j`, skipping the zero weights at trace time."""
    total = 0.0
    for w, v in zip(weights, vectors):
        if w != 0.0:
            total = total + float(w) * v
    if isinstance(total, float):
        return jnp.zeros_like(vectors[0]) if vectors else 0.0
    return total


def _hermite(y0, y1, hf0, hf1) -> Array:
    """Cubic Hermite interpolant in the Rodas form: `K_0 = h f0 - Δ`, `K_1 = Δ - K_0 - h f1`."""
    delta = y1 - y0
    k0 = hf0 - delta
    return jnp.stack([k0, delta - k0 - hf1])


__all__ = [
    "ITERATIVE_SOLVERS",
    "RosenbrockSolver",
    "RosenbrockInterpolation",
    "is_matrix_free",
    "persistent_failure_step",
]
