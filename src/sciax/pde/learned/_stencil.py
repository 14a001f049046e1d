"""`LearnedReconstruction`: face values of a finite-volume scheme from coefficients a network
chooses cell by cell, constrained to be exact for polynomials up to a chosen degree.

Reference: Y. Bar-Sinai, S. Hoyer, J. Hickey and M. P. Brenner, "Learning data-driven
discretizations for partial differential equations", PNAS 116 (2019) 15344-15349 (the
polynomial-accuracy constraint as an affine space of stencil coefficients, their eq. 3).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray

from ..fv import AbstractReconstruction


def _check_stencil(name: str, stencil) -> tuple[int, int]:
    ok = isinstance(stencil, tuple) and len(stencil) == 2 and all(isinstance(s, (int, np.integer)) for s in stencil)
    if not ok or not stencil[0] <= 0 <= stencil[1] or stencil[0] == stencil[1]:
        raise ValueError(
            f"{name}: stencil must be a pair of integer cell offsets (lo, hi) with lo <= 0 <= hi and lo < hi, "
            f"e.g. (-2, 2) or (-2, 3), got {stencil!r}"
        )
    return int(stencil[0]), int(stencil[1])


def _average_moments(offsets: np.ndarray, degree: int) -> np.ndarray:
    """`A[j, k]`: the average of `x**j` over the unit cell centred at `offsets[k]` (faces at +-1/2)."""
    j = np.arange(degree + 1)[:, None]
    return ((offsets + 0.5) ** (j + 1) - (offsets - 0.5) ** (j + 1)) / (j + 1)


def face_coefficients(
    stencil: tuple[int, int], degree: int | None = None, *, derivative: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The affine space of weights `c` with `sum_k c_k ubar_{i+k}` exact at face `i + 1/2` for
    polynomials of degree `<= degree`, `k` from `stencil[0]` to `stencil[1]`: returns `(base, null)`,
    `base` the unique weights exact to the stencil's highest degree (`width - 1`, the standard
    linear scheme on it) and `null` (`width x (width - degree - 1)`, orthonormal columns) a basis
    of the directions that keep degree `degree` exact. `degree=None` means `width - 1`.
    `derivative=1`: weights of the first derivative at the face times the cell width `dx` (e.g.
    `(-1, 1)` on `(0, 1)`, `(1, -15, 15, -1) / 12` on `(-1, 2)`); `null` is the same. Float64
    NumPy arrays; `ValueError` if the stencil is narrower than `degree + 1` cells."""
    lo, hi = _check_stencil("face_coefficients", stencil)
    if derivative not in (0, 1) or isinstance(derivative, bool):
        raise ValueError(f"face_coefficients: derivative must be 0 (face values) or 1, got {derivative!r}")
    width = hi - lo + 1
    degree = width - 1 if degree is None else degree
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 0:
        raise ValueError(f"face_coefficients: degree must be an integer >= 0, got {degree!r}")
    if degree + 1 > width:
        raise ValueError(
            f"face_coefficients: a stencil of {width} cells {stencil} cannot be exact for polynomials of degree "
            f"{degree}; it needs at least degree + 1 = {degree + 1} cells"
        )
    offsets = np.arange(lo, hi + 1, dtype=np.float64)
    full = _average_moments(offsets, width - 1)
    j = np.arange(width)
    # The value (or derivative) of x**j at the face x = 1/2.
    face = 0.5**j if derivative == 0 else j * 0.5 ** np.maximum(j - 1, 0)
    base = np.linalg.solve(full, face)
    # The null space of the first degree + 1 constraints: the trailing right singular vectors.
    _, _, vt = np.linalg.svd(_average_moments(offsets, degree))
    return base, vt[degree + 1 :].T.copy()


def constrained_net(
    name: str,
    net,
    stencil: tuple[int, int],
    degree: int,
    inputs: tuple[int, int],
    values: int = 1,
    derivative: int = 0,
    channels: int = 1,
):
    """`face_coefficients(stencil, degree, derivative=derivative)` after checking that it leaves
    freedom to learn and that `net` maps an input window of `inputs` cells (`channels` fields of
    them, one after the other) to `values` sets of free coefficients; the errors name `name`."""
    base, null = face_coefficients(stencil, degree, derivative=derivative)
    width, free = null.shape
    if free == 0:
        raise ValueError(
            f"{name}: a stencil of {width} cells exact for degree {degree} leaves no freedom to learn; use a "
            f"stencil of at least {degree + 2} cells or a lower degree"
        )
    if not callable(net):
        raise TypeError(f"{name}: net must be a callable module, got {type(net).__name__}")
    seen = channels * (inputs[1] - inputs[0] + 1)
    try:
        out = eqx.filter_eval_shape(net, jax.ShapeDtypeStruct((seen,), jnp.result_type(float)))
    except Exception as error:
        raise ValueError(
            f"{name}: net must map an input window of shape ({seen},) to ({values * free},); calling it on "
            f"shape ({seen},) failed: {error}"
        ) from error
    if getattr(out, "shape", None) != (values * free,):
        sets = f"{values} x a" if values > 1 else "a"
        raise ValueError(
            f"{name}: net must output shape ({values * free},) ({sets} stencil of {width} cells minus "
            f"degree + 1 = {degree + 1} constraints), got {getattr(out, 'shape', type(out).__name__)}"
        )
    return base, null


