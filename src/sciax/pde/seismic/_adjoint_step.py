"""The transpose of one `AcousticWave` leapfrog step without sources, written out: the adjoint field
is stepped like the pressure (two times and the CPML memory), each staggered derivative replaced by
its transpose (the mirrored stencil on the zero-extended field, the halo's ghost points folded back
onto the points they copy).

The step (per axis, CPML coefficients `b, a, 1/k` at the faces `F` and points `P`, `h` the halo):

    dp = D+ p,  psi_F+ = b_F psi_F + a_F dp,  flux = (dp / k_F + psi_F+) / rho,
    d = D- flux,  psi_P+ = b_P psi_P + a_P d,  div = d / k_P + psi_P+,
    p+ = 2 p - p- + dt^2 kappa sum_axes div,

is linear in `(p, p-, psi)`. Its transpose maps the cotangent `(lam, lam_-, l_F, l_P)` of
`(p+, p, psi_F+, psi_P+)` to that of `(p, p-, psi_F, psi_P)`; with `a = lam` and `a_- = -lam_-` the
adjoint field obeys the same leapfrog recursion as the pressure, run backwards:

    g = dt^2 kappa a,  s_P = l_P + g,  g_d = g / k_P + a_P s_P,  l_P <- b_P s_P,
    g_flux = D-^T g_d,  s_F = l_F + g_flux / rho,  g_dp = g_flux / (rho k_F) + a_F s_F,  l_F <- b_F s_F,
    a+ = 2 a - a_- + sum_axes D+^T g_dp.

Per axis two passes over the grid, like the forward step (the face field `g_dp` stored once, as
the forward stores its flux). Equal to `jax.vjp` of the step to round-off (tested in float64).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array

from ...grid import materialize, take
from ...grid.stencils import apply, staggered


def _transposed_derivative(g: Array, halo, axis: int, order: int, spacing: float, forward: bool, flux: bool) -> Array:
    """`D^T g` for the staggered derivative `D` of `AcousticWave` (`forward`: points to faces, else
    faces to points) with the halo `halo` (ghost points filled with `flux` as the forward's)."""
    half, n = order // 2, g.shape[axis]
    # The forward reads the padded field at `start_j + k` (start_j = j + 1 forward, j backward), so the
    # padded field's cotangent at k is sum_j w_j g[k - start_j]: the mirrored stencil on g extended by
    # `order` zeros (so that every shift is a slice).
    starts = [j + (1 if forward else 0) for j in range(order)]

    def padded(part: Array, first: int, size: int) -> Array:
        """The padded cotangent at `first .. first + size - 1`, `part` holding g's points from index 0."""
        widths = [(0, 0)] * g.ndim
        widths[axis] = (order, order)
        extended = jnp.pad(part, widths)
        return apply(extended, axis, [first + order - s for s in starts], staggered(1, order), size, 1 / spacing)

    fold = lambda ghosts, u: jax.vjp(lambda u: halo.pad(u, half, flux=flux, axes=(axis,)), u)[1](ghosts)[0]  # noqa: E731
    if not (halo.foldable and n >= 2 * order):
        return fold(padded(g, 0, n + 2 * half), g)
    # Away from the edges the padded cotangent at the points is a stencil on slices of g alone; within
    # `order` points of an edge it is taken from `2 order` edge points zero-extended. No full-size
    # padded copy of g is made (XLA stores one rather than fusing it into the stencil).
    low = padded(take(g, axis, 0, 2 * order), half, order)
    high = padded(take(g, axis, n - 2 * order, n), order + half, order)
    middle = apply(g, axis, [order + half - s for s in starts], staggered(1, order), n - 2 * order, 1 / spacing)
    # The ghost points copy (a linear function of) the `half` points at each edge: those points also
    # receive the ghosts' cotangents, folded as for a thin block of the two edge strips (whose ghosts
    # are the field's: `halo.foldable`).
    thin = jnp.concatenate([take(g, axis, 0, half), take(g, axis, n - half, n)], axis=axis)
    ghost_low = padded(take(g, axis, 0, order), 0, half)
    ghost_high = padded(take(g, axis, n - order, n), half + order, half)  # padded n + half .. from n - order
    edges = fold(jnp.concatenate([ghost_low, thin * 0, ghost_high], axis=axis), thin)
    return jnp.concatenate(
        [
            take(low, axis, 0, half) + take(edges, axis, 0, half),
            take(low, axis, half, order),
            middle,
            take(high, axis, 0, order - half),
            take(high, axis, order - half, order) + take(edges, axis, half, 2 * half),
        ],
        axis=axis,
    )


def transposed_step(model, operator, dt: float, a: Array, a_prev: Array, memory) -> tuple[Array, tuple]:
    """`(a+, memory+)`: one step of the adjoint field (see the module docstring).

    `model`: the `AcousticWave`; `operator`: its `AcousticOperator` (`kappa`, `1 / rho` at the faces (`FaceBuoyancy`),
    CPML coefficients); `a`, `a_prev`: the adjoint field now and one (backward) step before
    (`grid.shape`); `memory`: per axis the CPML memory cotangents (`CPMLMemory` or `None`).
    """
    g = dt**2 * operator.kappa * a
    total, new_memory = 2 * a - a_prev, []
    for axis, (layer, faces) in enumerate(zip(operator.cpml, operator.inv_rho_faces, strict=True)):
        h = model.grid.spacing[axis]

        def face_cotangent(g, faces, layer, l_memory, axis=axis, h=h):
            """The cotangent of `dp` (faces) and the new CPML memory cotangents."""
            inv_rho = faces.at(axis)
            if layer is None:
                g_d = g
            else:
                s_points = l_memory.points + g
                g_d = g * layer.points.inv_kappa + layer.points.a * s_points
            g_flux = _transposed_derivative(g_d, model.halo, axis, model.order, h, forward=False, flux=True)
            if layer is None:
                return g_flux * inv_rho, None
            s_faces = l_memory.faces + g_flux * inv_rho
            g_dp = g_flux * inv_rho * layer.faces.inv_kappa + layer.faces.a * s_faces
            return g_dp, type(l_memory)(layer.faces.b * s_faces, layer.points.b * s_points)

        # Stored once: fused into the outer transposed stencil it would be recomputed at each offset.
        g_dp, l_memory = materialize(face_cotangent, g, faces, layer, None if layer is None else memory[axis])
        total = total + _transposed_derivative(g_dp, model.halo, axis, model.order, h, forward=True, flux=False)
        new_memory.append(l_memory)
    return total, tuple(new_memory)
