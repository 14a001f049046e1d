"""`brusselator_2d`: the 2-D Brusselator with diffusion, the standard large stiff system.

Reference: E. Hairer and G. Wanner, Solving Ordinary Differential Equations II, 2nd ed.,
Springer (1996), §IV.1 ("BRUSS", the Brusselator with diffusion), in the periodic 2-D form with
a forcing disc used by SciMLBenchmarks' stiff PDE benchmark and DifferentialEquations.jl's
documentation (A = 3.4, B = 1, alpha = 10, t in [0, 11.5]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jaxtyping import Array, Float

from .._param_spec import ParamSpec
from ..grid import Grid, Periodic
from ..linalg import stencil_pattern
from ._diffusion_preconditioner import DiffusionPreconditioner
from ._ode import ODE


class Brusselator2D(NamedTuple):
    """What `brusselator_2d` returns: the `model` (params: the diffusion coefficient `alpha`, a
    scalar), the standard `y0` (shape `(2 n^2,)`, `u` then `v`, each C-order `(n, n)`), `t_end`,
    the standard `alpha`, the Jacobian's sparsity `pattern` (scipy CSR, `2 n^2` square), the
    point-local `reactions(t, z, alpha)` alone (for operator-split preconditioners) and
    `diffusion`, the FFT inverse of `I - c alpha lap` on both species (Newton–Krylov's
    preconditioner)."""

    model: ODE
    y0: Float[Array, " 2*n*n"]
    t_end: float
    alpha: float
    pattern: sp.csr_matrix
    reactions: Callable
    diffusion: DiffusionPreconditioner


def _check_size(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"brusselator_2d: n must be an integer >= 3 (grid points per side), got n={n!r}")
    return int(n)


def _laplacian(w, n):
    # Periodic five-point Laplacian with spacing 1/(n - 1), as in the reference formulation.
    return (n - 1) ** 2 * (jnp.roll(w, 1, 0) + jnp.roll(w, -1, 0) + jnp.roll(w, 1, 1) + jnp.roll(w, -1, 1) - 4 * w)


def brusselator_2d(n: int, *, forcing: bool = True) -> Brusselator2D:
    """The Brusselator with diffusion on an `n x n` periodic grid of `[0, 1]^2` (spacing
    `1 / (n - 1)`, `2 n^2` states):

        u_t = 1 + u^2 v - 4.4 u + alpha lap u + f(x, y, t),   v_t = 3.4 u - u^2 v + alpha lap v,

    `f = 5` in the disc `(x - 0.3)^2 + (y - 0.6)^2 <= 0.01` for `t >= 1.1` (zero elsewhere and
    with `forcing=False`), `u0 = 22 (y (1 - y))^1.5`, `v0 = 27 (x (1 - x))^1.5`, `alpha = 10`,
    `t in [0, 11.5]`. Differentiable in the state and `alpha`; the forcing's switch at
    `t = 1.1` is a discontinuity in time. `ValueError` unless `n` is an integer `>= 3`."""
    n = _check_size(n)
    x = np.linspace(0.0, 1.0, n)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    disc = jnp.asarray(((xx - 0.3) ** 2 + (yy - 0.6) ** 2 <= 0.01).astype(float))

    def reactions(t, z, alpha):
        u, v = z.reshape(2, n, n)
        du = 1.0 + u * u * v - 4.4 * u
        if forcing:
            du = du + jnp.where(t >= 1.1, 5.0, 0.0) * disc
        return jnp.concatenate([du.ravel(), (3.4 * u - u * u * v).ravel()])

    def rhs(t, z, alpha):
        u, v = z.reshape(2, n, n)
        return reactions(t, z, alpha) + alpha * jnp.concatenate([_laplacian(u, n).ravel(), _laplacian(v, n).ravel()])

    y0 = np.concatenate([(22.0 * (yy * (1 - yy)) ** 1.5).ravel(), (27.0 * (xx * (1 - xx)) ** 1.5).ravel()])
    # The box is n / (n - 1) long so that the preconditioner's spacing is 1 / (n - 1).
    diffusion = DiffusionPreconditioner(Grid((n, n), n / (n - 1)), Periodic(), lambda alpha: alpha)
    return Brusselator2D(
        model=ODE(rhs, param_shapes=ParamSpec.build((), "sciax.ode.brusselator_2d()")),
        y0=jnp.asarray(y0),
        t_end=11.5,
        alpha=10.0,
        pattern=stencil_pattern(Grid((n, n), 1.0), 1, True, fields=2),
        reactions=reactions,
        diffusion=diffusion,
    )
