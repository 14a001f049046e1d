"""`least_squares`: a point fit of a simulation's parameters to data, Levenberg–Marquardt over optimistix.

References: K. Levenberg (1944), D. W. Marquardt (1963) for the method (run by
`optimistix.LevenbergMarquardt`); the Gauss–Newton covariance
`s^2 (J^T J)^{-1}` with `s^2 = RSS / (n - p)` is the standard asymptotic
covariance of nonlinear least squares (Seber & Wild, *Nonlinear Regression*,
1989, §2.1; the same as `scipy.optimize.curve_fit`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, ArrayLike, Bool, Float, Int, PyTree

from .. import ode
from .._method import AbstractMethod
from .._model import AbstractModel
from .._simulate import simulate
from ._param_usage import used_parameters
from ._simulation_model import _takes_adjoint

_FN = "least_squares"
# Failure codes of a fit, in the order of `_MESSAGES`.
_MESSAGES = (
    "",
    f"{_FN}: Levenberg–Marquardt reached max_iterations without converging; raise max_iterations, start "
    "from better params0, or pass throw=False to get success=False",
    f"{_FN}: the optimiser failed (non-finite residuals or Jacobian along the way); check params0 and the "
    "data, or pass throw=False to get success=False",
    f"{_FN}: the simulation failed at the fitted parameters (or its residuals are not finite); pass "
    "throw=False to get success=False",
)


class LeastSquaresResult(eqx.Module):
    """What `least_squares` returns. A pytree: works under `jax.jit` and `jax.vmap`.

    - `params`: the fitted parameters, `{name: array}` like `params0`, natural scale
      (also for names fitted in log space).
    - `std_errors`: `{name: array}`, the square roots of the diagonal of `covariance`.
    - `covariance`: `(P, P)`, the Gauss–Newton covariance of the `P` fitted scalars in
      the order of `labels`, natural scale; all `inf` where the Jacobian is rank
      deficient or there are no degrees of freedom left.
    - `labels`: the names of the `P` scalars, e.g. `("beta", "gamma", "k[0]", "k[1]")`.
    - `residuals`: `(T, K)`, `(prediction - data) / sigma` at the fit (0 where the
      data is NaN).
    - `cost`: `0.5 * sum(residuals**2)`.
    - `dof`: degrees of freedom, number of observed (non-NaN) values minus `P`.
    - `num_steps`: Levenberg–Marquardt iterations taken.
    - `success`: the optimiser converged and the simulation at the fit succeeded.
    """

    params: dict[str, Array]
    std_errors: dict[str, Array]
    covariance: Float[Array, "P P"]
    residuals: Float[Array, "T K"]
    cost: Float[Array, ""]
    dof: Int[Array, ""]
    num_steps: Int[Array, ""]
    success: Bool[Array, ""]
    labels: tuple[str, ...] = eqx.field(static=True)


def least_squares(
    model: AbstractModel,
    y0: PyTree[ArrayLike],
    ts: ArrayLike,
    data: ArrayLike,
    params0: Mapping[str, ArrayLike],
    *,
    params: Mapping[str, Any] | None = None,
    observe: Sequence[str | int] | Callable | None = None,
    t0: float | None = None,
    sigma: ArrayLike | None = None,
    absolute_sigma: bool = False,
    log_params: bool | Sequence[str] = False,
    optimiser: optx.AbstractLeastSquaresSolver | None = None,
    max_iterations: int = 256,
    throw: bool = True,
    method: AbstractMethod | None = None,
    **options: Any,
) -> LeastSquaresResult:
    """Fit a simulation's parameters to data by least squares (Levenberg–Marquardt).

    Minimises `0.5 * sum(((prediction - data) / sigma)**2)` over the parameters in
    `params0`, where `prediction` is the observed part of
    `sciax.simulate(model, y0, ...)` at the times `ts`: a point estimate before (or
    instead of) a Bayesian fit with `SimulationModel` and `infer`, taking the same
    `observe=`, `t0=`, `method=` and solver options.

    **Arguments:**

    - `model`, `y0`, `method`, `**options`: as for `sciax.simulate` (e.g. `rtol`,
      `atol`, `max_steps` of the ODE solver; not `throw`). For ODE methods the
      Jacobian is taken in forward mode (`adjoint=sciax.ode.ForwardMode()` is set for
      you); passing `adjoint=` switches to reverse mode.
    - `ts`: 1-D observation times, shape `(T,)`, strictly increasing.
    - `data`: observations, shape `(T, K)` for `K` observed components; NaN marks a
      missing value (left out of the sum).
    - `params0`: `{name: initial value}` of the fitted parameters (floats or float
      arrays); each must be read by the model's right-hand side.
    - `params`: fixed values of the other parameters (a dict).
    - `observe`: which state components are observed: names, integer indices into
      the last axis of a 1-D state, or a function `ys -> (T, K)` (e.g. incidence as a
      difference of compartments, or a PDE field at sensor points). Default: every
      component of a 1-D state.
    - `t0`: start time of the simulation; default `ts[0]` (the first row of `data`
      observes the initial state).
    - `sigma`: noise scale, broadcastable to `(T, K)` (e.g. one per component);
      default 1. With `absolute_sigma=False` (default) only relative weights matter
      and the covariance is scaled by `s^2 = 2 cost / dof`, as in
      `scipy.optimize.curve_fit`; with `True`, `sigma` is taken as the true noise
      standard deviation and the covariance is `(J^T J)^{-1}`.
    - `log_params`: `True` fits every parameter as `log(p)` (each must be > 0), or a
      list of names to fit in log space; keeps rates positive and evens out scales.
      The fit is the same optimum; `covariance` is always reported for `p` itself
      (by the delta method, exact for the linearisation).
    - `optimiser`: any optimistix least-squares solver; default
      `optimistix.LevenbergMarquardt(rtol=1e-8, atol=1e-8)` (its tolerances bound the
      last step and the last change of the cost). Its answer is refined by one
      Gauss–Newton step, kept if it does not raise the cost: exact for a model
      linear in its parameters, where a trust region stops at ~sqrt(eps).
    - `max_iterations`: the optimiser's step budget.
    - `throw`: raise if the fit fails (no convergence, failed simulation); with
      `False` the result has `success=False` instead.

    **Returns:** a `LeastSquaresResult`. Runs under `jax.jit` and `jax.vmap` (e.g.
    one fit per data set). Not differentiable through the optimum with the default
    forward-mode Jacobian of ODE methods (optimistix's implicit adjoint needs reverse
    mode through the residuals).
    """
    problem = _Residuals.build(model, y0, ts, data, params0, params, observe, t0, sigma, log_params, method, options)
    if optimiser is None:
        optimiser = optx.LevenbergMarquardt(rtol=1e-8, atol=1e-8)
    elif not isinstance(optimiser, (optx.AbstractLeastSquaresSolver, optx.AbstractMinimiser)):
        raise TypeError(
            f"{_FN}: optimiser must be an optimistix least-squares solver (e.g. "
            f"optimistix.LevenbergMarquardt(rtol=1e-8, atol=1e-8)), got {type(optimiser).__name__}"
        )
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
        raise ValueError(f"{_FN}: max_iterations must be a positive integer, got {max_iterations!r}")
    z0 = problem.to_fitted(problem.start)
    return _fit(problem, z0, optimiser, int(max_iterations), bool(absolute_sigma), bool(throw))


class _Residuals(eqx.Module):
    """The weighted residual function `z -> (prediction(p(z)) - data) / sigma` and its setting."""

    model: AbstractModel
    y0: Any
    ts: Float[Array, " N"]
    data: Float[Array, "T K"]
    weights: Float[Array, "T K"]
    start: dict[str, Array]
    fixed: dict[str, Any]
    method: AbstractMethod | None = eqx.field(static=True)
    options: tuple[tuple[str, Any], ...] = eqx.field(static=True)
    observe: tuple[int, ...] | Callable = eqx.field(static=True)
    prepend_t0: bool = eqx.field(static=True)
    log_names: tuple[str, ...] = eqx.field(static=True)
    jac: str = eqx.field(static=True)

    @classmethod
    def build(cls, model, y0, ts, data, params0, params, observe, t0, sigma, log_params, method, options):
        if not isinstance(model, AbstractModel):
            raise TypeError(f"{_FN}: model must be a sciax.AbstractModel, got {type(model).__name__}")
        times = _check_ts(ts)
        start = _check_params0(params0)
        fixed = _check_fixed(params, start)
        log_names = _log_names(log_params, start)
        data = _check_data(data, times.shape[0])
        weights = _weights(sigma, data.shape)
        t0 = float(times[0]) if t0 is None else float(t0)
        if t0 > float(times[0]):
            raise ValueError(f"{_FN}: t0={t0} is after the first observation time ts[0]={float(times[0])}")
        prepend = t0 < float(times[0])
        sim_ts = jnp.concatenate([jnp.array([t0], times.dtype), times]) if prepend else times
        options = dict(options)
        jac = "bwd" if "adjoint" in options else "fwd"
        if jac == "fwd" and _takes_adjoint(model, method):
            # jax.jacfwd through a diffrax solve needs its forward-mode adjoint.
            options["adjoint"] = ode.ForwardMode()
        y0 = jax.tree_util.tree_map(lambda leaf: jnp.asarray(leaf, dtype=jnp.result_type(float)), y0)
        _check_used(model, y0, start, fixed)
        residuals = cls(
            model=model,
            y0=y0,
            ts=sim_ts,
            data=data,
            weights=weights,
            start=start,
            fixed=fixed,
            method=method,
            options=tuple(sorted(options.items(), key=lambda item: item[0])),
            observe=_resolve_observe(observe, model.labels().names, y0),
            prepend_t0=prepend,
            log_names=log_names,
            jac=jac,
        )
        residuals._check_prediction_shape()
        return residuals

    def to_fitted(self, p: dict[str, Array]) -> dict[str, Array]:
        return {k: jnp.log(v) if k in self.log_names else v for k, v in p.items()}

    def to_natural(self, z: dict[str, Array]) -> dict[str, Array]:
        return {k: jnp.exp(v) if k in self.log_names else v for k, v in z.items()}

    def predict(self, p: dict[str, Array]) -> tuple[Float[Array, "T K"], Bool[Array, ""]]:
        """The observed components at `ts`, and whether the solve succeeded."""
        params = {**self.fixed, **p}
        sol = simulate(self.model, self.y0, self.ts, params, method=self.method, throw=False, **dict(self.options))
        ys = jax.tree_util.tree_map(lambda leaf: leaf[1:], sol.ys) if self.prepend_t0 else sol.ys
        prediction = self.observe(ys) if callable(self.observe) else ys[..., jnp.asarray(self.observe)]
        return prediction, jnp.all(sol.success)

    def weighted(self, p: dict[str, Array]) -> tuple[Float[Array, "T K"], Bool[Array, ""]]:
        prediction, ok = self.predict(p)
        observed = ~jnp.isnan(self.data)
        r = jnp.where(observed, (prediction - jnp.where(observed, self.data, 0.0)) * self.weights, 0.0)
        return r, ok

    def __call__(self, z: dict[str, Array], args: None = None) -> Float[Array, "T K"]:
        r, ok = self.weighted(self.to_natural(z))
        # A failed solve gives an infinite cost, which the trust region rejects
        # (shrinking the step) instead of following a garbage prediction.
        return jnp.where(ok, r, jnp.inf)

    def _check_prediction_shape(self) -> None:
        try:
            prediction, _ = eqx.filter_eval_shape(self.predict, self.start)
        except (TypeError, ValueError, KeyError, IndexError) as err:
            raise type(err)(f"{_FN}: simulating with params0 failed: {err}") from err
        if prediction.shape != self.data.shape:
            raise ValueError(
                f"{_FN}: data has shape {self.data.shape}, but the model's observed prediction at ts has shape "
                f"{prediction.shape} = (len(ts), number of observed components); check data, ts and observe="
            )


@eqx.filter_jit
def _fit(problem: _Residuals, z0, optimiser, max_iterations: int, absolute_sigma: bool, throw: bool):
    sol = optx.least_squares(
        problem, optimiser, z0, options={"jac": problem.jac}, max_steps=max_iterations, throw=False
    )
    flat, unravel = ravel_pytree(problem.to_natural(sol.value))
    jacobian_of = jax.jacfwd if problem.jac == "fwd" else jax.jacrev
    jacobian = jacobian_of(lambda x: problem.weighted(unravel(x))[0].ravel())(flat)
    pinv, inverse, full_rank = _pseudo_inverse(jacobian)
    flat, residuals, simulated = _polish(problem, unravel, flat, pinv, full_rank)
    cost = 0.5 * jnp.sum(residuals**2)
    dof = jnp.sum(~jnp.isnan(problem.data)) - flat.size
    scale = 1.0 if absolute_sigma else jnp.where(dof > 0, 2 * cost / jnp.maximum(dof, 1), jnp.inf)
    covariance = jnp.where(full_rank, scale * inverse, jnp.inf)
    code = jnp.where(
        sol.result == optx.RESULTS.successful,
        jnp.where(simulated & jnp.isfinite(cost), 0, 3),
        jnp.where(sol.result == optx.RESULTS.nonlinear_max_steps_reached, 1, 2),
    )
    if throw:
        cost = eqx.branched_error_if(cost, code != 0, code, _MESSAGES)
    return LeastSquaresResult(
        params=unravel(flat),
        std_errors=unravel(jnp.sqrt(jnp.diag(covariance))),
        covariance=covariance,
        residuals=residuals,
        cost=cost,
        dof=dof,
        num_steps=sol.stats["num_steps"],
        success=code == 0,
        labels=_labels(unravel(flat)),
    )


def _pseudo_inverse(jacobian: Float[Array, "N P"]):
    """`J^+`, `(J^T J)^{-1}` through the SVD of `J` (no squared condition number), and whether `J` has full rank."""
    n, p = jacobian.shape
    u, s, vt = jnp.linalg.svd(jacobian, full_matrices=False)
    # numpy's matrix_rank threshold: singular values below it are round-off.
    full_rank = (n >= p) & jnp.all(s > jnp.finfo(s.dtype).eps * max(n, p) * s[0])
    safe = jnp.where(full_rank, s, 1.0)
    return (vt.T / safe) @ u.T, (vt.T / safe**2) @ vt, full_rank


def _polish(problem: _Residuals, unravel, flat, pinv, full_rank):
    """One Gauss–Newton step from the optimiser's answer: `x - J^+ r`.

    A trust-region method accepts steps by comparing costs, and near the optimum
    the cost is flat to round-off over `|dx| ~ sqrt(eps)` (relative), so it stops
    there. The Gauss–Newton step solves the linearised problem directly: exact for
    a model linear in its parameters, quadratically convergent otherwise. Kept only
    if the cost does not rise (beyond round-off). `J^+` is held constant under
    differentiation: at the optimum the step's derivative then agrees with the
    implicit-function derivative of the fit.
    """
    residuals, simulated = problem.weighted(unravel(flat))
    step = jax.lax.stop_gradient(pinv) @ residuals.ravel()
    polished = flat - step
    residuals_new, simulated_new = problem.weighted(unravel(polished))
    cost, cost_new = jnp.sum(residuals**2), jnp.sum(residuals_new**2)
    # Round-off in the simulated predictions makes the cost itself uncertain far beyond eps (a relative
    # 1e-13 on Lotka-Volterra-sized states), so "does not rise" allows sqrt(eps): a step that raised the
    # cost by less moves the parameters by a negligible fraction of their standard errors.
    keep = full_rank & simulated_new & (cost_new <= cost * (1 + jnp.sqrt(jnp.finfo(cost.dtype).eps)))
    return (
        jnp.where(keep, polished, flat),
        jnp.where(keep, residuals_new, residuals),
        jnp.where(keep, simulated_new, simulated),
    )


def _labels(params: dict[str, Array]) -> tuple[str, ...]:
    """Names of the scalars in `ravel_pytree` order (dict keys sorted, each array in C order)."""
    labels = []
    for name in sorted(params):
        shape = jnp.shape(params[name])
        labels += [name] if not shape else [f"{name}[{','.join(map(str, i))}]" for i in np.ndindex(shape)]
    return tuple(labels)


# ---- checks, at trace time, each naming the argument ----------------------------------------------------


def _check_ts(ts) -> Array:
    times = jnp.asarray(ts, dtype=jnp.result_type(float))
    if times.ndim != 1 or times.shape[0] < 1:
        raise ValueError(f"{_FN}: ts must be a non-empty 1-D array of observation times, got shape {times.shape}")
    if not isinstance(times, jax.core.Tracer) and not np.all(np.diff(np.asarray(times)) > 0):
        raise ValueError(f"{_FN}: ts must be strictly increasing")
    return times


def _check_params0(params0) -> dict[str, Array]:
    if not isinstance(params0, Mapping) or not params0:
        raise TypeError(
            f"{_FN}: params0 must be a non-empty dict {{name: initial value}} of the fitted parameters, got "
            f"{type(params0).__name__}: {params0!r:.80}"
        )
    start = {}
    for name, value in params0.items():
        if not isinstance(name, str):
            raise TypeError(f"{_FN}: params0 keys must be parameter names (strings), got {name!r}")
        if not isinstance(value, (jax.Array, np.ndarray, int, float, np.number)) or isinstance(value, bool):
            raise TypeError(
                f"{_FN}: params0[{name!r}] must be a float or an array of floats, got {type(value).__name__}"
            )
        if jnp.issubdtype(jnp.result_type(value), jnp.complexfloating):
            raise TypeError(f"{_FN}: params0[{name!r}] must be real, got dtype {jnp.result_type(value)}")
        value = jnp.asarray(value, dtype=jnp.result_type(float))
        if not isinstance(value, jax.core.Tracer) and not np.all(np.isfinite(np.asarray(value))):
            raise ValueError(f"{_FN}: params0[{name!r}] must be finite, got {value}")
        start[name] = value
    return start


def _check_fixed(params, start) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(f"{_FN}: params must be a dict of fixed parameter values, got {type(params).__name__}")
    both = sorted(set(params) & set(start))
    if both:
        raise ValueError(f"{_FN}: {both} are in both params0 (fitted) and params (fixed); give each in one only")
    return dict(params)


def _log_names(log_params, start) -> tuple[str, ...]:
    if isinstance(log_params, bool):
        names = tuple(start) if log_params else ()
    elif isinstance(log_params, str) or not isinstance(log_params, Sequence):
        raise TypeError(f"{_FN}: log_params must be True, False or a list of names in params0, got {log_params!r}")
    else:
        names = tuple(log_params)
        unknown = [n for n in names if n not in start]
        if unknown:
            raise ValueError(f"{_FN}: log_params names {unknown}, which are not in params0 {sorted(start)}")
    for name in names:
        value = start[name]
        if not isinstance(value, jax.core.Tracer) and not np.all(np.asarray(value) > 0):
            raise ValueError(
                f"{_FN}: params0[{name!r}] = {np.asarray(value)} must be > 0 to be fitted in log space "
                "(log_params); drop it from log_params or start from a positive value"
            )
    return names


def _check_data(data, num_times: int) -> Array:
    data = jnp.asarray(data)
    if not jnp.issubdtype(data.dtype, jnp.floating) and not jnp.issubdtype(data.dtype, jnp.integer):
        raise TypeError(f"{_FN}: data must be a real array of observations, got dtype {data.dtype}")
    data = data.astype(jnp.result_type(float))
    if data.ndim != 2 or data.shape[0] != num_times:
        raise ValueError(
            f"{_FN}: data has shape {data.shape}; expected ({num_times}, K) = (len(ts), number of observed "
            "components)" + (" — for one component write data[:, None]" if data.shape == (num_times,) else "")
        )
    if not isinstance(data, jax.core.Tracer):
        values = np.asarray(data)
        if np.isinf(values).any():
            index = [int(i) for i in np.argwhere(np.isinf(values))[0]]
            raise ValueError(f"{_FN}: data{index} is infinite; use NaN for a missing value")
        if np.isnan(values).all():
            raise ValueError(f"{_FN}: data is all NaN (missing); there is nothing to fit")
    return data


def _weights(sigma, shape) -> Array:
    if sigma is None:
        return jnp.ones(shape, dtype=jnp.result_type(float))
    sigma = jnp.asarray(sigma, dtype=jnp.result_type(float))
    try:
        sigma = jnp.broadcast_to(sigma, shape)
    except ValueError:
        raise ValueError(
            f"{_FN}: sigma has shape {sigma.shape}, which does not broadcast to the data's shape {shape}"
        ) from None
    if not isinstance(sigma, jax.core.Tracer) and not np.all(np.asarray(sigma) > 0):
        raise ValueError(f"{_FN}: sigma must be > 0 everywhere, got {np.asarray(sigma).ravel()[:5]}...")
    return 1.0 / sigma


def _check_used(model, y0, start, fixed) -> None:
    """Every fitted parameter must reach the right-hand side: else its covariance is singular."""
    try:
        used = used_parameters(model, y0, {**fixed, **start})
    except ValueError as err:
        message = str(err).replace("neither a prior (priors=)", "neither an initial value (params0=)")
        raise ValueError(f"{_FN}: {message}") from err
    unused = [name for name in start if name not in used]
    if unused:
        raise ValueError(
            f"{_FN}: params0 names {unused[0]!r}, which the model's right-hand side never reads; "
            f"parameters it reads: {sorted(used)}"
        )


def _resolve_observe(observe, state_names, y0) -> tuple[int, ...] | Callable:
    if callable(observe):
        return observe
    if observe is None:
        if jnp.ndim(y0) != 1:
            raise ValueError(
                f"{_FN}: the state has shape {jnp.shape(y0)}; give observe= as a function ys -> (T, K) array"
            )
        return tuple(range(jnp.shape(y0)[0]))
    items = [observe] if isinstance(observe, (str, int, np.integer)) else list(observe)
    indices = []
    for item in items:
        if isinstance(item, str):
            if state_names is None or item not in state_names:
                raise ValueError(f"{_FN}: observe= names {item!r}, which is not a state component {state_names}")
            indices.append(state_names.index(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            size = jnp.shape(y0)[-1] if jnp.ndim(y0) == 1 else 0
            if not -size <= int(item) < size:
                raise ValueError(
                    f"{_FN}: observe={items} does not index the components of a 1-D state of shape {jnp.shape(y0)}"
                )
            indices.append(int(item))
        else:
            raise TypeError(f"{_FN}: observe= entries must be names or integer indices, got {item!r}")
    return tuple(indices)


__all__ = ["least_squares", "LeastSquaresResult"]
