"""The stage-equation root finder of the diffrax implicit methods, with a round-off stop.

diffrax's default `VeryChord` stops a chord iteration after two or more iterations when
the estimated contraction `rate = |d_k| / |d_(k-1)|` says it has converged (Hairer &
Wanner, *Solving ODEs II*, sec. IV.8), where `|d|` is the update measured against the
error tolerances. When the stage equation is linear (the implicit part of every spectral
IMEX split, a linear stiff system) or the predictor is already right, the updates are
round-off: their ratio is then noise around 1, the iteration is declared divergent, the
step is rejected, the next step's predictor is better still, and adaptive stepping
collapses into thousands of rejected steps (KenCarp4 on a 16-mode Burgers split:
1,269 steps, 745 rejected, where 5 suffice). Which side of the threshold the noise lands
on depends on how XLA compiled the program, so the collapse came and went with compiler
flags. `RoundoffChord` also stops, successfully, as soon as an update is at the round-off
level of the iterate, which is the most any iteration can achieve.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import diffrax
import jax.numpy as jnp
import jax.tree_util as jtu
import lineax as lx
import optimistix as optx

# An update below this many units in the last place of the iterate's largest entry
# cannot be told apart from the rounding of the stage equation's own evaluation.
_ROUNDOFF_ULPS = 64.0


def _at_roundoff(diff, y):
    leaves_d, leaves_y = jtu.tree_leaves(diff), jtu.tree_leaves(y)
    if not leaves_d:
        return jnp.array(True)
    size_d = jnp.max(jnp.stack([jnp.max(jnp.abs(d)) for d in leaves_d]))
    size_y = jnp.max(jnp.stack([jnp.max(jnp.abs(v)) for v in leaves_y]))
    eps = jnp.finfo(jnp.result_type(*leaves_y)).eps
    return size_d <= _ROUNDOFF_ULPS * eps * size_y


class RoundoffChord(optx.AbstractRootFinder):
    """diffrax's `VeryChord` (the Jacobian once per step, Hairer–Wanner's convergence
    test), stopping successfully once an update is at the iterate's round-off level.

    Built by `diffrax.with_stepsize_controller_tols(RoundoffChord)()` so that, like the
    default, it takes `rtol`, `atol` and `norm` from the step-size controller.
    """

    rtol: float
    atol: float
    norm: Callable = optx.max_norm
    kappa: float = 1e-2
    linear_solver: lx.AbstractLinearSolver = lx.AutoLinearSolver(well_posed=None)

    def _chord(self) -> diffrax.VeryChord:
        return diffrax.VeryChord(self.rtol, self.atol, self.norm, self.kappa, self.linear_solver)

    def init(self, fn, y, args, options, f_struct, aux_struct, tags):
        return self._chord().init(fn, y, args, options, f_struct, aux_struct, tags)

    def step(self, fn, y, args, options, state, tags):
        return self._chord().step(fn, y, args, options, state, tags)

    def terminate(self, fn, y, args, options, state, tags) -> tuple[Any, optx.RESULTS]:
        stop, result = self._chord().terminate(fn, y, args, options, state, tags)
        settled = (state.step >= 1) & (state.result == optx.RESULTS.successful) & _at_roundoff(state.diff, y)
        return stop | settled, optx.RESULTS.where(settled, optx.RESULTS.successful, result)

    def postprocess(self, fn, y, aux, args, options, state, tags, result):
        return self._chord().postprocess(fn, y, aux, args, options, state, tags, result)


def adaptive_root_finder() -> optx.AbstractRootFinder:
    """The root finder of sciax's adaptive diffrax implicit and IMEX methods."""
    return diffrax.with_stepsize_controller_tols(RoundoffChord)()
