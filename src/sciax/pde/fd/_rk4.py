"""`RK4`: the classical fourth-order Runge–Kutta method with a fixed step, for FD models."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..._step_counts import check_checkpoint, check_dt
from .._fixed_step import AbstractFixedStep

# Extent of the RK4 stability region along the negative real axis and the imaginary axis.
_RK4_REAL = 2.785293563405282
_RK4_IMAG = 2.0 * np.sqrt(2.0)


class RK4(AbstractFixedStep):
    """Classical RK4 with fixed step `dt` on any `AbstractModel` (the method of lines), over `lax.scan`.

    Checks the CFL condition against the model's `spectral_radius(params)`
    (diffusive radius `R_d`, oscillatory `R_o`): `dt <= 1 / (R_d / 2.785 + R_o / 2.828)`,
    the RK4 stability region's reach along the real and imaginary axes.
    `ys` has the structure of `y0`. `save` is not used.

    **Arguments:** `dt` (time units); `checkpoint` (steps per recomputed block, default 64).
    """

    dt: float = eqx.field(static=True)
    checkpoint: int | None = eqx.field(static=True)
    rhs_evals_per_step: ClassVar[int] = 4

    def __init__(self, dt: float, *, checkpoint: int | None = 64):
        self.dt, self.checkpoint = check_dt("RK4", dt), check_checkpoint("RK4", checkpoint)

    def stable_dt(self, model, params):
        radius = model.spectral_radius(params)
        if radius is None:
            return None
        diffusive, oscillatory = radius
        return 1.0 / (jnp.asarray(diffusive) / _RK4_REAL + jnp.asarray(oscillatory) / _RK4_IMAG)

    def step_reach(self, model):
        """`4 model.rhs_reach`: k4 reads k3 reads k2 reads k1, four chained evaluations (grid models)."""
        return 4 * model.rhs_reach

    def init(self, model, y0, params):
        return y0

    def step(self, model, y, t, params):
        h = self.dt
        add = lambda y, k, c: jax.tree_util.tree_map(lambda a, b: a + c * b, y, k)  # noqa: E731
        k1 = model.rhs(t, y, params)
        k2 = model.rhs(t + h / 2, add(y, k1, h / 2), params)
        k3 = model.rhs(t + h / 2, add(y, k2, h / 2), params)
        k4 = model.rhs(t + h, add(y, k3, h), params)
        return jax.tree_util.tree_map(lambda a, b, c, d, e: a + h / 6 * (b + 2 * c + 2 * d + e), y, k1, k2, k3, k4)

    def observe(self, model, y, params, save):
        return y
