"""`Euler`: the compressible Euler equations of an ideal gas in 1-D, with `euler_conserved` and
`euler_primitive` to move between `(rho, u, p)` and the conserved `(rho, rho u, E)`."""

from __future__ import annotations

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from ...grid import AbstractBoundary, AbstractHalo, Grid, Outflow
from ._hllc import HLLC
from ._model import AbstractFVModel
from ._numerical_flux import AbstractNumericalFlux
from ._params import require_params
from ._reconstruction import AbstractReconstruction
from ._weno import WENO5Z


def euler_conserved(
    rho: Float[ArrayLike, "..."], u: Float[ArrayLike, "..."], p: Float[ArrayLike, "..."], gamma
) -> Float[Array, "3 ..."]:
    """The conserved state `(rho, rho u, E)`, `E = p / (gamma - 1) + rho u^2 / 2`, stacked on a
    new first axis. Differentiable."""
    rho, u, p = jnp.asarray(rho), jnp.asarray(u), jnp.asarray(p)
    rho, u, p = jnp.broadcast_arrays(rho, u, p)
    return jnp.stack([rho, rho * u, p / (gamma - 1) + 0.5 * rho * u**2])


def euler_primitive(state: Float[Array, "3 ..."], gamma) -> tuple[Array, Array, Array]:
    """`(rho, u, p)` from the conserved state `(rho, rho u, E)` (first axis). Differentiable."""
    rho, mom, energy = state[0], state[1], state[2]
    u = mom / rho
    return rho, u, (gamma - 1) * (energy - 0.5 * mom * u)


