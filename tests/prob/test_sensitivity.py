"""Global (Sobol, Morris) and local sensitivity against analytic values."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax

PI = np.pi


def ishigami(p, a=7.0, b=0.1):
    return jnp.sin(p["x1"]) + a * jnp.sin(p["x2"]) ** 2 + b * p["x3"] ** 4 * jnp.sin(p["x1"])


def ishigami_indices(a=7.0, b=0.1):
    """Analytic indices (Ishigami & Homma 1990; Sobol' & Levitan 1999)."""
    v1 = 0.5 * (1 + b * PI**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * PI**8 * (1 / 18 - 1 / 50)
    v = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / v, np.array([v1 + v13, v2, v13]) / v


@pytest.mark.parametrize("estimator", ["jansen", "saltelli"])
def test_ishigami(estimator):
    bounds = {name: (-PI, PI) for name in ("x1", "x2", "x3")}
    ds = sciax.prob.sobol_indices(ishigami, bounds, 2**13, estimator=estimator, num_resamples=100)
    s1, st = ishigami_indices()
    np.testing.assert_allclose(ds["S1"].values, s1, atol=0.02)
    np.testing.assert_allclose(ds["ST"].values, st, atol=0.02)
    # The 95% intervals cover the true values.
    assert np.all(ds["ST_lower"].values <= st) and np.all(st <= ds["ST_upper"].values)
    assert np.all(ds["S1_lower"].values - 0.005 <= s1) and np.all(s1 <= ds["S1_upper"].values + 0.005)
    assert ds.attrs["num_evaluations"] == 2**13 * 5


def test_sobol_g_function():
    a = np.array([0.0, 1.0, 4.5, 9.0, 99.0, 99.0])
    names = [f"x{i}" for i in range(a.size)]

    def g(p):
        x = jnp.stack([p[n] for n in names])
        return jnp.prod((jnp.abs(4 * x - 2) + a) / (1 + a))

    vi = 1 / (3 * (1 + a) ** 2)
    v = np.prod(1 + vi) - 1
    s1 = vi / v
    st = vi * np.array([np.prod(np.delete(1 + vi, i)) for i in range(a.size)]) / v
    ds = sciax.prob.sobol_indices(g, {n: (0.0, 1.0) for n in names}, 2**13, num_resamples=50, chunk_size=5000)
    np.testing.assert_allclose(ds["S1"].values, s1, atol=0.02)
    np.testing.assert_allclose(ds["ST"].values, st, atol=0.02)


def test_time_resolved_indices_of_a_trajectory():
    # y = y0 exp(-k t): at t = 0 only y0 matters (k has no effect), later k grows in importance.
    model = sciax.ode.ODE(lambda t, y, p: -p["k"] * y, names=("y",))
    ts = jnp.linspace(0.0, 3.0, 4)

    def trajectory(p):
        return sciax.simulate(model, jnp.array([p["y0"]]), ts, {"k": p["k"]}).ys[:, 0]

    ds = sciax.prob.sobol_indices(
        trajectory,
        {"k": (0.5, 1.5), "y0": (1.0, 2.0)},
        2**10,
        num_resamples=20,
        chunk_size=1000,
        output_dims=("time",),
        output_coords={"time": ts},
    )
    assert ds["S1"].dims == ("parameter", "time")
    st = ds["ST"]
    np.testing.assert_allclose(st.sel(parameter="k", time=0.0), 0.0, atol=1e-12)
    np.testing.assert_allclose(st.sel(parameter="y0", time=0.0), 1.0, atol=1e-12)
    assert np.all(np.diff(st.sel(parameter="k").values) > 0)


def test_chunking_does_not_change_the_result():
    bounds = {name: (-PI, PI) for name in ("x1", "x2", "x3")}
    one = sciax.prob.sobol_indices(ishigami, bounds, 2**8, num_resamples=10)
    chunked = sciax.prob.sobol_indices(ishigami, bounds, 2**8, num_resamples=10, chunk_size=97)
    np.testing.assert_allclose(one["ST"].values, chunked["ST"].values, rtol=1e-12)


def test_morris_on_a_linear_function_is_exact():
    c = {"a": 2.0, "b": -3.0, "c": 0.0}
    bounds = {"a": (0.0, 1.0), "b": (0.0, 2.0), "c": (-1.0, 1.0)}
    ds = sciax.prob.morris(lambda p: sum(c[k] * p[k] for k in c), bounds, 20)
    # The effect of a unit fraction of the range is c_i (upper_i - lower_i), at every point.
    expected = np.array([2.0, -6.0, 0.0])
    np.testing.assert_allclose(ds["mu"].values, expected, atol=1e-12)
    np.testing.assert_allclose(ds["mu_star"].values, np.abs(expected), atol=1e-12)
    np.testing.assert_allclose(ds["sigma"].values, 0.0, atol=1e-12)


def test_morris_ranks_ishigami():
    bounds = {name: (-PI, PI) for name in ("x1", "x2", "x3")}
    ds = sciax.prob.morris(ishigami, bounds, 200)
    assert ds["mu_star"].values.argmin() == 2 or ds["sigma"].values[2] > ds["mu"].values[2]
    assert ds["sigma"].values[2] > 0  # x3 acts only through its interaction with x1


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_local_sensitivity_of_exponential_decay(mode):
    model = sciax.ode.ODE(lambda t, y, p: -p["k"] * y, names=("y",))
    ts = jnp.linspace(0.0, 2.0, 5)
    options = {"adjoint": sciax.ode.ForwardMode()} if mode == "forward" else {}
    ds = sciax.prob.local_sensitivity(
        model, jnp.array([2.0]), ts, {"k": 0.7, "unused": 1.0}, mode=mode, rtol=1e-10, atol=1e-10, **options
    )
    t = np.asarray(ts)
    np.testing.assert_allclose(ds["y"].sel(parameter="k").values, -t * 2.0 * np.exp(-0.7 * t), atol=1e-8)
    np.testing.assert_allclose(ds["y"].sel(parameter="unused").values, 0.0, atol=1e-12)
    rel = sciax.prob.local_sensitivity(
        model,
        jnp.array([2.0]),
        ts,
        {"k": 0.7, "unused": 1.0},
        relative=True,
        mode=mode,
        rtol=1e-10,
        atol=1e-10,
        **options,
    )
    np.testing.assert_allclose(rel["y"].sel(parameter="k").values, -0.7 * t, atol=1e-5)


def test_local_sensitivity_of_lotka_volterra_matches_finite_differences():
    model = sciax.ode.lotka_volterra()
    y0, ts = jnp.array([30.0, 4.0]), jnp.linspace(0.0, 5.0, 6)
    p = {"alpha": 0.55, "beta": 0.028, "gamma": 0.8, "delta": 0.024}
    ds = sciax.prob.local_sensitivity(model, y0, ts, p, rtol=1e-10, atol=1e-10)
    assert ds["prey"].dims == ("parameter", "time")
    for name, h in (("alpha", 1e-5), ("delta", 1e-6)):
        up = sciax.simulate(model, y0, ts, {**p, name: p[name] + h}, rtol=1e-10, atol=1e-10).ys
        down = sciax.simulate(model, y0, ts, {**p, name: p[name] - h}, rtol=1e-10, atol=1e-10).ys
        fd = (np.asarray(up) - np.asarray(down)) / (2 * h)
        np.testing.assert_allclose(ds["predator"].sel(parameter=name).values, fd[:, 1], rtol=1e-4, atol=1e-3)


def test_plot_sobol():
    import matplotlib

    matplotlib.use("Agg")
    bounds = {name: (-PI, PI) for name in ("x1", "x2", "x3")}
    ds = sciax.prob.sobol_indices(ishigami, bounds, 2**8, num_resamples=10)
    ax = sciax.prob.plot_sobol(ds, title="Ishigami")
    assert len(ax.patches) == 6
    with pytest.raises(ValueError, match="select one output first"):
        sciax.prob.plot_sobol(ds.expand_dims(time=[0.0, 1.0]))
