"""`Roe`: Roe's linearised Riemann solver for the Euler equations, with Harten and Hyman's entropy fix.

References: P. L. Roe, "Approximate Riemann solvers, parameter vectors, and difference schemes",
J. Comput. Phys. 43 (1981) 357-372; A. Harten and J. M. Hyman, "Self adjusting grid methods for
one-dimensional hyperbolic conservation laws", J. Comput. Phys. 50 (1983) 235-269; Toro, "Riemann
Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., section 11.3 (eqs. 11.58-11.70) and
11.4.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._numerical_flux import AbstractNumericalFlux


def _fixed_speed(lam, lam_l, lam_r):
    """`|lambda|` made smooth near 0 inside a transonic rarefaction: `(lambda^2 + d^2) / (2 d)` for
    `|lambda| < d`, `d = max(0, lambda - lambda_l, lambda_r - lambda)` (Harten and Hyman)."""
    d = jnp.maximum(0.0, jnp.maximum(lam - lam_l, lam_r - lam))
    safe = jnp.where(d > 0, d, 1.0)
    return jnp.where(jnp.abs(lam) < d, (lam**2 + d**2) / (2 * safe), jnp.abs(lam))


class Roe(AbstractNumericalFlux):
    """Roe's flux for `sciax.pde.fv.Euler`: `(f(l) + f(r)) / 2 - sum_i alpha_i |lambda_i| K_i / 2`
    over the waves of the Roe-averaged Jacobian, with Harten and Hyman's entropy fix on the two
    acoustic waves (without it a transonic rarefaction becomes an expansion shock). Exact for
    isolated shocks and contacts; not positivity preserving (Einfeldt et al. 1991): prefer `HLLC`
    near vacuum."""

    def check_model(self, model) -> None:
        from ._euler import Euler

        if not isinstance(model, Euler):
            raise TypeError(f"Roe: serves the Euler equations only, got {type(model).__name__}; use HLL() or Rusanov()")

    def __call__(self, model, left, right, params):
        gamma = params["gamma"]
        rho_l, u_l, p_l = model.primitive(left, params)
        rho_r, u_r, p_r = model.primitive(right, params)
        h_l, h_r = (left[-1] + p_l) / rho_l, (right[-1] + p_r) / rho_r
        w_l, w_r = jnp.sqrt(rho_l), jnp.sqrt(rho_r)
        u = (w_l * u_l + w_r * u_r) / (w_l + w_r)
        h = (w_l * h_l + w_r * h_r) / (w_l + w_r)
        d = right - left
        # Tangential velocities (fields 2 .. d of a d-D state): Roe averages `v_k`, shear-wave
        # strengths `d(rho v_k) - v_k d(rho)` and eigenvectors `e_k + v_k e_E` (Toro, eqs. 11.60-11.70).
        tangential = [
            (w_l * left[k] / rho_l + w_r * right[k] / rho_r) / (w_l + w_r) for k in range(2, left.shape[0] - 1)
        ]
        shear = [d[k] - v * d[0] for k, v in zip(range(2, left.shape[0] - 1), tangential)]
        speed2, energy_jump = u**2, d[-1]
        for v, alpha in zip(tangential, shear):
            speed2, energy_jump = speed2 + v**2, energy_jump - alpha * v
        a = jnp.sqrt((gamma - 1) * (h - 0.5 * speed2))
        alpha2 = (gamma - 1) / a**2 * (d[0] * (h - u**2) + u * d[1] - energy_jump)
        alpha1 = (d[0] * (u + a) - d[1] - a * alpha2) / (2 * a)
        alpha3 = d[0] - alpha1 - alpha2
        c_l, c_r = model.sound_speed(rho_l, p_l, params), model.sound_speed(rho_r, p_r, params)
        speed1 = _fixed_speed(u - a, u_l - c_l, u_r - c_r)
        speed3 = _fixed_speed(u + a, u_l + c_l, u_r + c_r)
        ones, zeros = jnp.ones_like(u), jnp.zeros_like(u)
        k1 = jnp.stack([ones, u - a, *tangential, h - u * a])
        k2 = jnp.stack([ones, u, *tangential, 0.5 * speed2])
        k3 = jnp.stack([ones, u + a, *tangential, h + u * a])
        dissipation = alpha1 * speed1 * k1 + alpha2 * jnp.abs(u) * k2
        for j, (v, alpha) in enumerate(zip(tangential, shear)):
            shear_vector = jnp.stack([zeros, zeros, *(ones if i == j else zeros for i in range(len(shear))), v])
            dissipation = dissipation + alpha * jnp.abs(u) * shear_vector
        dissipation = dissipation + alpha3 * speed3 * k3
        return 0.5 * (model.flux(left, params) + model.flux(right, params) - dissipation)
