"""`simulate`: the one entry point shared by every model family."""

from __future__ import annotations

from typing import Any

from jaxtyping import ArrayLike, PyTree

from . import _checks
from ._method import AbstractMethod
from ._model import AbstractModel
from ._solution import Solution


def simulate(
    model: AbstractModel,
    y0: PyTree[ArrayLike],
    ts: ArrayLike,
    params: PyTree = None,
    *,
    method: AbstractMethod | None = None,
    **options: Any,
) -> Solution:
    """Integrate `model` from `y0` at `ts[0]` and return the state at every time in `ts`.

    **Arguments:**

    - `model`: any `sciax.AbstractModel` (e.g. `sciax.ode.ODE`).
    - `y0`: initial state, a pytree of real floating-point arrays with finite entries
      (a complex state is refused: split it into real and imaginary parts).
    - `ts`: 1-D, strictly increasing output times; `ts[0]` is the start time.
    - `params`: any pytree of arrays/numbers passed to the model's right-hand side.
      Differentiable; never baked in as a constant (Python floats become arrays, so a
      sweep over their values compiles once). Models that declare their params
      (the catalogues, `ODE(..., param_shapes=...)`) check names and shapes here.
    - `method`: an `AbstractMethod` instance such as `sciax.ode.Tsit5()`; defaults
      to `model.default_method()`.
    - `**options`: forwarded to `method.solve` (e.g. `rtol`, `atol`, `dt0`,
      `max_steps`, `adjoint`, `event`, `dense`, `progress`, `throw`); a name the
      method does not declare in `method.options` raises `TypeError`.

    **Returns:** a `sciax.Solution`; every leaf of `ys` has time as its leading axis.

    Works under `jax.jit`, `jax.vmap` (over `y0`, `params` or both) and `jax.grad`
    with respect to `y0` and `params`. For forward mode (`jax.jvp`, `jax.jacfwd`)
    ODE methods need `adjoint=sciax.ode.ForwardMode()`.
    """
    if not isinstance(model, AbstractModel):
        raise TypeError(
            f"simulate: model must be a sciax.AbstractModel (e.g. sciax.ode.ODE(f)), got {type(model).__name__}"
        )
    method = _resolve_method(model, method)
    _checks.check_options(method, options)
    y0 = _checks.check_y0(y0, throw=options.get("throw", True) is not False and not model.checks_traced_y0)
    ts = _checks.check_ts(ts)
    params = _checks.check_params(params)
    model.check_params(params)
    _checks.check_model_rhs(model, ts[0], y0, params)
    sol = model.integrate(method, y0, ts, params, **options)
    return sol.with_labels(model.labels())


def compiler_options(model: AbstractModel, method: AbstractMethod | None = None) -> dict[str, Any]:
    """The XLA compiler options `simulate` builds its run of `model` with `method` (default
    `model.default_method()`): e.g. `sciax.pde.Leapfrog` asks XLA:CPU for 512-bit vectors at
    order 8 on large grids. `simulate` applies them itself when it is the outermost compiled
    function; XLA takes options from the outermost `jax.jit` only, so code that jits around
    `simulate` passes them on: `jax.jit(run, compiler_options=sciax.compiler_options(model, method))`.
    An empty dict where the method asks for none. The values do not change results beyond
    floating-point round-off."""
    if not isinstance(model, AbstractModel):
        raise TypeError(f"compiler_options: model must be a sciax.AbstractModel, got {type(model).__name__}")
    return dict(_resolve_method(model, method).compiler_options(model))


def _resolve_method(model: AbstractModel, method) -> AbstractMethod:
    if method is None:
        return model.default_method()
    if isinstance(method, AbstractMethod):
        return method
    if isinstance(method, type) and issubclass(method, AbstractMethod):
        raise TypeError(f"simulate: method must be an instance; write method={method.__name__}() (with parentheses)")
    raise TypeError(
        f"simulate: unknown method {method!r} ({type(method).__name__}); expected an instance of "
        "sciax.AbstractMethod such as sciax.ode.Tsit5() or sciax.ode.Kvaerno5()"
    )


__all__ = ["simulate", "compiler_options"]
