"""SDE methods over diffrax: Euler–Maruyama, Heun, Milstein, SRA1 and ShARK.

Each builds `MultiTerm(ODETerm(drift), ControlTerm(diffusion, VirtualBrownianTree))`
with the Brownian motion drawn from the `key=` option. A virtual Brownian tree
gives the same path whatever the steps, so adaptive steps, output times and
adjoints (which re-query the path) all see one consistent Brownian motion.
"""

from __future__ import annotations

from typing import Any, ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, PyTree, Real

from .._method import AbstractMethod
from .._model import AbstractModel
from .._solution import Solution
from ._diffrax_method import AbstractDiffraxMethod
from ._sde import SDE

# The Brownian tree resolves the path to (t1 - t0) * 2**-_TREE_DEPTH unless dt0
# asks for finer: far below any sensible step, and the cost is logarithmic.
_TREE_DEPTH = 20


class _DiagonalControlTerm(diffrax.ControlTerm):
    """Diagonal noise: `g ⊙ dW`, elementwise, for a state of any shape."""

    def prod(self, vf, control):
        return vf * control


class _SDEWithPath(AbstractModel):
    """An `SDE` together with its Brownian motion: the key and the time span.

    Internal: what `AbstractSDEMethod.solve` hands to the shared diffrax driver, so
    the key travels as an array (new keys and `jax.vmap` over keys need no recompile).
    """

    sde: SDE
    key: Array
    t0: Array
    t1: Array
    tol: Array
    brownian_shape: tuple[int, ...] = eqx.field(static=True)

    def rhs(self, t, y, params):
        return self.sde.rhs(t, y, params)

    def default_method(self) -> AbstractMethod:
        return self.sde.default_method()

    def labels(self):
        return self.sde.labels()


class AbstractSDEMethod(AbstractDiffraxMethod):
    """An SDE method: needs `sciax.ode.SDE` and a `key=` option.

    Subclasses set `calculi` (which calculus they converge to), and optionally
    `additive_only` / `commutative_only` (noise structure they assume) and
    `levy_area` (what the Brownian tree must provide).
    """

    adaptive_capable: ClassVar[bool] = False
    adaptive_by_default: ClassVar[bool] = False
    calculi: ClassVar[tuple[str, ...]]
    additive_only: ClassVar[bool] = False
    commutative_only: ClassVar[bool] = False
    levy_area: ClassVar[type] = diffrax.BrownianIncrement
    options: ClassVar[tuple[str, ...]] = ("key", *AbstractDiffraxMethod.options)

    def terms(self, model: AbstractModel) -> diffrax.AbstractTerm:
        sde = model.sde
        shape = jax.ShapeDtypeStruct(model.brownian_shape, model.t0.dtype)
        path = diffrax.VirtualBrownianTree(
            model.t0, model.t1, tol=model.tol, shape=shape, key=model.key, levy_area=self.levy_area
        )
        term = _DiagonalControlTerm if sde.noise == "diagonal" else diffrax.ControlTerm
        return diffrax.MultiTerm(diffrax.ODETerm(sde.drift), term(sde.diffusion, path))

    def solve(
        self,
        model: AbstractModel,
        y0: PyTree[Array],
        ts: Real[Array, " T"],
        params: PyTree,
        *,
        key: Array | None = None,
        rtol: float = 1e-3,
        atol: float = 1e-3,
        **options: Any,
    ) -> Solution:
        """Integrate the SDE on the Brownian path drawn from `key`.

        **Options:**

        - `key`: a `jax.random` key (required); the same key gives the same path.
          Batch over keys with `jax.vmap` for Monte Carlo ensembles.
        - `dt0`: the step (fixed-step methods, required) or the initial step.
        - `rtol`, `atol`, `adaptive`: adaptive steps for methods with an error
          estimate (`StratonovichHeun`, `SRA1`, `ShARK`), with `adaptive=True`.
        - `max_steps`, `adjoint`, `event`, `dense`, `progress`, `throw`: as for ODE methods
          (`AbstractDiffraxMethod.solve`, which receives them unchanged).
        """
        if not isinstance(model, SDE):
            raise TypeError(
                f"simulate: {type(self).__name__} is an SDE method and needs a sciax.ode.SDE model, "
                f"got {type(model).__name__}"
            )
        if key is None:
            raise ValueError(
                "simulate: an SDE needs a random key for its Brownian motion: pass key=jax.random.key(0) "
                "(and jax.vmap over jax.random.split(key, n) for an ensemble)"
            )
        key = _check_key(key)
        self._check_model(model)
        model.check(ts[0], y0, params)
        span = ts[-1] - ts[0]
        tol = span * 2.0**-_TREE_DEPTH
        dt0 = options.get("dt0")
        if dt0 is not None:
            tol = jnp.minimum(tol, jnp.asarray(dt0, ts.dtype) / 8)
        bound = _SDEWithPath(model, key, ts[0], ts[-1], tol, model.brownian_shape(y0))
        return AbstractDiffraxMethod.solve(
            self.specialise(model), bound, y0, ts, params, rtol=rtol, atol=atol, **options
        )

    def specialise(self, sde: SDE) -> AbstractSDEMethod:
        """The method that runs for this SDE (itself, except for calculus-dispatching ones)."""
        return self

    def _check_model(self, model: SDE) -> None:
        name = type(self).__name__
        if not model.additive and model.calculus not in self.calculi:
            raise ValueError(
                f"simulate: {name} converges to the {' / '.join(self.calculi)} solution, but the SDE "
                f"has calculus={model.calculus!r}; use "
                + ("EulerMaruyama() or Milstein()" if model.calculus == "ito" else "StratonovichHeun() or Milstein()")
            )
        if self.additive_only and not model.additive:
            raise ValueError(
                f"simulate: {name} is for additive noise (diffusion independent of y); build the model "
                "with SDE(..., additive=True) if that holds, or use EulerMaruyama()/Milstein()"
            )
        if self.commutative_only and model.noise == "general":
            raise ValueError(
                f"simulate: {name} needs commutative noise; noise='general' is not assumed commutative. "
                "Use noise='diagonal' or 'scalar', or EulerMaruyama()/StratonovichHeun()"
            )


