"""Explicit Runge–Kutta steps with the stages unrolled at trace time, as diffrax solvers.

diffrax runs the stages of a Runge–Kutta step in an inner loop: one trace of the
vector field however many stages there are, which keeps compilation short for
big right-hand sides and lets reverse mode checkpoint stage by stage. For the
small systems of parameter inference and ensembles that loop is the cost: each
stage pays a loop iteration and dynamic updates of the stage buffer, and under
`jax.jvp`/`jax.jacfwd` and `jax.vmap` (forward sensitivities, vectorised NUTS
chains) every one of those ops is widened again. Unrolled, XLA fuses the stages
into a few kernels per step (timings in docs/benchmarks.md, "ODEs"). Compilation of
single solves is longer, so the loop stays the default (`Tsit5(unroll=False)`);
`unroll=True` or `None` opts in.

The tableau and the dense-output interpolation are diffrax's own
(`diffrax.Tsit5.tableau`, `diffrax.Tsit5.interpolation_cls`), so results agree
with diffrax's solvers to round-off and only the evaluation order differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
from jaxtyping import PyTree

#: With `unroll=None`, states with at most this many scalars run the unrolled step.
UNROLL_MAX_STATE = 1024


def _combine(y0, coefficients, ks):
    """`y0 + sum_j coefficients[j] * ks[j]` over the stage increments, skipping zero coefficients."""
    terms = [(float(c), k) for c, k in zip(coefficients, ks) if c != 0]

    def leaf(y, *k_leaves):
        return y + sum(c * k for (c, _), k in zip(terms, k_leaves))

    return jax.tree_util.tree_map(leaf, y0, *[k for _, k in terms])


class AbstractUnrolledERK(diffrax.AbstractAdaptiveSolver):
    """An FSAL explicit Runge–Kutta pair over a diffrax `ButcherTableau`, stages unrolled.

    Works with any diffrax term through `vf`/`contr`/`prod` (an `ODETerm`, or the
    augmented term of `BacksolveAdjoint`). Subclasses set `tableau`,
    `interpolation_cls` and `method_order`. The tableau must be explicit, FSAL and
    SSAL (the last stage is evaluated at `(t1, y1)`),
    as Tsit5's and Dopri5's are. The solver state is (first step?, `f(t0, y0)`).
    """

    term_structure: ClassVar = diffrax.AbstractTerm
    tableau: ClassVar[diffrax.ButcherTableau]
    interpolation_cls: ClassVar[Callable[..., diffrax.AbstractLocalInterpolation]]
    method_order: ClassVar[int]

    def order(self, terms) -> int:
        return self.method_order

    def init(self, terms, t0, t1, y0, args):
        # f(t0, y0) is evaluated inside the first step rather than here: reverse mode
        # through diffrax's checkpointed loop under vmap loses the derivative of an
        # initial solver state (measured: gradients off in the 7th digit), as diffrax's
        # own Runge–Kutta solvers avoid with the same first-step flag.
        shapes = eqx.filter_eval_shape(terms.vf, t0, y0, args)  # args may hold functions (an MLP's activation)
        return jnp.array(True), jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        tableau = self.tableau
        control = terms.contr(t0, t1)
        first_step, stored = solver_state
        f0 = self._first_stage(terms, t0, y0, args, stored, first_step | made_jump)
        fs, ks = [f0], [terms.prod(f0, control)]
        for a_row, c in zip(tableau.a_lower, tableau.c):
            y_stage = _combine(y0, a_row, ks)
            f = terms.vf(t0 + float(c) * (t1 - t0), y_stage, args)
            fs.append(f)
            ks.append(terms.prod(f, control))
        y1 = y_stage  # SSAL: the last stage is evaluated at y1
        y_error = _combine(jax.tree_util.tree_map(jnp.zeros_like, y0), tableau.b_error, ks)
        dense_info = dict(y0=y0, y1=y1, k=jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *ks))
        return y1, y_error, dense_info, (jnp.array(False), fs[-1]), diffrax.RESULTS.successful

    @staticmethod
    def _first_stage(terms, t0, y0, args, stored: PyTree, fresh_needed):
        """`f(t0, y0)`: the stored last stage of the previous step, or evaluated anew on the
        first step and after a jump at `t0`."""
        # unvmap_any keeps the cond a real branch under vmap: no extra evaluation per step.
        fresh = jax.lax.cond(eqxi.unvmap_any(fresh_needed), lambda: terms.vf(t0, y0, args), lambda: stored)
        return jax.tree_util.tree_map(lambda a, b: jnp.where(fresh_needed, a, b), fresh, stored)


class UnrolledTsit5(AbstractUnrolledERK):
    """Tsitouras' 5(4) pair (Tsitouras 2011), stages unrolled; diffrax's tableau and interpolation."""

    tableau: ClassVar[diffrax.ButcherTableau] = diffrax.Tsit5.tableau
    interpolation_cls: ClassVar = diffrax.Tsit5.interpolation_cls
    method_order: ClassVar[int] = 5


class UnrolledDopri5(AbstractUnrolledERK):
    """Dormand–Prince 5(4) (Dormand & Prince 1980), stages unrolled; diffrax's tableau and interpolation."""

    tableau: ClassVar[diffrax.ButcherTableau] = diffrax.Dopri5.tableau
    interpolation_cls: ClassVar = diffrax.Dopri5.interpolation_cls
    method_order: ClassVar[int] = 5


def state_size(y0: PyTree) -> int:
    """Number of scalars in a state pytree (shapes only; works on tracers)."""
    return sum(int(jnp.size(leaf)) for leaf in jax.tree_util.tree_leaves(y0))


__all__ = ["AbstractUnrolledERK", "UnrolledTsit5", "UnrolledDopri5", "UNROLL_MAX_STATE", "state_size"]
