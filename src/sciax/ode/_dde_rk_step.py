"""One explicit Runge–Kutta step of the method of steps (Tsit5 or Dopri5, diffrax's tableaus).

The pair is used as in `_ensemble_rk.py`: diffrax's Butcher tableau, embedded error
estimate and dense-output interpolation; the first stage is the last one of the
previous step (first same as last). The delayed states of every stage come from the
step buffer through `rhs` (`_dde_stepper.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import equinox as eqx
import jax.numpy as jnp

from ._dde_stepper import AbstractDDEStep


class RKStep(AbstractDDEStep):
    """An explicit Runge–Kutta pair with dense output; `k` stored per step: the stages' `h f`."""

    tableau: Any = eqx.field(static=True)
    interpolation_cls: Any = eqx.field(static=True)
    order: int = eqx.field(static=True)

    right_sided: ClassVar[bool] = False

    @property
    def rows(self) -> int:
        return len(self.tableau.c) + 1

    @property
    def rhs_evals(self) -> int:
        return len(self.tableau.c)

    def __call__(self, rhs, t, t_new, y, f0):
        h = t_new - t
        ks = [h * f0]
        too_old, bad = jnp.array(False), jnp.array(False)
        for a_row, c in zip(self.tableau.a_lower, self.tableau.c):
            y_stage = y + sum(float(a) * k for a, k in zip(a_row, ks) if a != 0)
            t_stage = t_new if c == 1 else t + float(c) * h
            f, old, neg = rhs(t_stage, y_stage)
            ks.append(h * f)
            too_old, bad = too_old | old, bad | neg
        y1 = y_stage  # FSAL/SSAL: the last stage is (t_new, y1)
        err = sum(float(b) * k for b, k in zip(self.tableau.b_error, ks) if b != 0)
        return y1, err, jnp.stack(ks), f, too_old, bad


__all__ = ["RKStep"]
