"""Restarted, right-preconditioned GMRES that stops as soon as the residual is small, on blocks at once.

The Newton systems of `BDF`'s Krylov mode are well preconditioned (an exact inverse
of the stiff diffusion leaves a near-identity operator), so a few Arnoldi steps
solve them. `lineax.GMRES` runs every restart cycle to its full length (20 steps)
and ends only when both the residual and the change between two cycles are small
entry by entry, i.e. after two or three full cycles: 40-60 operator applications
where 3-5 suffice, measured as most of a `BDF` step's time. This GMRES follows Saad &
Schultz (SIAM J. Sci. Stat. Comput. 7, 1986) with Givens rotations, so the residual
norm of the current iterate is known at every Arnoldi step and the iteration stops
there (Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed., Alg. 6.11 with
right preconditioning, §9.3.2). Orthogonalisation is modified Gram–Schmidt, which
keeps GMRES backward stable (Paige, Rozložník & Strakoš, SIAM J. Matrix Anal. Appl.
28, 2006), in a loop over the vectors built so far only: an early stop then costs
what it did, not a full cycle's worth of products with the basis.

It works on `(M, n)` blocks: `M` independent systems (the members of a shared-step
ensemble), each with its own Krylov space, inner products, rotations and stopping
test; the loop runs until the last block has converged, and a converged block's
later Arnoldi steps leave its iterate unchanged. With `M = 1` it is plain GMRES.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jaxtyping import Array, Bool, Float


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _arnoldi_cycle(matvec, precondition, r, tol, restart):
    """One cycle from residual `r` `(M, n)`: the correction to the iterate and the residual norms `(M,)`."""
    members, n = r.shape
    beta = _norm(r)
    basis = jnp.zeros((restart + 1, members, n), r.dtype).at[0].set(r / jnp.where(beta > 0, beta, 1.0)[:, None])
    carry = dict(
        basis=basis,
        # The preconditioned basis vectors, kept so that the correction needs no preconditioner application
        # of its own (as flexible GMRES, Saad 2003, Alg. 9.6): one application per Arnoldi step, not one more
        # per cycle, where a cycle often has one or two steps.
        preconditioned=jnp.zeros((restart, members, n), r.dtype),
        hess=jnp.broadcast_to(jnp.eye(restart, dtype=r.dtype), (members, restart, restart)),
        cs=jnp.ones((members, restart), r.dtype),
        sn=jnp.zeros((members, restart), r.dtype),
        g=jnp.zeros((members, restart + 1), r.dtype).at[:, 0].set(beta),
        active=beta > tol,
        k=jnp.zeros((), jnp.int32),
    )

    def step(c):
        k, active = c["k"], c["active"]
        z = precondition(c["basis"][k])
        w = matvec(z)

        def orthogonalise(j, wh):  # modified Gram-Schmidt against the k + 1 vectors so far only
            w, h = wh
            v = c["basis"][j]
            coeff = jnp.sum(v * w, axis=-1)
            return w - coeff[:, None] * v, h.at[:, j].set(coeff)

        w, h = jax.lax.fori_loop(0, k + 1, orthogonalise, (w, jnp.zeros((members, restart + 1), r.dtype)))
        h_next = _norm(w)
        basis = c["basis"].at[k + 1].set(w / jnp.where(h_next > 0, h_next, 1.0)[:, None])

        def rotate(j, h):  # the earlier rotations, in order, on the new column
            hj, hj1 = h[:, j], h[:, j + 1]
            return (
                h.at[:, j]
                .set(c["cs"][:, j] * hj + c["sn"][:, j] * hj1)
                .at[:, j + 1]
                .set(-c["sn"][:, j] * hj + c["cs"][:, j] * hj1)
            )

        h = jax.lax.fori_loop(0, k, rotate, h)
        hk = h[:, k]
        rho = jnp.hypot(hk, h_next)
        safe = jnp.where(rho > 0, rho, 1.0)
        cs_k, sn_k = jnp.where(rho > 0, hk / safe, 1.0), jnp.where(rho > 0, h_next / safe, 0.0)
        column = jnp.where(jnp.arange(restart)[None, :] == k, rho[:, None], h[:, :restart])
        column = jnp.where(active[:, None], column, jnp.eye(restart, dtype=r.dtype)[k][None, :])
        gk = c["g"][:, k]
        # A converged block carries its residual forward with a zero coefficient for this column.
        g = c["g"].at[:, k].set(jnp.where(active, cs_k * gk, 0.0)).at[:, k + 1].set(jnp.where(active, -sn_k * gk, gk))
        residual = jnp.abs(g[:, k + 1])
        return dict(
            basis=basis,
            preconditioned=c["preconditioned"].at[k].set(z),
            hess=c["hess"].at[:, :, k].set(column),
            cs=c["cs"].at[:, k].set(jnp.where(active, cs_k, 1.0)),
            sn=c["sn"].at[:, k].set(jnp.where(active, sn_k, 0.0)),
            g=g,
            active=active & (residual > tol) & (h_next > 0),
            k=k + 1,
        )

    c = jax.lax.while_loop(lambda c: (c["k"] < restart) & jnp.any(c["active"]), step, carry)
    coeffs = jnp.where(jnp.arange(restart)[None, :] < c["k"], c["g"][:, :restart], 0.0)
    y = jax.vmap(lambda hess, g: jsl.solve_triangular(hess, g, lower=False))(c["hess"], coeffs)
    correction = jax.lax.fori_loop(
        0, c["k"], lambda j, x: x + y[:, j, None] * c["preconditioned"][j], jnp.zeros_like(r)
    )
    return correction, jnp.abs(c["g"][jnp.arange(members), c["k"]])


def gmres(
    matvec: Callable[[Float[Array, "M n"]], Float[Array, "M n"]],
    precondition: Callable[[Float[Array, "M n"]], Float[Array, "M n"]],
    b: Float[Array, "M n"],
    *,
    rtol: float,
    atol: float,
    restart: int = 20,
    max_restarts: int = 10,
) -> tuple[Float[Array, "M n"], Bool[Array, " M"]]:
    """Solve the `M` systems `A x = b` block by block; `A` and the preconditioner act on all blocks at once.

    A block has converged when the root mean square of its residual is at most
    `atol + rtol * rms(b)` (norm-wise, as an inexact Newton step wants). Returns the
    solutions `(M, n)` and which blocks converged within `max_restarts` cycles of at
    most `restart` steps. Not differentiable itself (loops): wrap it in
    `jax.lax.custom_linear_solve`.
    """
    members, n = b.shape
    restart = min(restart, n)
    tol = (atol + rtol * _norm(b) / n**0.5) * n**0.5

    def cycle(c):
        x, _, count = c
        r = jax.lax.cond(count == 0, lambda: b, lambda: b - matvec(x))  # x = 0 at first: no product needed
        correction, residual = _arnoldi_cycle(matvec, precondition, r, tol, restart)
        return x + correction, residual, count + 1

    start = (jnp.zeros_like(b), jnp.full((members,), jnp.inf, b.dtype), jnp.zeros((), jnp.int32))
    x, residual, _ = jax.lax.while_loop(lambda c: (c[2] < max_restarts) & jnp.any(~(c[1] <= tol)), cycle, start)
    return x, residual <= tol


__all__ = ["gmres"]
