"""`FastPoisson`: the exact inverse of a finite-difference Laplacian (+ shift) by FFT, DST or DCT.

With the cell-centred boundaries of `sciax.pde` (faces half a spacing beyond the
edge points), homogeneous boundary conditions extend a field by reflection:
periodic wrapping, odd reflection (Dirichlet) or even reflection (Neumann). A
symmetric central stencil of any order commutes with these extensions, so it is
diagonalised per axis by the DFT (periodic), the DST-II (Dirichlet both sides) or
the DCT-II (Neumann both sides), with eigenvalues `sum_j w_j cos(j theta) / h^2`
at `theta = 2 pi k / n`, `pi (k + 1) / n` and `pi k / n` respectively. Solving is
then one forward and one inverse transform: O(N log N), exact to round-off.

jax offers only the DCT (`jax.scipy.fft.dct`), so the DST-II is built from it:
`DST-II(x)_k = DCT-II((-1)^i x_i)_{n-1-k}` (both orthonormal). For the spectral
(not finite-difference) periodic Poisson solve see `sciax.pde.spectral.solve_poisson`.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.fft import dct, idct
from jaxtyping import Array, Float

from ..grid import Dirichlet, Neumann, Periodic
from ..grid.stencils import central
from ._operator import GridOperator, _Laplacian
from ._preconditioner import AbstractPreconditioner


def _alternate(n: int, axis: int, ndim: int, dtype):
    shape = [1] * ndim
    shape[axis] = n
    return jnp.asarray((-1.0) ** np.arange(n), dtype).reshape(shape)


def dst2(x: Array, axis: int) -> Array:
    """Orthonormal DST-II along `axis` (equals `scipy.fft.dst(x, type=2, norm="ortho")`)."""
    y = dct(x * _alternate(x.shape[axis], axis, x.ndim, x.dtype), type=2, axis=axis, norm="ortho")
    return jnp.flip(y, axis)


def idst2(y: Array, axis: int) -> Array:
    """Inverse of `dst2` (the orthonormal DST-III)."""
    x = idct(jnp.flip(y, axis), type=2, axis=axis, norm="ortho")
    return x * _alternate(y.shape[axis], axis, y.ndim, y.dtype)


def _kind(pair, axis: int) -> str:
    lo, hi = pair
    for name, cls in (("periodic", Periodic), ("dirichlet", Dirichlet), ("neumann", Neumann)):
        if isinstance(lo, cls) and isinstance(hi, cls):
            return name
    raise ValueError(
        f"FastPoisson: axis {axis} has boundary conditions {pair!r}; fast solvers need the same kind on both sides "
        "(Periodic, Dirichlet or Neumann). For mixed sides use method='multigrid' or a Krylov method"
    )


class FastPoisson(AbstractPreconditioner):
    """Exact inverse of `A = scale * laplacian + shift` from `sciax.linalg.laplacian_operator`.

    Per axis: FFT (periodic), DST-II (Dirichlet) or DCT-II (Neumann), any stencil
    order; any number of points. Used by `solve(..., method="fast")` and as an
    exact preconditioner. On a singular operator (pure Neumann/periodic, `shift = 0`)
    it returns the zero-mean solution, i.e. it projects out the mean of `r` (the
    compatibility check is `solve`'s). `scale`, `shift` must not make `A` singular
    otherwise (Helmholtz `shift = k^2` hitting an eigenvalue gives inf).
    """

    eigenvalues: Float[Array, "..."]
    kinds: tuple[str, ...] = eqx.field(static=True)
    shape: tuple[int, ...] = eqx.field(static=True)
    symmetric: bool = eqx.field(static=True, default=True)

    def __init__(self, operator: GridOperator):
        if not (isinstance(operator, GridOperator) and isinstance(operator.stencil, _Laplacian)):
            raise TypeError(
                "FastPoisson: operator must come from sciax.linalg.laplacian_operator (constant-coefficient Laplacian "
                f"plus shift), got {type(operator).__name__}; for variable coefficients use multigrid"
            )
        grid = operator.grid
        self.kinds = tuple(_kind(pair, axis) for axis, pair in enumerate(operator.sides))
        self.shape = grid.shape
        periodic = [a for a, k in enumerate(self.kinds) if k == "periodic"]
        offsets, weights = central(2, operator.stencil.order)
        dtype = operator.dtype
        eig = jnp.zeros((), dtype)
        for axis, (kind, n, h) in enumerate(zip(self.kinds, grid.shape, grid.spacing)):
            if kind == "periodic":
                k = np.arange(n // 2 + 1) if periodic and axis == periodic[-1] else np.arange(n)
                theta = 2 * np.pi * k / n
            else:
                theta = np.pi * (np.arange(n) + (1 if kind == "dirichlet" else 0)) / n
            sym = sum(w * np.cos(o * theta) for o, w in zip(offsets, weights)) / h**2
            shape = [1] * grid.ndim
            shape[axis] = len(theta)
            eig = eig + jnp.asarray(sym.reshape(shape), dtype)
        eig = jax.lax.stop_gradient(operator.scale * eig + operator.shift)
        # The zero mode of a singular operator is dropped (zero-mean solution).
        self.eigenvalues = jnp.where(eig == 0, jnp.inf, eig) if operator.singular else eig

    def structure(self):
        return jax.ShapeDtypeStruct(self.shape, self.eigenvalues.dtype)

    def apply(self, r: Float[Array, "*grid"]) -> Float[Array, "*grid"]:
        x = r
        for axis, kind in enumerate(self.kinds):
            if kind == "dirichlet":
                x = dst2(x, axis)
            elif kind == "neumann":
                x = dct(x, type=2, axis=axis, norm="ortho")
        periodic = [a for a, k in enumerate(self.kinds) if k == "periodic"]
        if periodic:
            x = jnp.fft.rfftn(x, axes=periodic)
            x = jnp.fft.irfftn(x / self.eigenvalues, s=[self.shape[a] for a in periodic], axes=periodic)
        else:
            x = x / self.eigenvalues
        for axis, kind in enumerate(self.kinds):
            if kind == "dirichlet":
                x = idst2(x, axis)
            elif kind == "neumann":
                x = idct(x, type=2, axis=axis, norm="ortho")
        return x.astype(r.dtype)
