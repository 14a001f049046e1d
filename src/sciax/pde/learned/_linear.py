"""`LinearReconstruction`: the standard linear face values on a stencil (the fixed-weight
baselines of the learned schemes: centred and upwind-biased finite volumes of any order)."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from ..fv import AbstractReconstruction
from ._stencil import _check_stencil, face_coefficients


class LinearReconstruction(AbstractReconstruction):
    """The standard linear reconstruction on a stencil of cells `(lo, hi)` around each cell:
    the unique weights exact for polynomials of degree `hi - lo` (order `hi - lo + 1`), e.g.
    `(0, 1)`, `(-1, 2)`, `(-2, 3)` the centred schemes of orders 2, 4, 6 and `(-1, 1)`, `(-2, 2)`
    the upwind-biased ones of orders 3, 5. Its left face is the mirror image (so a centred
    stencil gives both states equal: no numerical dissipation). **Field:** `stencil` (static)."""

    stencil: tuple[int, int] = eqx.field(static=True)

    def __init__(self, stencil: tuple[int, int]):
        self.stencil = _check_stencil("LinearReconstruction", stencil)

    @property
    def radius(self) -> int:
        return max(-self.stencil[0], self.stencil[1])

    def edges(self, v, axis=-1):
        v = jnp.moveaxis(v, axis, -1)
        lo, hi = self.stencil
        base = face_coefficients((lo, hi))[0]
        m, r = v.shape[-1], self.radius

        def face(sign):
            return sum(c * v[..., r + sign * k : m - r + sign * k] for c, k in zip(base, range(lo, hi + 1)))

        return jnp.moveaxis(face(1), -1, axis), jnp.moveaxis(face(-1), -1, axis)
