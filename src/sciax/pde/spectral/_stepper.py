"""`AbstractSpectralStepper`: fixed-step time stepping of a `SemilinearPDE` in Fourier space.

The shared driver of ETDRK1/2/4, IFRK4 and CNAB2: the state stays in Fourier
space for a whole output interval (one inverse FFT per output time), the steps
run in `lax.scan`, and a concrete or run-time check refuses a step that would
overflow the exponential of the linear part.
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

from ..._method import AbstractMethod
from ..._solution import Solution
from ..._step_counts import step_counts
from ...grid import fourier
from ._semilinear import SemilinearPDE

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


class AbstractSpectralStepper(AbstractMethod):
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
        model: SemilinearPDE,
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
        name = type(self).__name__
        if not isinstance(model, SemilinearPDE):
            raise TypeError(
                f"simulate: {name} integrates a sciax.pde.SemilinearPDE (u_t = L u + N(u)), got "
                f"{type(model).__name__}; use a sciax.ode method such as sciax.ode.Tsit5() for other models"
            )
        y0 = jnp.asarray(y0)
        model.check_state(y0, "y0")
        counts = step_counts(ts, self.dt, name)
        if self.exponential:
            _check_growth_concrete(self, model, params, name)
        return _fixed_step_solve(self, model, y0, jnp.asarray(ts), params, counts, bool(throw))


def _check_growth_concrete(method: AbstractSpectralStepper, model: SemilinearPDE, params, name: str) -> None:
    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(params)):
        return  # checked at run time instead
    with jax.ensure_compile_time_eval():  # concrete even inside an outer jax.jit
        rate = model.max_growth_rate(params)
    if isinstance(rate, jax.core.Tracer):
        return
    rate = float(rate)
    limit = overflow_limit(jnp.result_type(float))
    if method.dt * rate > limit:
        raise ValueError(
            f"simulate: {name}(dt={method.dt}) overflows exp(dt * L): the linear symbol's largest growth rate "
            f"max Re(L) = {rate:.6g} gives dt * max Re(L) = {method.dt * rate:.6g} > {limit:.6g}. "
            f"The largest safe dt is {limit / rate:.6g}; reduce dt (or check the linear symbol and params)"
        )


def _like_state(array, real_dtype):
    dtype = jnp.result_type(real_dtype, jnp.complex64) if jnp.iscomplexobj(array) else real_dtype
    return jnp.asarray(array).astype(dtype)


@eqx.filter_jit
def _fixed_step_solve(method, model: SemilinearPDE, y0, ts, params, counts: tuple[int, ...], throw: bool):
    grid, dt = model.grid, method.dt
    symbol = model.linear_symbol(params)
    if method.exponential and throw:
        limit = overflow_limit(jnp.real(symbol).dtype)
        symbol = eqx.error_if(symbol, dt * jnp.max(jnp.real(symbol)) > limit, _OVERFLOW)
    # Coefficients follow the state's precision (a float32 state with float64 params
    # under x64 would otherwise promote the scan carry to complex128).
    coeffs = jax.tree_util.tree_map(lambda c: _like_state(c, y0.dtype), method.coefficients(symbol))

    def nonlinear(t, v):
        return model.nonlinear_hat(t, v, params)

    n_max, uniform = max(counts), len(set(counts)) == 1
    t_dtype = jnp.result_type(ts.dtype, float)

    def interval(carry, inputs):
        t0, n = inputs

        def one_step(carry, j):
            new = method.step(coeffs, nonlinear, carry, t0 + j.astype(t_dtype) * dt)
            if not uniform:  # pad short intervals with no-op steps so one scan serves all
                new = jax.tree_util.tree_map(lambda a, b: jnp.where(j < n, a, b), new, carry)
            return new, None

        carry, _ = jax.lax.scan(one_step, carry, jnp.arange(n_max))
        return carry, fourier.to_physical(method.state(carry), grid).astype(y0.dtype)

    carry0 = method.init(coeffs, nonlinear, fourier.to_spectral(y0, grid), ts[0].astype(t_dtype))
    _, ys = jax.lax.scan(interval, carry0, (ts[:-1].astype(t_dtype), jnp.asarray(counts)))
    ys = jnp.concatenate([y0[None], ys])
    success = jnp.all(jnp.isfinite(ys))
    if throw:
        ys = eqx.error_if(ys, ~success, _NONFINITE)
    num_steps = jnp.asarray(sum(counts))
    stats = {
        "num_steps": num_steps,
        "num_accepted_steps": num_steps,
        "num_rejected_steps": jnp.zeros_like(num_steps),
        "num_rhs_evals": num_steps * method.stages + method.startup_evals,
    }
    return Solution(ts=ts, ys=ys, stats=stats, success=success)
