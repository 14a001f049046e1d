"""`MUSCL`: van Leer's second-order slope-limited reconstruction, with minmod, van Leer or MC limiters.

References: B. van Leer, "Towards the ultimate conservative difference scheme V", J. Comput. Phys.
32 (1979) 101-136; limiters as in R. J. LeVeque, "Finite Volume Methods for Hyperbolic Problems"
(2002), section 6.9 (minmod, monotonized central) and 6.12 (van Leer's smooth limiter).
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp

from ._reconstruction import AbstractReconstruction, shifted

_LIMITERS = ("minmod", "van_leer", "mc")


def _minmod(a, b):
    return 0.5 * (jnp.sign(a) + jnp.sign(b)) * jnp.minimum(jnp.abs(a), jnp.abs(b))


def _van_leer(a, b):
    ab = a * b
    # The harmonic mean 2ab/(a+b) where the slopes agree in sign; the denominator is kept away
    # from 0 in the other branch so that its gradient is finite too.
    safe = jnp.where(ab > 0, a + b, 1.0)
    return jnp.where(ab > 0, 2 * ab / safe, 0.0)


def _mc(a, b):
    centred = 0.5 * (a + b)
    return _minmod(centred, 2 * _minmod(a, b))


class MUSCL(AbstractReconstruction):
    """Piecewise-linear reconstruction `v_i ± sigma_i / 2` with a limited slope `sigma_i`.

    `limiter`: `"minmod"` (most dissipative), `"van_leer"` (harmonic mean) or `"mc"`
    (monotonized central, least dissipative). Second order on smooth data away from
    extrema, total variation diminishing with a TVD time stepper (`SSPRK2`, `SSPRK3`).
    Differentiable almost everywhere (the limiters have kinks).
    """

    limiter: str = eqx.field(static=True, default="mc")

    def __check_init__(self):
        if self.limiter not in _LIMITERS:
            raise ValueError(f"MUSCL: limiter must be one of {_LIMITERS}, got limiter={self.limiter!r}")

    @property
    def radius(self) -> int:
        return 1

    def edges(self, v, axis=-1):
        before, centre, after = shifted(v, axis, 3)
        back, ahead = centre - before, after - centre
        slope = {"minmod": _minmod, "van_leer": _van_leer, "mc": _mc}[self.limiter](back, ahead)
        return centre + 0.5 * slope, centre - 0.5 * slope