class Euler(AbstractFVModel):
    """The 1-D Euler equations of gas dynamics for an ideal gas, `p = (gamma - 1)(E - rho u^2 / 2)`:

    `(rho, rho u, E)_t + (rho u, rho u^2 + p, (E + p) u)_x = 0`.

    State: `(3, n)` cell averages of density, momentum and total energy per volume (build it with
    `euler_conserved`). `params = {"gamma": 1.4}`, the ratio of specific heats (> 1),
    differentiable and batchable. Density and pressure must stay > 0 (checked on `y0`).

    **Arguments:** `grid` (1-D); `bc`: `Periodic()`, `Outflow()` or `Reflective()` (a wall:
    the momentum is mirrored with a change of sign) per side; `reconstruction` (default
    `WENO5Z()`); `numerical_flux` (default `HLLC()`); `characteristic`: reconstruct the
    characteristic variables of each face (`eigenvectors`) rather than the conserved ones, which
    removes most of the small oscillations that component-wise WENO leaves next to shocks, at
    about twice the cost of a right-hand side (Shu, "Essentially non-oscillatory and weighted
    essentially non-oscillatory schemes for hyperbolic conservation laws", ICASE report 97-65,
    1997, section 2.8).
    """

    grid: Grid = eqx.field(static=True)
    halos: tuple[AbstractHalo, ...]
    reconstruction: AbstractReconstruction
    numerical_flux: AbstractNumericalFlux
    characteristic: bool = eqx.field(static=True)
    field_names: ClassVar[tuple[str, ...]] = ("density", "momentum", "energy")
    admissibility: ClassVar[str] = "density > 0 and pressure > 0"

    def __init__(
        self,
        grid: Grid,
        bc: AbstractBoundary | None = None,
        *,
        reconstruction: AbstractReconstruction | None = None,
        numerical_flux: AbstractNumericalFlux | None = None,
        characteristic: bool = False,
    ):
        self._assemble(
            grid,
            Outflow() if bc is None else bc,
            WENO5Z() if reconstruction is None else reconstruction,
            HLLC() if numerical_flux is None else numerical_flux,
            fields=3,
            odd=(1,),
            walls=True,
        )
        if not isinstance(characteristic, bool):
            raise TypeError(f"Euler: characteristic must be True or False, got {characteristic!r}")
        self.characteristic = characteristic

    def check_params(self, params) -> None:
        require_params("Euler", params, ("gamma",), "{'gamma': 1.4}")

    def primitive(self, u, params):
        return euler_primitive(u, params["gamma"])

    def flux(self, u, params):
        rho, vel, p = self.primitive(u, params)
        return jnp.stack([u[1], u[1] * vel + p, (u[2] + p) * vel])

    def sound_speed(self, rho, p, params):
        return jnp.sqrt(params["gamma"] * p / rho)

    def wave_speeds(self, u, params):
        rho, vel, p = self.primitive(u, params)
        c = self.sound_speed(rho, p, params)
        return vel - c, vel + c

    def admissible(self, u, params):
        rho, _, p = self.primitive(u, params)
        return (rho > 0) & (p > 0)

    def eigenvectors(self, left, right, params) -> tuple[Array, Array]:
        """`(L, R)`, each `(faces, 3, 3)`: the left and right eigenvectors of the flux Jacobian at
        the Roe average of `left` and `right` (`L R = I`; Toro, eqs. 3.23 and 11.60), columns of
        `R` for the speeds `u - a`, `u`, `u + a`."""
        gamma = params["gamma"]
        rho_l, u_l, p_l = self.primitive(left, params)
        rho_r, u_r, p_r = self.primitive(right, params)
        w_l, w_r = jnp.sqrt(rho_l), jnp.sqrt(rho_r)
        u = (w_l * u_l + w_r * u_r) / (w_l + w_r)
        h = (w_l * (left[2] + p_l) / rho_l + w_r * (right[2] + p_r) / rho_r) / (w_l + w_r)
        a = jnp.sqrt((gamma - 1) * (h - 0.5 * u**2))
        one = jnp.ones_like(u)
        right_vectors = jnp.stack(
            [
                jnp.stack([one, one, one], -1),
                jnp.stack([u - a, u, u + a], -1),
                jnp.stack([h - u * a, 0.5 * u**2, h + u * a], -1),
            ],
            -2,
        )
        b1 = (gamma - 1) / a**2
        b2 = 0.5 * b1 * u**2
        left_vectors = jnp.stack(
            [
                jnp.stack([0.5 * (b2 + u / a), -0.5 * (b1 * u + 1 / a), 0.5 * b1], -1),
                jnp.stack([1 - b2, b1 * u, -b1], -1),
                jnp.stack([0.5 * (b2 - u / a), -0.5 * (b1 * u - 1 / a), 0.5 * b1], -1),
            ],
            -2,
        )
        return left_vectors, right_vectors

    def face_states(self, t, u, params):
        if not self.characteristic:
            return super().face_states(t, u, params)
        r = self.reconstruction.radius
        g, n = r + 1, u.shape[-1]
        padded = self.pad(u, g, t)
        before, after = padded[:, g - 1 : n + g], padded[:, g : n + g + 1]
        left_vectors, right_vectors = self.eigenvectors(before, after, params)
        # Each face reconstructs from its own window of 2r + 2 cells, in its own characteristic
        # variables: the cell before the face gives the left state, the cell after it the right.
        window = padded[:, jnp.arange(n + 1)[:, None] + jnp.arange(2 * r + 2)[None, :]]
        waves = jnp.einsum("fij,jfk->ifk", left_vectors, window)
        right_edge, left_edge = self.reconstruction.edges(waves)
        left = jnp.einsum("fij,jf->if", right_vectors, right_edge[..., 0])
        right = jnp.einsum("fij,jf->if", right_vectors, left_edge[..., 1])
        # The positivity fallback of `positivity_ok`, per interior cell, per face at the two ghosts.
        ok = self.positivity_ok(u, left[:, 1:], right[:, :-1], params)
        left = left.at[:, 1:].set(jnp.where(ok, left[:, 1:], u))
        right = right.at[:, :-1].set(jnp.where(ok, right[:, :-1], u))
        left = left.at[:, 0].set(jnp.where(self.admissible(left[:, :1], params)[0], left[:, 0], before[:, 0]))
        right = right.at[:, -1].set(jnp.where(self.admissible(right[:, -1:], params)[0], right[:, -1], after[:, -1]))
        return left, right
