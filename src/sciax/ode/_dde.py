"""`DDE`: a delay differential equation `y'(t) = f(t, y(t), y(t - tau_1), ..., y(t - tau_m), params)`.

A DDE needs more than an initial value: the state on `[t0 - max tau, t0]` (the
*history*) and the delays themselves, which may depend on time and on the state
(Bellen & Zennaro, *Numerical Methods for Delay Differential Equations*, Oxford
2003, ch. 1-2; Hairer, Nørsett & Wanner, *Solving ODEs I*, II.17). Both are
functions of `params`, so a history or a delay can be differentiated and batched
over like any other parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PyTree, Real

from .._labels import Labels
from .._method import AbstractMethod
from .._model import AbstractModel
from .._param_spec import ParamSpec


class DDE(AbstractModel):
    """A delay differential equation `y'(t) = vector_field(t, y(t), y_delayed, params)`.

    **Arguments:**

    - `vector_field`: `f(t, y, y_delayed, params) -> dy/dt`, shape of `y`;
      `y_delayed[j]` is `y(t - tau_j)`, so `y_delayed` has shape `(n_delays, *y.shape)`.
    - `delays`: `delays(t, y, params) -> (n_delays,)` array of positive delays:
      constant delays read `params` (`lambda t, y, p: p["tau"]`), time- or
      state-dependent ones use `t` and `y` (e.g. `lambda t, y, p: jnp.stack([1 + y[0] ** 2])`).
    - `history`: `history(t, params) -> y`, the state for `t <= t0`. `simulate`'s
      `y0` is the state at `t0` itself, normally `history(t0, params)`; a different
      `y0` makes the solution jump at `t0` (allowed, as in the literature).
    - `names`, `units`, `long_names`, `time_units`, `param_shapes`: as for `sciax.ode.ODE`.
    - `history_start`: the earliest time at which `history` is defined (e.g. the first
      measurement of a data-driven history), or `None` (default: defined for all `t <= t0`).
      A delay that reaches before it (a state-dependent delay growing too long) stops the
      solve with a failure naming it, a `ValueError` already at `t0` when concrete.

    The state is one 1-D array. Functions are static configuration; everything to
    be differentiated or batched over (delays, history parameters) goes in
    `params`. The default method is `sciax.ode.MethodOfSteps()` (Tsit5).
    `rhs(t, y, params)` is the vector field with the delayed states taken from
    the history, which is the true right-hand side only while `t - tau <= t0`;
    it exists for structure checks, the solve uses `vector_field` itself.
    """

    vector_field: Callable = eqx.field(static=True)
    delays: Callable = eqx.field(static=True)
    history: Callable = eqx.field(static=True)
    _labels: Labels = eqx.field(static=True)
    param_spec: ParamSpec | None = eqx.field(static=True)
    history_start: float | None = eqx.field(static=True)

    def __init__(
        self,
        vector_field: Callable,
        delays: Callable,
        history: Callable,
        *,
        names: Sequence[str] | None = None,
        units: Mapping[str, str] | None = None,
        long_names: Mapping[str, str] | None = None,
        time_units: str | None = None,
        param_shapes: Mapping[str, tuple] | tuple | None = None,
        history_start: float | None = None,
    ):
        for name, fn, signature in (
            ("vector_field", vector_field, "f(t, y, y_delayed, params)"),
            ("delays", delays, "delays(t, y, params)"),
            ("history", history, "history(t, params)"),
        ):
            if not callable(fn):
                raise TypeError(f"DDE: {name} must be callable {signature}, got {type(fn).__name__}")
        self.vector_field = vector_field
        self.delays = delays
        self.history = history
        self._labels = Labels.build(names=names, units=units, long_names=long_names, time_units=time_units)
        self.param_spec = ParamSpec.build(param_shapes, "DDE")
        if history_start is not None and not (isinstance(history_start, (int, float)) and np.isfinite(history_start)):
            raise TypeError(f"DDE: history_start must be a finite number or None, got {history_start!r}")
        self.history_start = None if history_start is None else float(history_start)

    def rhs(self, t: Real[Array, ""], y: Array, params: PyTree) -> Array:
        self.check_functions(t, y, params)  # shapes first: a mismatch is named, not a broadcasting error
        tau = self.delays(t, y, params)
        y_delayed = jax.vmap(lambda s: self.history(s, params))(t - tau)
        return self.vector_field(t, y, y_delayed, params)

    def default_method(self) -> AbstractMethod:
        from ._dde_method import MethodOfSteps

        return MethodOfSteps()

    def labels(self) -> Labels:
        return self._labels

    def check_params(self, params: PyTree) -> None:
        if self.param_spec is not None:
            self.param_spec.check(params)

    def check_state(self, y: PyTree[Array], what: str = "the state") -> None:
        if not isinstance(y, (jax.Array, np.ndarray)) or jnp.ndim(y) != 1:
            raise TypeError(f"DDE: {what} must be one 1-D array, got {_describe(y)}")

    def check_functions(self, t0: Real[Array, ""], y0: Array, params: PyTree) -> int:
        """Check the shapes `delays` and `history` return against `y0`; return the number of delays.

        Raises `ValueError` naming the shapes (at trace time, from shapes only). When the
        delays at `(t0, y0)` are concrete numbers, a non-positive one is a `ValueError` too.
        """
        self.check_state(y0, "y0")
        dynamic, static = eqx.partition(params, eqx.is_array)

        def shape_of(fn, *args):
            return jax.eval_shape(lambda p, *a: fn(*a, eqx.combine(p, static)), dynamic, *args)

        tau = shape_of(self.delays, t0, y0)
        if not hasattr(tau, "shape") or len(tau.shape) != 1 or tau.shape[0] < 1:
            raise ValueError(
                f"DDE: delays(t, y, params) must return a 1-D array of shape (n_delays,), got {_describe(tau)}"
            )
        hist = shape_of(self.history, t0)
        if not hasattr(hist, "shape") or hist.shape != jnp.shape(y0):
            raise ValueError(
                f"DDE: history(t, params) returned {_describe(hist)}, but y0 has shape {jnp.shape(y0)}; they must match"
            )
        n_delays = tau.shape[0]
        y_delayed = jax.ShapeDtypeStruct((n_delays, *jnp.shape(y0)), jnp.result_type(y0))
        out = jax.eval_shape(lambda p, yd: self.vector_field(t0, y0, yd, eqx.combine(p, static)), dynamic, y_delayed)
        if not hasattr(out, "shape") or out.shape != jnp.shape(y0):
            raise ValueError(
                f"DDE: vector_field(t, y, y_delayed, params) returned {_describe(out)}, but y0 has shape "
                f"{jnp.shape(y0)}; they must match (y_delayed has shape {y_delayed.shape})"
            )
        if all(isinstance(x, (np.ndarray, jax.Array)) and not isinstance(x, jax.core.Tracer) for x in (t0, y0)):
            leaves = jax.tree_util.tree_leaves(params)
            if not any(isinstance(x, jax.core.Tracer) for x in leaves):
                value = np.asarray(self.delays(t0, y0, params))
                if not np.all(value > 0):
                    raise ValueError(f"DDE: every delay must be > 0, got delays(t0, y0, params) = {value}")
                if not self.delayed_times_ok(t0, value):
                    raise ValueError(
                        f"DDE: the delayed times t0 - delays = {np.asarray(t0) - value} reach before "
                        f"history_start = {self.history_start}, where the history is not defined"
                    )
        return n_delays

    def delayed_times_ok(self, t, tau):
        """Whether every delayed time `t - tau` lies where the history is defined (`>= history_start`)."""
        if self.history_start is None:
            return jnp.array(True) if isinstance(tau, jax.Array) else True
        return (
            jnp.all(t - tau >= self.history_start)
            if isinstance(tau, jax.Array)
            else bool(np.all(np.asarray(t) - tau >= self.history_start))
        )


def _describe(x) -> str:
    shape = getattr(x, "shape", None)
    return f"shape {tuple(shape)}" if shape is not None else type(x).__name__


__all__ = ["DDE"]
