"""`AbstractSpectralStepper`: fixed-step time stepping of a `SemilinearPDE` in Fourier space.

The base of ETDRK1/2/4, IFRK4 and CNAB2, run by the fixed-step driver
(`AbstractFixedStepMethod`): the state stays in Fourier space for a whole output
interval (one inverse FFT per output time), and the stable step is where `exp(dt L)`
would overflow.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PyTree, Real

from ..._solution import Solution
from ...grid import fourier
from .._fixed_step import AbstractFixedStepMethod
from ._abstract_semilinear import AbstractSemilinearPDE

_NONFINITE = (
    "sciax.simulate: the PDE state became NaN or inf during spectral time stepping. "
    "The solution blew up: reduce dt, check the model and params (a linear symbol with a large "
    "positive real part overflows exp(dt * L)), or set dealias=True for an under-resolved "
    "quadratic nonlinearity."
)
_OVERFLOW = (
    "sciax.simulate: dt * max Re(L) exceeds log(largest float) - 1, so exp(dt * L) overflows: the "
    "linear symbol grows too fast for this step. The largest safe dt is (log(finfo.max) - 1) / max Re(L); "
    "use model.max_growth_rate(params) to compute it, and reduce dt."
)


def overflow_limit(dtype) -> float:
    """`log(finfo(dtype).max) - 1`: the largest `dt * Re(L)` whose exponential (also on a
    contour of radius 1 around it, as ETDRK evaluates it) stays finite."""
    return float(np.log(np.finfo(dtype).max)) - 1.0


class _Prepared(eqx.Module):
    """What the steps of one solve share: the scheme's coefficients, the params, the state dtype."""

    coeffs: tuple
    params: PyTree
    dtype: Any = eqx.field(static=True)


