"""Three-point Gauss-Legendre quadrature across the faces of a 2-D or 3-D finite-volume grid.

A face state reconstructed along the normal axis from cell averages is an average over the face's
extent in the other (transverse) axes, and the flux of that average is the face average of the
flux only to second order when the flux is nonlinear. Point values at the three Gauss-Legendre
nodes of each transverse axis, from the quartic whose cell averages are the five nearest face
averages, and the fluxes there averaged with the weights 5/18, 8/18, 5/18 restore fifth order
(Shu, ICASE report 97-65, 1997, section 2.2, the multi-dimensional finite-volume schemes; R. Zhang,
M. Zhang and C.-W. Shu, Commun. Comput. Phys. 9 (2011) 807-827).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtyping import Array, Float

# Gauss-Legendre nodes on a cell of width 1 centred at 0, and their weights (summing to 1).
_NODES = np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)]) / 2
_WEIGHTS = np.array([5.0, 8.0, 5.0]) / 18


def _point_weights(s: float) -> tuple[float, ...]:
    """Weights of five cell averages `v_{-2..2}` giving the value at `s` of the quartic with those averages."""
    averages = np.array(
        [[((i + 0.5) ** (m + 1) - (i - 0.5) ** (m + 1)) / (m + 1) for m in range(5)] for i in range(-2, 3)]
    )
    return tuple(float(w) for w in np.linalg.solve(averages.T, s ** np.arange(5)))


_POINT_WEIGHTS = tuple(_point_weights(s) for s in _NODES)
STENCIL_RADIUS = 2  # cells read on each side along a transverse axis


def gauss_weights(transverse: int) -> np.ndarray:
    """The `3**transverse` weights of the tensor-product rule, in the order of `face_points`."""
    weights = np.ones(1)
    for _ in range(transverse):
        weights = np.outer(weights, _WEIGHTS).ravel()
    return weights


def face_points(
    v: Float[Array, "fields *padded faces"], width: int, transverse: int
) -> Float[Array, "fields q *n faces"]:
    """Values at the `q = 3**transverse` Gauss nodes of every face from face averages `v` whose
    transverse axes (1 .. transverse) carry `width >= 2` ghost cells on both sides; the ghosts are
    consumed. Linear (no limiting): callers check the results for admissibility."""
    points = v[:, None]
    for a in range(transverse):
        axis = 2 + a
        n = points.shape[axis] - 2 * width
        start = width - STENCIL_RADIUS
        stencil = [lax.slice_in_dim(points, start + k, start + k + n, axis=axis) for k in range(5)]
        nodes = jnp.stack([sum(w * s for w, s in zip(ws, stencil)) for ws in _POINT_WEIGHTS], axis=2)
        points = nodes.reshape(points.shape[0], -1, *nodes.shape[3:])
    return points


def crop_transverse(v: Array, width: int, transverse: int) -> Array:
    """`v` without the `width` ghost cells on each side of its transverse axes (1 .. transverse)."""
    for a in range(transverse):
        v = lax.slice_in_dim(v, width, v.shape[1 + a] - width, axis=1 + a)
    return v
