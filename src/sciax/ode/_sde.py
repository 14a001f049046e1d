"""`SDE`: a stochastic differential equation `dy = drift dt + diffusion dW`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree, Real

from .._labels import Labels
from .._method import AbstractMethod
from .._model import AbstractModel

NOISE_TYPES = ("diagonal", "scalar", "general")
CALCULI = ("ito", "stratonovich")


class SDE(AbstractModel):
    """A stochastic differential equation `dy = drift(t, y, p) dt + diffusion(t, y, p) ∘ dW`.

    The state `y` is one floating-point array of shape `S`; `W` is a Brownian motion
    drawn from the `key=` passed to `sciax.simulate` (the same key gives the same path).

    **Arguments:**

    - `drift`: `f(t, y, params) -> dy/dt`, shape `S`.
    - `diffusion`: `g(t, y, params)`; its shape depends on `noise`:
        - `"diagonal"` (default): shape `S`, one independent Brownian motion per
          state entry, `dy_i = ... + g_i dW_i`;
        - `"scalar"`: shape `S`, a single Brownian motion shared by every entry,
          `dy = ... + g dW` with scalar `W`;
        - `"general"`: shape `S + noise_shape`, `dy_i = ... + Σ_j g_ij dW_j` with
          `W` of shape `noise_shape`.
    - `noise_shape`: shape of `W` for `noise="general"` (e.g. `(m,)`).
    - `calculus`: `"ito"` (default) or `"stratonovich"`; methods check it matches.
    - `additive`: declare that `diffusion` does not depend on `y` (additive noise),
      which `SRA1` and `ShARK` require; not checked numerically.
    - `names`, `units`, `long_names`, `time_units`: labels, as for `sciax.ode.ODE`.

    Functions are static; everything to differentiate or batch over goes in `params`.
    The default method is `EulerMaruyama()` (Itô) or `Heun()`-type
    `StratonovichHeun()` (Stratonovich); both take fixed steps (`dt0=`).
    """

    drift: Callable = eqx.field(static=True)
    diffusion: Callable = eqx.field(static=True)
    noise: str = eqx.field(static=True)
    noise_shape: tuple[int, ...] | None = eqx.field(static=True)
    calculus: str = eqx.field(static=True)
    additive: bool = eqx.field(static=True)
    _labels: Labels = eqx.field(static=True)

    def __init__(
        self,
        drift: Callable,
        diffusion: Callable,
        *,
        noise: str = "diagonal",
        noise_shape: Sequence[int] | None = None,
        calculus: str = "ito",
        additive: bool = False,
        names: Sequence[str] | None = None,
        units: Mapping[str, str] | None = None,
        long_names: Mapping[str, str] | None = None,
        time_units: str | None = None,
    ):
        for name, fn in (("drift", drift), ("diffusion", diffusion)):
            if not callable(fn):
                raise TypeError(f"SDE: {name} must be callable {name}(t, y, params), got {type(fn).__name__}")
        if noise not in NOISE_TYPES:
            raise ValueError(f"SDE: noise must be one of {NOISE_TYPES}, got {noise!r}")
        if calculus not in CALCULI:
            raise ValueError(f"SDE: calculus must be 'ito' or 'stratonovich', got {calculus!r}")
        if noise == "general":
            if noise_shape is None:
                raise ValueError("SDE: noise='general' needs noise_shape=, the shape of the Brownian motion, e.g. (m,)")
            noise_shape = tuple(int(n) for n in noise_shape)
        elif noise_shape is not None:
            raise ValueError(f"SDE: noise_shape is only for noise='general', got noise={noise!r}")
        self.drift = drift
        self.diffusion = diffusion
        self.noise = noise
        self.noise_shape = noise_shape
        self.calculus = calculus
        self.additive = bool(additive)
        self._labels = Labels.build(names=names, units=units, long_names=long_names, time_units=time_units)

    def rhs(self, t: Real[Array, ""], y: Array, params: PyTree) -> Array:
        """The drift (the deterministic part)."""
        return self.drift(t, y, params)

    def default_method(self) -> AbstractMethod:
        from ._sde_methods import EulerMaruyama, StratonovichHeun

        return EulerMaruyama() if self.calculus == "ito" else StratonovichHeun()

    def labels(self) -> Labels:
        return self._labels

    def brownian_shape(self, y0: Array) -> tuple[int, ...]:
        """Shape of the Brownian motion `W` for a state shaped like `y0`."""
        if self.noise == "diagonal":
            return tuple(jnp.shape(y0))
        if self.noise == "scalar":
            return ()
        return self.noise_shape

    def check(self, t0, y0, params) -> None:
        """Trace-time checks: `y0` is one array and `diffusion` returns the expected shape."""
        if not isinstance(y0, jax.Array):
            raise TypeError(
                f"simulate: an SDE's y0 must be a single array, got a {type(y0).__name__}; "
                "stack the components into one array"
            )
        out = jax.eval_shape(self.diffusion, t0, y0, params)
        if not isinstance(out, jax.ShapeDtypeStruct):
            raise TypeError(f"simulate: SDE diffusion must return one array, got {type(out).__name__}")
        expected = tuple(y0.shape) + (self.noise_shape if self.noise == "general" else ())
        if tuple(out.shape) != expected:
            what = {
                "diagonal": "y0's shape (diagonal noise: one Brownian motion per entry)",
                "scalar": "y0's shape (scalar noise: one shared Brownian motion)",
                "general": f"y0.shape + noise_shape = {y0.shape} + {self.noise_shape}",
            }[self.noise]
            raise ValueError(
                f"simulate: SDE diffusion returned shape {tuple(out.shape)} for y0 of shape {tuple(y0.shape)}; "
                f"expected {expected}, i.e. {what}"
            )


__all__ = ["SDE"]
