"""`HLLC`: Toro, Spruce and Speares' three-wave approximate Riemann solver for the Euler equations.

Reference: E. F. Toro, M. Spruce and W. Speares, "Restoration of the contact surface in the
HLL-Riemann solver", Shock Waves 4 (1994) 25-34; Toro, "Riemann Solvers and Numerical Methods for
Fluid Dynamics", 3rd ed., section 10.4 (eqs. 10.37-10.39, 10.73 and 10.48).
"""

from __future__ import annotations

import jax.numpy as jnp

from ._numerical_flux import AbstractNumericalFlux, davis_speeds


def _star_state(state, rho, vel, p, s, s_star):
    """The conserved state between the wave of speed `s` and the contact (Toro, eq. 10.39); the
    tangential velocities (fields 2 .. d of a d-D state) are continuous across the acoustic waves."""
    factor = rho * (s - vel) / (s - s_star)
    energy = state[-1] / rho + (s_star - vel) * (s_star + p / (rho * (s - vel)))
    tangential = [state[k] / rho for k in range(2, state.shape[0] - 1)]
    return factor * jnp.stack([jnp.ones_like(rho), s_star, *tangential, energy])


class HLLC(AbstractNumericalFlux):
    """The HLLC flux for `sciax.pde.fv.Euler`: HLL with the contact wave restored, speed
    `s*` from Toro's eq. 10.37 and Davis's bounds `s_l`, `s_r`. Exact for isolated contacts and
    shocks (and shear waves in 2-D/3-D: the tangential velocity jumps at the contact only);
    positivity preserving with these bounds. States `(d + 2, faces)`, the normal momentum first."""

    def check_model(self, model) -> None:
        from ._euler import Euler

        if not isinstance(model, Euler):
            raise TypeError(
                f"HLLC: serves the Euler equations only, got {type(model).__name__}; use HLL() or Rusanov()"
            )

    def __call__(self, model, left, right, params):
        rho_l, u_l, p_l = model.primitive(left, params)
        rho_r, u_r, p_r = model.primitive(right, params)
        s_l, s_r = davis_speeds(model, left, right, params)
        mass_l, mass_r = rho_l * (s_l - u_l), rho_r * (s_r - u_r)
        s_star = (p_r - p_l + u_l * mass_l - u_r * mass_r) / (mass_l - mass_r)
        # Only the side of the contact that the face lies on matters: pick its quantities first and
        # build one flux and one star state per face (the same arithmetic as building both).
        on_left = (s_l >= 0) | (s_star >= 0)
        state = jnp.where(on_left, left, right)
        rho, vel, p, s = (jnp.where(on_left, a, b) for a, b in ((rho_l, rho_r), (u_l, u_r), (p_l, p_r), (s_l, s_r)))
        f = model.flux(state, params)
        star = f + s * (_star_state(state, rho, vel, p, s, s_star) - state)
        supersonic = jnp.where(on_left, s_l >= 0, s_r <= 0)
        return jnp.where(supersonic, f, star)
