"""`exact_riemann_euler`: the exact solution of the Riemann problem for the 1-D Euler equations.

Reference: E. F. Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed.
(2009), chapter 4: the pressure function (eqs. 4.5-4.8 and 4.37), Newton's method on it
(section 4.3.2) and the sampling of the solution (section 4.5).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

# Newton's iteration converges quadratically from the two-rarefaction guess; a fixed number keeps
# the solver a pure, jit- and vmap-able function.
_NEWTON_ITERATIONS = 40


def _wave(p, rho, pk, a, gamma):
    """Toro's `f_K(p)` and its derivative: a shock if `p > p_K`, a rarefaction otherwise."""
    big_a, big_b = 2 / ((gamma + 1) * rho), (gamma - 1) / (gamma + 1) * pk
    root = jnp.sqrt(big_a / (p + big_b))
    shock, d_shock = (p - pk) * root, root * (1 - (p - pk) / (2 * (big_b + p)))
    ratio = p / pk
    z = (gamma - 1) / (2 * gamma)
    fan = 2 * a / (gamma - 1) * (ratio**z - 1)
    d_fan = ratio ** (-(gamma + 1) / (2 * gamma)) / (rho * a)
    is_shock = p > pk
    return jnp.where(is_shock, shock, fan), jnp.where(is_shock, d_shock, d_fan)


def _star_pressure(left, right, gamma):
    (rho_l, u_l, p_l), (rho_r, u_r, p_r) = left, right
    a_l, a_r = jnp.sqrt(gamma * p_l / rho_l), jnp.sqrt(gamma * p_r / rho_r)
    z = (gamma - 1) / (2 * gamma)
    # The two-rarefaction guess (Toro, eq. 4.46), exact when both waves are rarefactions.
    guess = ((a_l + a_r - 0.5 * (gamma - 1) * (u_r - u_l)) / (a_l / p_l**z + a_r / p_r**z)) ** (1 / z)
    floor = 1e-12 * jnp.minimum(p_l, p_r)

    def newton(p, _):
        f_l, d_l = _wave(p, rho_l, p_l, a_l, gamma)
        f_r, d_r = _wave(p, rho_r, p_r, a_r, gamma)
        return jnp.maximum(p - (f_l + f_r + u_r - u_l) / (d_l + d_r), floor), None

    p = jax.lax.scan(newton, jnp.maximum(guess, floor), None, length=_NEWTON_ITERATIONS)[0]
    f_l, _ = _wave(p, rho_l, p_l, a_l, gamma)
    f_r, _ = _wave(p, rho_r, p_r, a_r, gamma)
    return p, 0.5 * (u_l + u_r) + 0.5 * (f_r - f_l), a_l, a_r


def _side(s, rho, u, p, a, p_star, u_star, gamma, sign):
    """The solution at `x/t = s` on one side of the contact; `sign = -1` left, `+1` right (the right
    side is the left one seen in a mirror, Toro section 4.5)."""
    g1, g2 = (gamma - 1) / (gamma + 1), 2 / (gamma + 1)
    ratio = p_star / p
    # Shock (Toro eqs. 4.50-4.52 and 4.57-4.59).
    shock_speed = u + sign * a * jnp.sqrt((gamma + 1) / (2 * gamma) * ratio + (gamma - 1) / (2 * gamma))
    rho_shock = rho * (ratio + g1) / (g1 * ratio + 1)
    beyond_shock = sign * (s - shock_speed) >= 0
    shock = [jnp.where(beyond_shock, q, q_star) for q, q_star in ((rho, rho_shock), (u, u_star), (p, p_star))]
    # Rarefaction (Toro eqs. 4.53-4.56 and 4.60-4.63).
    a_star = a * ratio ** ((gamma - 1) / (2 * gamma))
    head, tail = u + sign * a, u_star + sign * a_star
    base = jnp.maximum(g2 - sign * g1 / a * (u - s), 0.0)
    fan = (
        rho * base ** (2 / (gamma - 1)),
        g2 * (-sign * a + 0.5 * (gamma - 1) * u + s),
        p * base ** (2 * gamma / (gamma - 1)),
    )
    star = (rho * ratio ** (1 / gamma), u_star, p_star)
    outside = sign * (s - head) >= 0
    inside_star = sign * (s - tail) <= 0
    rarefaction = [
        jnp.where(outside, q, jnp.where(inside_star, q_star, q_fan)) for q, q_star, q_fan in zip((rho, u, p), star, fan)
    ]
    is_shock = p_star > p
    return tuple(jnp.where(is_shock, q_s, q_r) for q_s, q_r in zip(shock, rarefaction))


def exact_riemann_euler(
    left: tuple[ArrayLike, ArrayLike, ArrayLike],
    right: tuple[ArrayLike, ArrayLike, ArrayLike],
    gamma: ArrayLike,
    x_over_t: Float[ArrayLike, "..."],
) -> tuple[Float[Array, "..."], Float[Array, "..."], Float[Array, "..."]]:
    """The exact solution `(rho, u, p)` of the Euler Riemann problem at the similarity coordinates
    `x_over_t` (the discontinuity at `x = 0`, `t = 0`; same shape as `x_over_t`).

    **Arguments:** `left`, `right`: `(density, velocity, pressure)` of each initial state (scalars,
    numpy or jax; density and pressure > 0); `gamma`: ratio of specific heats (> 1); `x_over_t`:
    where to sample, in velocity units.

    Star pressure by Newton's method on Toro's pressure function from the two-rarefaction guess,
    a fixed 40 iterations (jit- and vmap-able; differentiable in all arguments). Raises
    `ValueError` for concrete initial states that generate a vacuum
    (`2 (a_l + a_r) / (gamma - 1) <= u_r - u_l`, Toro eq. 4.40), which this solver excludes.
    """
    left = tuple(jnp.asarray(q, float) for q in left)
    right = tuple(jnp.asarray(q, float) for q in right)
    gamma = jnp.asarray(gamma, float)
    if not any(isinstance(q, jax.core.Tracer) for q in (*left, *right, gamma)):
        rho_l, u_l, p_l = (float(q) for q in left)
        rho_r, u_r, p_r = (float(q) for q in right)
        g = float(gamma)
        if min(rho_l, p_l, rho_r, p_r) <= 0 or g <= 1:
            raise ValueError(
                "exact_riemann_euler: need density > 0, pressure > 0 and gamma > 1, got "
                f"left={left}, right={right}, gamma={g}"
            )
        a_sum = np.sqrt(g * p_l / rho_l) + np.sqrt(g * p_r / rho_r)
        if 2 * a_sum / (g - 1) <= u_r - u_l:
            raise ValueError(
                "exact_riemann_euler: these states generate a vacuum (2 (a_l + a_r) / (gamma - 1) <= u_r - u_l), "
                "which this solver does not handle"
            )
    return _solve(left, right, gamma, jnp.asarray(x_over_t, left[0].dtype))


@jax.jit
def _solve(left, right, gamma, s):
    p_star, u_star, a_l, a_r = _star_pressure(left, right, gamma)
    on_left = _side(s, *left, a_l, p_star, u_star, gamma, -1.0)
    on_right = _side(s, *right, a_r, p_star, u_star, gamma, 1.0)
    return tuple(jnp.where(s <= u_star, q_l, q_r) for q_l, q_r in zip(on_left, on_right))