class AbstractSpectralStepper(AbstractFixedStepMethod):
    """A fixed-step method advancing the Fourier coefficients `v = rfft(u)` of a `SemilinearPDE`.

    **Fields:**

    - `dt`: the fixed step (time units), a Python number > 0 (static). Every
      interval of the output times `ts` must be a whole number of steps.

    Subclasses give `coefficients(symbol)` (arrays precomputed once per solve from
    the linear symbol), `step` and, for multistep methods, `init`/`state`.
    """

    dt: eqx.AbstractVar[float]
    stages: ClassVar[int]  # nonlinear evaluations per step
    startup_evals: ClassVar[int] = 0  # extra nonlinear evaluations in `init`
    exponential: ClassVar[bool] = True  # evaluates exp(dt L): refuse overflowing steps
    options: ClassVar[tuple[str, ...]] = ("throw",)
    checkpoint: ClassVar[None] = None  # a step's memory is a few spectra: reverse mode stores every step

    @property
    def rhs_evals_per_step(self) -> int:
        return self.stages

    @abc.abstractmethod
    def coefficients(self, symbol: Array) -> tuple[Array, ...]:
        """Arrays the step needs, from the linear symbol `L` in rfft layout."""

    def init(self, coeffs: tuple, nonlinear: Callable, v: Array, t: Array) -> Any:
        """The carry of the step loop at the start (one-step methods: `v` itself)."""
        return v

    @abc.abstractmethod
    def step(self, coeffs: tuple, nonlinear: Callable, carry: Any, t: Array) -> Any:
        """One step of size `dt` from time `t`; `nonlinear(t, v)` is `rfft(N)`."""

    def state(self, carry: Any) -> Array:
        """The Fourier coefficients held in a carry."""
        return carry

    def solve(
        self,
        model: AbstractSemilinearPDE,
        y0: Float[Array, "..."],
        ts: Real[Array, " T"],
        params: PyTree,
        *,
        throw: bool = True,
    ) -> Solution:
        """Integrate `model` with fixed steps `dt` and return the state at every time in `ts`.

        `y0` is real of shape `model.state_shape`; `ts` must be concrete (not traced)
        with every interval a whole multiple of `dt`. Returns a `Solution` with
        `ys` of shape `(len(ts), *state_shape)`, `stats` (`num_steps`,
        `num_accepted_steps`, `num_rejected_steps` = 0, `num_rhs_evals` = nonlinear
        evaluations) and `success` (state finite). With `throw=True` (default) a
        non-finite state raises at run time (`equinox.error_if`).

        Raises `ValueError` when `dt * max Re(L)` would overflow the exponential,
        naming the largest safe `dt` (at run time, under `jax.jit` with traced params).

        Differentiable (reverse and forward mode) with respect to `y0` and `params`,
        which may enter both the linear symbol and the nonlinear term.
        """
        return super().solve(model, jnp.asarray(y0), ts, params, throw=throw)

    # ---- the driver's hooks ------------------------------------------------------------------
    def check_model(self, model) -> None:
        if isinstance(model, AbstractSemilinearPDE):
            return
        hint = "use a sciax.ode method such as sciax.ode.Tsit5() for other models"
        if hasattr(model, "net") and isinstance(getattr(model, "model", None), AbstractSemilinearPDE):
            # `learned.Corrected` adds its network to `rhs`, which a spectral stepper never calls
            hint = (
                f"{type(model).__name__} wraps a spectral model: for a learned correction stepped in Fourier space "
                "use sciax.pde.learned.SpectralCorrected(model, net), or a sciax.ode method"
            )
        raise TypeError(
            f"simulate: {type(self).__name__} integrates a sciax.pde.SemilinearPDE (u_t = L u + N(u), any "
            f"sciax.pde.AbstractSemilinearPDE), got {type(model).__name__}; {hint}"
        )

    def stable_dt(self, model: AbstractSemilinearPDE, params) -> Array | None:
        """`(log(finfo.max) - 1) / max Re(L)`, beyond which `exp(dt L)` overflows (`None` for methods
        that never evaluate it); computed at trace time whenever `params` are concrete."""
        if not self.exponential:
            return None
        if not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(params)):
            with jax.ensure_compile_time_eval():  # concrete even inside an outer jax.jit
                rate = model.max_growth_rate(params)
            if not isinstance(rate, jax.core.Tracer):
                rate = float(rate)
                return np.inf if rate <= 0 else overflow_limit(jnp.result_type(float)) / rate
        rate = model.max_growth_rate(params)  # checked at run time
        return jnp.where(rate > 0, overflow_limit(rate.dtype) / rate, jnp.inf)

    def unstable_message(self, model, limit: float | None) -> str:
        if limit is None:
            return _OVERFLOW
        bound = overflow_limit(jnp.result_type(float))
        rate = bound / limit
        return (
            f"simulate: {type(self).__name__}(dt={self.dt}) overflows exp(dt * L): the linear symbol's largest "
            f"growth rate max Re(L) = {rate:.6g} gives dt * max Re(L) = {self.dt * rate:.6g} > {bound:.6g}. "
            f"The largest safe dt is {limit:.6g}; reduce dt (or check the linear symbol and params)"
        )

    def nonfinite_message(self) -> str:
        return _NONFINITE

    def setup(self, model: AbstractSemilinearPDE, y0, params) -> _Prepared:
        # Coefficients follow the state's precision (a float32 state with float64 params
        # under x64 would otherwise promote the scan carry to complex128).
        coeffs = self.coefficients(model.linear_symbol(params))
        coeffs = jax.tree_util.tree_map(lambda c: _like_state(c, y0.dtype), coeffs)
        return _Prepared(coeffs, params, y0.dtype)

    def start(self, model: AbstractSemilinearPDE, y0, t0, prepared: _Prepared):
        nonlinear = _nonlinear(model, prepared.params)
        return self.init(prepared.coeffs, nonlinear, fourier.to_spectral(y0, model.grid), t0)

    def advance(self, model: AbstractSemilinearPDE, carry, t, prepared: _Prepared):
        return self.step(prepared.coeffs, _nonlinear(model, prepared.params), carry, t)

    def output(self, model: AbstractSemilinearPDE, carry, prepared: _Prepared, save):
        return fourier.to_physical(self.state(carry), model.grid).astype(prepared.dtype)

    def initial_output(self, model, y0, carry, prepared, save):
        return y0  # exactly the state given, not its round trip through the FFT


def _nonlinear(model: AbstractSemilinearPDE, params) -> Callable:
    return lambda t, v: model.nonlinear_hat(t, v, params)


def _like_state(array, real_dtype):
    dtype = jnp.result_type(real_dtype, jnp.complex64) if jnp.iscomplexobj(array) else real_dtype
    return jnp.asarray(array).astype(dtype)