class LearnedReconstruction(AbstractReconstruction):
    """Face values `sum_k c_k(window) ubar_{i+k}` with weights from a network, exact for
    polynomials of degree `<= degree` whatever the network says: `c = base + null @ net(window)`
    (see `face_coefficients`). Conservative by construction (the models difference one flux per
    face). The left face of a cell uses the mirrored window with the same map, so the scheme is
    reflection-symmetric.

    **Fields:** `net`: an equinox module (or any callable pytree) mapping the cell averages
    `ubar_{i+a} .. ubar_{i+b}` of its input window `inputs = (a, b)` (default: the stencil;
    state units) to `width - degree - 1` numbers, `width = hi - lo + 1`; `stencil = (lo, hi)`
    and `degree` (static); `base`, `null` (the constraint space of `face_coefficients`, static).

    A network whose last layer is zero gives the standard linear scheme on the stencil, e.g. the
    fifth-order upwind-biased `(2, -13, 47, 27, -3) / 60` on `(-2, 2)` (Jiang & Shu 1996) or the
    sixth-order centred `(1, -8, 37, 37, -8, 1) / 60` on `(-2, 3)`. Differentiable in the network's
    weights and in the state. `TypeError`/`ValueError` at construction for a stencil narrower
    than `degree + 1` cells or a network whose output is not `(width - degree - 1,)`.
    """

    net: eqx.Module
    inputs: tuple[int, int] = eqx.field(static=True)
    # The constraint space as nested tuples (static, hashable: never trained, never traced).
    base: tuple[float, ...] = eqx.field(static=True)
    null: tuple[tuple[float, ...], ...] = eqx.field(static=True)
    stencil: tuple[int, int] = eqx.field(static=True)
    degree: int = eqx.field(static=True)

    def __init__(
        self,
        net,
        stencil: tuple[int, int] = (-2, 2),
        degree: int = 1,
        *,
        inputs: tuple[int, int] | None = None,
    ):
        lo, hi = _check_stencil("LearnedReconstruction", stencil)
        inputs = (lo, hi) if inputs is None else _check_stencil("LearnedReconstruction: inputs", inputs)
        base, null = constrained_net("LearnedReconstruction", net, (lo, hi), degree, inputs)
        self.net, self.stencil, self.degree, self.inputs = net, (lo, hi), int(degree), inputs
        self.base, self.null = tuple(map(float, base)), tuple(tuple(map(float, row)) for row in null)

    @property
    def radius(self) -> int:
        return max(-self.stencil[0], self.stencil[1], -self.inputs[0], self.inputs[1])

    def coefficients(self, seen: Float[Array, "... k"]) -> Float[Array, "... width"]:
        """The weights from each input window along the last axis (`base + null @ net(seen)`)."""
        free = jax.vmap(self.net)(seen.reshape(-1, seen.shape[-1]))
        base, null = jnp.asarray(self.base, seen.dtype), jnp.asarray(self.null, seen.dtype)
        return (base + free @ null.T).reshape(*seen.shape[:-1], len(self.base))

    def _window(self, v, sign: int, offsets: tuple[int, int]):
        m, r = v.shape[-1], self.radius
        return jnp.stack([v[..., r + sign * k : m - r + sign * k] for k in range(offsets[0], offsets[1] + 1)], -1)

    def edges(self, v, axis=-1):
        v = jnp.moveaxis(v, axis, -1)
        # The left face is the right face of the mirrored data (sign -1): reflection symmetry.
        # Both sides go through the network in one batch.
        window = jnp.stack([self._window(v, sign, self.stencil) for sign in (1, -1)])
        weights = self.coefficients(jnp.stack([self._window(v, sign, self.inputs) for sign in (1, -1)]))
        faces = jnp.moveaxis(jnp.sum(weights * window, axis=-1), -1, axis % v.ndim + 1)
        return faces[0], faces[1]


def stencil_net(
    stencil: tuple[int, int] = (-2, 2),
    degree: int = 1,
    *,
    inputs: tuple[int, int] | None = None,
    width_size: int = 32,
    depth: int = 2,
    key: PRNGKeyArray,
) -> LearnedReconstruction:
    """A `LearnedReconstruction` with an `equinox.nn.MLP` (tanh, `depth` hidden layers of
    `width_size`) whose last layer starts at zero, so that the untrained scheme is the standard
    linear one on `stencil` (the default `(-2, 2)`: fifth-order upwind-biased)."""
    lo, hi = _check_stencil("stencil_net", stencil)
    a, b = (lo, hi) if inputs is None else _check_stencil("stencil_net: inputs", inputs)
    free = max(hi - lo - degree, 1)
    net = zero_output_mlp(b - a + 1, free, width_size, depth, key)
    return LearnedReconstruction(net, (lo, hi), degree, inputs=inputs)


def zero_output_mlp(n_in: int, n_out: int, width_size: int, depth: int, key: PRNGKeyArray) -> eqx.nn.MLP:
    """An `equinox.nn.MLP` (tanh) whose last layer is zero: its output is zero until trained, so a
    learned scheme built on it starts as the standard linear one."""
    net = eqx.nn.MLP(n_in, n_out, width_size, depth, activation=jnp.tanh, key=key)
    return eqx.tree_at(lambda m: (m.layers[-1].weight, m.layers[-1].bias), net, replace_fn=jnp.zeros_like)


def trainable(model) -> object:
    """The `equinox.partition` filter of `model`'s trainable leaves: the inexact arrays of the
    `net` of every `LearnedReconstruction` and `LearnedFaceValues` inside it, and nothing else."""
    from ._face import LearnedFaceValues  # imports this module

    learned = (LearnedReconstruction, LearnedFaceValues)

    def spec(x):
        if isinstance(x, learned):
            frozen = jax.tree_util.tree_map(lambda _: False, x)
            return eqx.tree_at(lambda r: r.net, frozen, jax.tree_util.tree_map(eqx.is_inexact_array, x.net))
        return False

    return jax.tree_util.tree_map(spec, model, is_leaf=lambda x: isinstance(x, learned))
