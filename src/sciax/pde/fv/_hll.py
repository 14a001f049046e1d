"""`HLL`: the two-wave approximate Riemann solver of Harten, Lax and van Leer.

Reference: A. Harten, P. D. Lax and B. van Leer, "On upstream differencing and Godunov-type schemes
for hyperbolic conservation laws", SIAM Review 25 (1983) 35-61; Toro, section 10.3.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._numerical_flux import AbstractNumericalFlux, davis_speeds


class HLL(AbstractNumericalFlux):
    """The HLL flux with Davis's wave-speed bounds `s_l <= s_r` (Toro, eqs. 10.21 and 10.48):
    upwind when both waves go one way, else
    `(s_r f(l) - s_l f(r) + s_l s_r (r - l)) / (s_r - s_l)`. For any model; smears contacts."""

    def __call__(self, model, left, right, params):
        low, high = davis_speeds(model, left, right, params)
        f_l, f_r = model.flux(left, params), model.flux(right, params)
        s_l, s_r = jnp.minimum(low, 0.0), jnp.maximum(high, 0.0)
        # s_r - s_l is 0 only when both states are at rest and dry/degenerate (all speeds 0):
        # there f_l = f_r and the average is the flux.
        width = s_r - s_l
        safe = jnp.where(width > 0, width, 1.0)
        star = (s_r * f_l - s_l * f_r + s_l * s_r * (right - left)) / safe
        return jnp.where(width > 0, star, 0.5 * (f_l + f_r))
