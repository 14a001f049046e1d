"""Fifth-order WENO reconstructions: `WENO5JS` (Jiang & Shu 1996) and `WENO5Z` (Borges et al. 2008).

References: G.-S. Jiang and C.-W. Shu, "Efficient implementation of weighted ENO schemes",
J. Comput. Phys. 126 (1996) 202-228; R. Borges, M. Carmona, B. Costa and W. S. Don, "An improved
weighted essentially non-oscillatory scheme for hyperbolic conservation laws", J. Comput. Phys.
227 (2008) 3191-3211.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp

from ._reconstruction import AbstractReconstruction, shifted

# Linear weights of the three third-order candidates for the value at the right face.
_D = (0.1, 0.6, 0.3)


def _candidates(a, b, c, d, e):
    """The three third-order values at the right face of `c` from the stencil `a b c d e`, and
    their smoothness indicators (Jiang & Shu, eqs. 2.10 and 3.2-3.4)."""
    q = ((2 * a - 7 * b + 11 * c) / 6, (-b + 5 * c + 2 * d) / 6, (2 * c + 5 * d - e) / 6)
    beta = (
        13 / 12 * (a - 2 * b + c) ** 2 + 0.25 * (a - 4 * b + 3 * c) ** 2,
        13 / 12 * (b - 2 * c + d) ** 2 + 0.25 * (b - d) ** 2,
        13 / 12 * (c - 2 * d + e) ** 2 + 0.25 * (3 * c - 4 * d + e) ** 2,
    )
    return q, beta


class AbstractWENO5(AbstractReconstruction):
    """A five-point WENO reconstruction: a convex combination of three third-order candidates
    with nonlinear weights `alpha_k / sum(alpha)`, `alpha_k` from `weights(beta)`. Fifth order
    on smooth data; differentiable (the weights are smooth except where `WENO5Z`'s
    `|beta_0 - beta_2|` vanishes)."""

    @abc.abstractmethod
    def weights(self, beta: tuple) -> tuple:
        """The unnormalised weights `alpha_k` from the smoothness indicators `beta_k`."""

    @property
    def radius(self) -> int:
        return 2

    def _face(self, a, b, c, d, e):
        q, beta = _candidates(a, b, c, d, e)
        alpha = self.weights(beta)
        return (alpha[0] * q[0] + alpha[1] * q[1] + alpha[2] * q[2]) / (alpha[0] + alpha[1] + alpha[2])

    def edges(self, v, axis=-1):
        s = shifted(v, axis, 5)
        # The left face value is the right face value of the mirrored stencil.
        return self._face(*s), self._face(*s[::-1])


class WENO5JS(AbstractWENO5):
    """WENO5 of Jiang & Shu: `alpha_k = d_k / (eps + beta_k)**2`, `eps = 1e-6` (their choice).

    Its order drops to three at critical points of smooth data on coarse grids (Henrick et al.
    2005); `WENO5Z` keeps five.
    """

    eps: float = eqx.field(static=True, default=1e-6)

    def weights(self, beta):
        return tuple(d / (self.eps + b) ** 2 for d, b in zip(_D, beta))


class WENO5Z(AbstractWENO5):
    """WENO5-Z of Borges et al.: `alpha_k = d_k (1 + (tau5 / (beta_k + eps))**q)`,
    `tau5 = |beta_0 - beta_2|`, `q = 1`. `eps` guards `0 / 0` on constant data. The paper uses
    `1e-40`; the default `1e-12` is far below the indicators of resolved smooth data (the measured
    order stays five) and keeps the reverse-mode derivative `tau5 / (beta_k + eps)^2` finite next
    to a discontinuity, where `beta_k = 0` on a constant stencil (with `1e-40` it overflows)."""

    eps: float = eqx.field(static=True, default=1e-12)

    def weights(self, beta):
        tau = jnp.abs(beta[0] - beta[2])
        return tuple(d * (1 + tau / (b + self.eps)) for d, b in zip(_D, beta))
