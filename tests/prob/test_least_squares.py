"""`least_squares`: Levenberg–Marquardt point fits checked against numpy's lstsq, scipy's curve_fit and exact truths."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import curve_fit

import sciax
from sciax.prob import least_squares

TIGHT = {"rtol": 1e-12, "atol": 1e-12}  # ODE solver tolerances, so the model error is far below the checks
# The default optimiser stops at steps of ~1e-8 (relative); to compare with a direct solve to round-off, the
# linear tests run it until its steps are ~1e-12.
LM = optx.LevenbergMarquardt(rtol=1e-12, atol=1e-12)

# ---- a model linear in its parameters: y = X theta exactly -----------------------------------------------
# dy0/dt = a + b t, dy1/dt = c t^2 from y(0) = 0 gives y0 = a t + b t^2/2, y1 = c t^3/3; Tsit5 (order 5)
# integrates these polynomials exactly, so least squares must reproduce the linear regression to round-off.

LINEAR = sciax.ode.ODE(lambda t, y, p: jnp.stack([p["a"] + p["b"] * t, p["c"] * t**2]), names=("u", "v"))
TS = np.linspace(0.0, 2.0, 9)
THETA = np.array([1.0, -0.5, 2.0])  # a, b, c
START = {"a": 0.0, "b": 0.0, "c": 0.0}


def design() -> np.ndarray:
    """`(T*K, 3)` design matrix in the order of `data.ravel()` for data of shape `(T, 2)`."""
    rows = np.zeros((len(TS), 2, 3))
    rows[:, 0, 0], rows[:, 0, 1], rows[:, 1, 2] = TS, TS**2 / 2, TS**3 / 3
    return rows.reshape(-1, 3)


def noisy_linear_data(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (design() @ THETA).reshape(len(TS), 2) + 0.05 * rng.standard_normal((len(TS), 2))


@functools.cache
def linear_fits_vmapped():
    """Two data sets fitted in one vmapped call."""
    data = jnp.stack([noisy_linear_data(0), noisy_linear_data(1)])
    fit = jax.vmap(lambda d: least_squares(LINEAR, jnp.zeros(2), TS, d, START, optimiser=LM, **TIGHT))
    return data, fit(data)


def test_linear_model_matches_lstsq_and_textbook_covariance_under_vmap():
    data, fits = linear_fits_vmapped()
    X = design()
    n, p = X.shape
    for i in range(2):
        y = np.asarray(data[i]).ravel()
        theta, rss, *_ = np.linalg.lstsq(X, y, rcond=None)
        fitted = np.array([fits.params[k][i] for k in ("a", "b", "c")])
        np.testing.assert_allclose(fitted, theta, rtol=0, atol=1e-10)
        covariance = rss[0] / (n - p) * np.linalg.inv(X.T @ X)  # s^2 (X^T X)^-1
        np.testing.assert_allclose(fits.covariance[i], covariance, rtol=1e-8)
        np.testing.assert_allclose(
            [fits.std_errors[k][i] for k in ("a", "b", "c")], np.sqrt(np.diag(covariance)), rtol=1e-8
        )
        np.testing.assert_allclose(fits.cost[i], 0.5 * rss[0], rtol=1e-8)
        np.testing.assert_allclose(fits.residuals[i], (X @ theta - y).reshape(-1, 2), atol=1e-10)
    assert bool(jnp.all(fits.success)) and fits.labels == ("a", "b", "c")
    assert np.all(np.asarray(fits.dof) == n - p)


def test_weighted_fit_with_absolute_sigma_is_the_weighted_regression():
    sigma = np.array([0.05, 0.2])  # one noise scale per observed component
    data = noisy_linear_data(2)
    fit = least_squares(LINEAR, jnp.zeros(2), TS, data, START, sigma=sigma, absolute_sigma=True, optimiser=LM, **TIGHT)
    w = np.tile(1 / sigma, len(TS))
    Xw, yw = design() * w[:, None], data.ravel() * w
    theta = np.linalg.lstsq(Xw, yw, rcond=None)[0]
    np.testing.assert_allclose([fit.params[k] for k in ("a", "b", "c")], theta, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.covariance, np.linalg.inv(Xw.T @ Xw), rtol=1e-8)  # (X^T W X)^-1, no s^2


# ---- a nonlinear model against scipy's curve_fit ---------------------------------------------------------
# dy/dt = c - k y, y(0) = 5: y(t) = c/k + (5 - c/k) exp(-k t), in closed form for scipy.

DECAY = sciax.ode.ODE(lambda t, y, p: p["c"] - p["k"] * y)
DECAY_TS = np.linspace(0.0, 4.0, 12)


def decay_closed_form(t, k, c):
    return c / k + (5.0 - c / k) * np.exp(-k * t)


def decay_jacobian(t, k, c):
    e = np.exp(-k * t)
    dk = -c / k**2 * (1 - e) - (5.0 - c / k) * t * e
    return np.stack([dk, (1 - e) / k], axis=-1)


def decay_data() -> np.ndarray:
    rng = np.random.default_rng(4)
    data = decay_closed_form(DECAY_TS, 0.7, 1.5) + 0.05 * rng.standard_normal(DECAY_TS.shape)
    data[5] = np.nan  # a missing value: left out of the fit
    return data[:, None]


@functools.cache
def decay_fit(log_params):
    return least_squares(
        DECAY, jnp.array([5.0]), DECAY_TS, decay_data(), {"k": 0.3, "c": 1.0}, log_params=log_params, **TIGHT
    )


def scipy_decay_fit():
    data = decay_data()[:, 0]
    keep = ~np.isnan(data)
    popt, pcov = curve_fit(
        decay_closed_form,
        DECAY_TS[keep],
        data[keep],
        p0=(0.3, 1.0),
        jac=decay_jacobian,  # exact Jacobian: the covariance is then not limited by finite differences
        ftol=1e-15,
        xtol=1e-15,
        gtol=1e-15,
    )
    return popt, pcov


@pytest.mark.parametrize("log_params", [False, True])
def test_nonlinear_fit_and_standard_errors_match_curve_fit(log_params):
    fit = decay_fit(log_params)
    popt, pcov = scipy_decay_fit()
    assert bool(fit.success)
    np.testing.assert_allclose([fit.params["k"], fit.params["c"]], popt, rtol=1e-8)
    # Fitting log k, log c reaches the same optimum; the reported covariance is for k, c themselves.
    assert fit.labels == ("c", "k")  # covariance rows follow the sorted names; curve_fit's are (k, c)
    np.testing.assert_allclose(fit.covariance, pcov[::-1, ::-1], rtol=1e-6)
    np.testing.assert_allclose([fit.std_errors["k"], fit.std_errors["c"]], np.sqrt(np.diag(pcov)), rtol=1e-6)
    assert int(fit.dof) == 11 - 2 and fit.residuals[5, 0] == 0.0  # the NaN row counts for nothing


def test_lotka_volterra_recovers_the_truth_from_noise_free_data():
    truth = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}
    ts = np.linspace(0.0, 12.0, 13)

    def rhs(t, y):
        prey, predator = y
        return [
            truth["alpha"] * prey - truth["beta"] * prey * predator,
            truth["delta"] * prey * predator - truth["gamma"] * predator,
        ]

    data = solve_ivp(rhs, (0.0, 12.0), [30.0, 4.0], t_eval=ts, rtol=1e-13, atol=1e-12, method="DOP853").y.T
    start = {name: 1.3 * value for name, value in truth.items()}
    fit = least_squares(sciax.ode.lotka_volterra(), jnp.array([30.0, 4.0]), ts, data, start, log_params=True, **TIGHT)
    assert bool(fit.success)
    for name, value in truth.items():
        np.testing.assert_allclose(fit.params[name], value, rtol=1e-7, err_msg=name)
    assert float(fit.cost) < 1e-16


# ---- failure and bad input ---------------------------------------------------------------------------------


def test_too_few_iterations_gives_success_false_or_a_clear_error():
    data = noisy_linear_data(0)
    fit = least_squares(LINEAR, jnp.zeros(2), TS, data, START, max_iterations=1, throw=False, **TIGHT)
    assert not bool(fit.success)
    with pytest.raises(Exception, match="reached max_iterations"):
        least_squares(LINEAR, jnp.zeros(2), TS, data, START, max_iterations=1, **TIGHT)


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"data": np.zeros((9, 3))}, ValueError, r"data has shape \(9, 3\), but .* prediction .* \(9, 2\)"),
        ({"data": np.zeros(9)}, ValueError, r"expected \(9, K\).*data\[:, None\]"),
        ({"params0": [0.0, 0.0]}, TypeError, "params0 must be a non-empty dict"),
        ({"params0": {"a": "1"}}, TypeError, r"params0\['a'\] must be a float"),
        ({"params0": {"a": 0.0, "b": 0.0, "c": 0.0, "z": 1.0}}, ValueError, r"'z', which the model's .* never"),
        ({"params0": {"a": 0.0}}, ValueError, r"reads params\['b'\]"),
        ({"params": {"a": 1.0}}, ValueError, r"\['a'\] are in both params0"),
        ({"log_params": True}, ValueError, r"params0\['a'\] = 0.0 must be > 0 .* log_params"),
        ({"log_params": ["q"]}, ValueError, r"log_params names \['q'\]"),
        ({"sigma": np.ones(3)}, ValueError, r"sigma has shape \(3,\)"),
        ({"sigma": -1.0}, ValueError, "sigma must be > 0"),
        ({"observe": ["w"]}, ValueError, "observe= names 'w'"),
        ({"observe": [2]}, ValueError, r"observe=\[2\] does not index"),
        ({"ts": TS[::-1]}, ValueError, "ts must be strictly increasing"),
        ({"t0": 1.0}, ValueError, r"t0=1.0 is after"),
        ({"max_iterations": 0}, ValueError, "max_iterations must be a positive integer"),
        ({"optimiser": "lm"}, TypeError, "optimiser must be an optimistix"),
    ],
)
def test_bad_input_names_the_argument(change, error, message):
    kwargs = {"data": np.zeros((9, 2)), "params0": dict(START), "ts": TS}
    kwargs.update(change)
    data, params0, ts = kwargs.pop("data"), kwargs.pop("params0"), kwargs.pop("ts")
    with pytest.raises(error, match=message):
        least_squares(LINEAR, jnp.zeros(2), ts, data, params0, **kwargs)


def test_data_values_are_checked():
    with pytest.raises(ValueError, match=r"data\[3, 1\] is infinite"):
        least_squares(LINEAR, jnp.zeros(2), TS, np.where(np.arange(18).reshape(9, 2) == 7, np.inf, 0.0), START)
    with pytest.raises(ValueError, match="data is all NaN"):
        least_squares(LINEAR, jnp.zeros(2), TS, np.full((9, 2), np.nan), START)


def test_any_optimistix_solver_can_be_passed():
    fit = least_squares(
        LINEAR, jnp.zeros(2), TS, noisy_linear_data(0), START, optimiser=optx.GaussNewton(1e-10, 1e-10), **TIGHT
    )
    theta = np.linalg.lstsq(design(), noisy_linear_data(0).ravel(), rcond=None)[0]
    np.testing.assert_allclose([fit.params[k] for k in ("a", "b", "c")], theta, atol=1e-10)