def _check_key(key) -> Array:
    if not isinstance(key, jax.Array):
        raise TypeError(f"simulate: key must be a jax.random key (jax.random.key(seed)), got {type(key).__name__}")
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        if key.shape != ():
            raise ValueError(f"simulate: key must be a single key, got shape {key.shape}; vmap over a batch of keys")
        return key
    if key.shape != (2,) or key.dtype != jnp.uint32:
        raise ValueError(
            f"simulate: key must be jax.random.key(seed) or jax.random.PRNGKey(seed), got dtype {key.dtype} "
            f"and shape {key.shape}"
        )
    return key


class EulerMaruyama(AbstractSDEMethod):
    """Euler–Maruyama: strong order 0.5 (1.0 for additive noise), Itô. Fixed step (`dt0=`)."""

    calculi: ClassVar[tuple[str, ...]] = ("ito",)

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Euler()


class StratonovichHeun(AbstractSDEMethod):
    """Heun's method: strong order 0.5 (1.0 for additive or commutative noise),
    Stratonovich. Fixed step by default; `adaptive=True` uses its embedded estimate."""

    calculi: ClassVar[tuple[str, ...]] = ("stratonovich",)
    adaptive_capable: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Heun()


class ItoMilstein(AbstractSDEMethod):
    """Milstein's method, Itô: strong order 1.0 for commutative noise (diagonal or
    scalar). Fixed step (`dt0=`)."""

    calculi: ClassVar[tuple[str, ...]] = ("ito",)
    commutative_only: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.ItoMilstein()


class StratonovichMilstein(AbstractSDEMethod):
    """Milstein's method, Stratonovich: strong order 1.0 for commutative noise
    (diagonal or scalar). Fixed step (`dt0=`)."""

    calculi: ClassVar[tuple[str, ...]] = ("stratonovich",)
    commutative_only: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.StratonovichMilstein()


class Milstein(AbstractSDEMethod):
    """Milstein's method in the model's calculus: `ItoMilstein` or `StratonovichMilstein`."""

    calculi: ClassVar[tuple[str, ...]] = ("ito", "stratonovich")
    commutative_only: ClassVar[bool] = True

    def specialise(self, sde: SDE) -> AbstractSDEMethod:
        return ItoMilstein() if sde.calculus == "ito" else StratonovichMilstein()

    def diffrax_solver(self, rtol, atol, adaptive):
        raise NotImplementedError("Milstein runs as ItoMilstein or StratonovichMilstein (see specialise)")


class SRA1(AbstractSDEMethod):
    """SRA1 (Rößler 2010): strong order 1.5 for additive noise (`SDE(..., additive=True)`),
    with an embedded error estimate (`adaptive=True` for adaptive steps)."""

    calculi: ClassVar[tuple[str, ...]] = ("ito", "stratonovich")
    additive_only: ClassVar[bool] = True
    adaptive_capable: ClassVar[bool] = True
    levy_area: ClassVar[type] = diffrax.SpaceTimeLevyArea

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.SRA1()


class ShARK(AbstractSDEMethod):
    """ShARK (Foster, dos Reis & Strange 2023): strong order 1.5 for additive noise
    (`SDE(..., additive=True)`), cheaper than SRA1; embedded error estimate."""

    calculi: ClassVar[tuple[str, ...]] = ("ito", "stratonovich")
    additive_only: ClassVar[bool] = True
    adaptive_capable: ClassVar[bool] = True
    levy_area: ClassVar[type] = diffrax.SpaceTimeLevyArea

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.ShARK()


__all__ = [
    "AbstractSDEMethod",
    "EulerMaruyama",
    "StratonovichHeun",
    "ItoMilstein",
    "StratonovichMilstein",
    "Milstein",
    "SRA1",
    "ShARK",
]
