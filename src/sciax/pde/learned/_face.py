"""`LearnedFaceValues`: one value per face of a finite-volume grid, from stencil weights a
network chooses face by face on a window around the face, exact for polynomials up to a chosen
degree.

Reference: Y. Bar-Sinai, S. Hoyer, J. Hickey and M. P. Brenner, "Learning data-driven
discretizations for partial differential equations", PNAS 116 (2019) 15344-15349: their
conservative Burgers scheme evaluates the flux `u^2 / 2 - eta u_x` at each face from a single
learned face value on a six-cell stencil centred on the face (a staggered grid), accuracy
order 1, so that upwinding is learned rather than built in.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray

from ..fv import AbstractReconstruction
from ._stencil import _check_stencil, constrained_net, zero_output_mlp


def _check_face_window(name: str, window) -> tuple[int, int]:
    """A window of cells `(lo, hi)` relative to the cell left of a face: it must hold cells on both sides."""
    ok = isinstance(window, tuple) and len(window) == 2 and all(isinstance(s, int) for s in window)
    if not ok or not window[0] <= 0 < window[1]:
        raise ValueError(
            f"{name} must be a pair of integer cell offsets (lo, hi) from the cell left of a face with "
            f"lo <= 0 < hi (cells on both sides of the face), e.g. (-2, 3), got {window!r}"
        )
    return window


class LearnedFaceValues(AbstractReconstruction):
    """The state at each face `i + 1/2`, `sum_k c_k(window) ubar_{i+k}`, `k` from `lo` to `hi`
    of `stencil`, with weights `c = base + null @ net(window)` exact for polynomials of degree
    `<= degree` whatever the network says (see `face_coefficients`), the window centred on the
    face rather than mirrored per cell, so that upwinding is learned from the data.

    With `values=1` both states of a face are one value, so a numerical flux adds no
    dissipation of its own (`Rusanov()` gives the physical flux `f(u_{i+1/2})`): whatever
    damping the scheme needs, the network learns. With `values=2` the network gives both
    states (two sets of weights from one window) and the numerical flux adds its dissipation
    in proportion to their jump, which the network controls. Conservative by construction
    (one flux per face).

    With `derivative=1` (and `values=1`) the weights give the first derivative at each face
    times the cell width, exact for polynomials of degree `<= degree`: a learned viscous flux
    `-eta u_x` for `ForcedBurgers(viscous=...)` (the zero network gives the standard face
    derivative on the stencil, e.g. `(-2, 25, -245, 245, -25, 2) / 180` on `(-2, 3)`).

    With `features = k > 0` the network also reads `k` extra per-cell fields on the same window
    (e.g. `ForcedBurgers(memory=...)`'s lagged fields `u - lag`, which tell it how the state has
    been moving): `faces(v, extra)` takes them, and `edges` (the finite-volume models' route,
    which has no extra fields) raises.

    **Fields:** `net`: an equinox module (or callable pytree) mapping the cell averages
    `ubar_{i+a} .. ubar_{i+b}` of its window `inputs = (a, b)` (default: the stencil; state
    units), followed by each extra field on the same window, to `values * (width - degree - 1)`
    numbers (the left state's first), `width = hi - lo + 1`; `stencil = (lo, hi)` and `inputs`,
    offsets from the cell left of the face with `lo <= 0 < hi`, `degree`, `values`, `derivative`
    and `features` (static); `base`, `null` (the constraint space, static).

    A network whose output is zero gives the standard linear face value on the stencil, e.g. the
    sixth-order centred `(1, -8, 37, 37, -8, 1) / 60` on `(-2, 3)` (then `edges` equals
    `LinearReconstruction((-2, 3))`). Differentiable in the network's weights and the state.
    `TypeError`/`ValueError` at construction for a bad stencil, a stencil narrower than
    `degree + 2` cells, `values` not 1 or 2, `derivative` not 0 or 1 (or 1 with `values=2`),
    `features` not an integer >= 0, or a network that does not map `((1 + features) * (b - a + 1),)`
    inputs to `(values * (width - degree - 1),)`.
    """

    net: eqx.Module
    inputs: tuple[int, int] = eqx.field(static=True)
    base: tuple[float, ...] = eqx.field(static=True)
    null: tuple[tuple[float, ...], ...] = eqx.field(static=True)
    stencil: tuple[int, int] = eqx.field(static=True)
    degree: int = eqx.field(static=True)
    values: int = eqx.field(static=True)
    derivative: int = eqx.field(static=True)
    features: int = eqx.field(static=True)

    def __init__(
        self,
        net,
        stencil: tuple[int, int] = (-2, 3),
        degree: int = 1,
        *,
        inputs=None,
        values: int = 1,
        derivative: int = 0,
        features: int = 0,
    ):
        name = "LearnedFaceValues"
        stencil = _check_face_window(f"{name}: stencil", _check_stencil(name, stencil))
        inputs = stencil if inputs is None else _check_face_window(f"{name}: inputs", _check_stencil(name, inputs))
        if values not in (1, 2):
            raise ValueError(f"{name}: values must be 1 (one value per face) or 2 (both states), got {values!r}")
        if derivative not in (0, 1) or isinstance(derivative, bool) or derivative * values == 2:
            raise ValueError(
                f"{name}: derivative must be 0 (face values) or 1 (a face derivative, with values=1), got "
                f"derivative={derivative!r}, values={values!r}"
            )
        features = _check_features(name, features)
        base, null = constrained_net(name, net, stencil, degree, inputs, values, derivative, 1 + features)
        self.net, self.stencil, self.degree, self.inputs, self.values = net, stencil, int(degree), inputs, values
        self.derivative, self.features = int(derivative), features
        self.base, self.null = tuple(map(float, base)), tuple(tuple(map(float, row)) for row in null)

    @property
    def radius(self) -> int:
        # The faces needed are the right faces of cells radius - 1 .. m - radius - 1.
        lo, hi = min(self.stencil[0], self.inputs[0]), max(self.stencil[1], self.inputs[1])
        return max(1 - lo, hi)

    def coefficients(self, seen: Float[Array, "... k"]) -> Float[Array, "... values width"]:
        """The weights of each value from each input window along the last axis (`base + null @ net(seen)`)."""
        free = jax.vmap(self.net)(seen.reshape(-1, seen.shape[-1])).reshape(-1, self.values, len(self.null[0]))
        base, null = jnp.asarray(self.base, seen.dtype), jnp.asarray(self.null, seen.dtype)
        return (base + free @ null.T).reshape(*seen.shape[:-1], self.values, len(self.base))

    def faces(
        self, v: Float[Array, "... m"], extra: Float[Array, "... features m"] | None = None
    ) -> Float[Array, "... m-2r+1 values"]:
        """The values at the right face of each cell `radius - 1 .. m - radius - 1` (last axis
        of `v`; the left state first with `values=2`); `extra`: the `features` extra fields on
        the same cells (`None` without features)."""
        m, r = v.shape[-1], self.radius
        want = None if not self.features else (*v.shape[:-1], self.features, m)
        if (extra is None) != (want is None) or (want is not None and jnp.shape(extra) != want):
            got = None if extra is None else jnp.shape(extra)
            raise ValueError(f"LearnedFaceValues.faces: extra must be {'None' if want is None else want}, got {got}")

        def window(field, offsets):
            lo, hi = offsets
            return jnp.stack([field[..., r - 1 + k : m - r + k] for k in range(lo, hi + 1)], -1)

        fields = [v] + [extra[..., j, :] for j in range(self.features)]
        seen = jnp.concatenate([window(f, self.inputs) for f in fields], -1)
        return jnp.sum(self.coefficients(seen) * window(v, self.stencil)[..., None, :], axis=-1)

    def edges(self, v, axis=-1):
        if self.features:
            raise ValueError(
                f"LearnedFaceValues with features={self.features} reads extra fields that a finite-volume model "
                "does not give; use it in ForcedBurgers(memory=...) or call faces(v, extra)"
            )
        faces = self.faces(jnp.moveaxis(v, axis, -1))
        # A cell's right edge is the left state of the face after it, its left edge the right state of the one before.
        return jnp.moveaxis(faces[..., 1:, 0], -1, axis), jnp.moveaxis(faces[..., :-1, -1], -1, axis)


def _check_features(name: str, features) -> int:
    if isinstance(features, bool) or not isinstance(features, (int, np.integer)) or features < 0:
        raise ValueError(f"{name}: features must be an integer >= 0 (extra fields per cell), got {features!r}")
    return int(features)


def face_net(
    stencil: tuple[int, int] = (-2, 3),
    degree: int = 1,
    *,
    inputs: tuple[int, int] | None = None,
    values: int = 1,
    derivative: int = 0,
    features: int = 0,
    width_size: int = 32,
    depth: int = 2,
    key: PRNGKeyArray,
) -> LearnedFaceValues:
    """A `LearnedFaceValues` with an `equinox.nn.MLP` (tanh, `depth` hidden layers of
    `width_size`) whose last layer starts at zero: the untrained scheme is the standard linear
    face value on `stencil` (the default `(-2, 3)`: sixth-order centred, the paper's stencil),
    both states equal also with `values=2` (`derivative=1`: the standard face derivative); with
    `features` the MLP also reads that many extra fields on its window."""
    lo, hi = _check_face_window("face_net: stencil", _check_stencil("face_net", stencil))
    a, b = (lo, hi) if inputs is None else _check_face_window("face_net: inputs", _check_stencil("face_net", inputs))
    free = max(hi - lo - degree, 1)
    channels = 1 + _check_features("face_net", features)
    net = zero_output_mlp(channels * (b - a + 1), values * free, width_size, depth, key)
    return LearnedFaceValues(
        net, (lo, hi), degree, inputs=inputs, values=values, derivative=derivative, features=features
    )
