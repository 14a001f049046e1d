"""Plotting helpers: each draws the expected artists from real sciax output, and bad input names its argument."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import PolyCollection
from matplotlib.image import AxesImage

import sciax
from sciax import plot

LV_PARAMS = {"alpha": 0.55, "beta": 0.028, "gamma": 0.80, "delta": 0.024}


@functools.cache
def lv_ensemble() -> xr.Dataset:
    """A 12-member Lotka–Volterra ensemble from a vmapped `simulate` (dims member, time)."""
    y0 = jnp.array([30.0, 4.0]) * jnp.linspace(0.9, 1.1, 12)[:, None]
    ts = jnp.linspace(0.0, 10.0, 21)
    sol = jax.vmap(lambda y: sciax.simulate(sciax.ode.lotka_volterra(), y, ts, LV_PARAMS))(y0)
    return sol.to_xarray()


@functools.cache
def ks_run() -> xr.Dataset:
    grid = sciax.pde.Grid((32,), (32.0,))
    x = np.asarray(grid.coords()[0])
    model = sciax.pde.spectral.kuramoto_sivashinsky(grid)
    sol = sciax.simulate(
        model,
        jnp.asarray(0.5 * np.sin(2 * np.pi * x / 32)),
        jnp.linspace(0.0, 4.0, 9),
        method=sciax.pde.ETDRK4(dt=0.25),
    )
    return sol.to_xarray()


def field_2d() -> xr.DataArray:
    t, y, x = np.linspace(0, 3, 7), np.linspace(0, 1, 5), np.linspace(0, 2, 6)
    values = np.sin(t[:, None, None] + y[None, :, None]) * np.cos(x[None, None, :])
    return xr.DataArray(
        values,
        dims=("time", "y", "x"),
        coords={"time": ("time", t, {"units": "s"}), "y": y, "x": x},
        name="u",
        attrs={"long_name": "height", "units": "m"},
    )


# ---- trajectory_spread -----------------------------------------------------------------------------


def test_trajectory_spread_draws_median_bands_traces_per_variable():
    ds = lv_ensemble()
    axes = plot.trajectory_spread(ds, n_traces=5)
    assert axes.shape == (2,)
    for ax, name in zip(axes, ("prey", "predator")):
        assert len(ax.lines) == 5 + 1  # traces + median
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == 2  # (5, 95) % and (25, 75) %
        assert ax.get_ylabel().startswith(ds[name].attrs["long_name"])
        median = ax.lines[-1].get_ydata()
        np.testing.assert_allclose(median, np.median(ds[name].values, axis=0), rtol=1e-6)
    assert axes[0].lines[0].get_color() != axes[1].lines[0].get_color()  # one colour per variable


def test_trajectory_spread_on_one_axes_and_from_a_dataarray():
    import matplotlib.pyplot as plt

    ds = lv_ensemble()
    _, ax = plt.subplots()
    out = plot.trajectory_spread(ds, ["prey", "predator"], ax=ax, n_traces=3, quantiles=(0.1, 0.9))
    assert out is ax and len(ax.lines) == 2 * (3 + 1) and len(ax.collections) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["prey", "predator"]
    single = plot.trajectory_spread(ds["prey"].transpose("time", "member"), n_traces=100)
    assert len(single.lines) == 12 + 1  # no more traces than members


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"member_dim": "sample"}, r"no dim 'sample' \(given as member_dim='sample'\)"),
        ({"time_dim": "t"}, r"no dim 't' \(given as time_dim='t'\)"),
        ({"variables": "wolves"}, r"variables names 'wolves'"),
        ({"quantiles": (0.05, 0.25, 0.75)}, r"quantiles must be an even number"),
        ({"quantiles": (0.95, 0.05)}, r"quantiles must be an even number"),
        ({"n_traces": -1}, r"n_traces must be an integer >= 0"),
    ],
)
def test_trajectory_spread_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot.trajectory_spread(lv_ensemble(), **kwargs)


def test_trajectory_spread_rejects_extra_dims_and_non_xarray():
    ds = lv_ensemble().expand_dims(site=2)
    with pytest.raises(ValueError, match=r"extra dims \['site'\]"):
        plot.trajectory_spread(ds, "prey")
    with pytest.raises(TypeError, match="must be an xarray.Dataset or DataArray"):
        plot.trajectory_spread(np.zeros((3, 4)))


# ---- field_snapshots / space_time --------------------------------------------------------------------


def test_field_snapshots_2d_shares_one_colour_scale():
    da = field_2d()
    fig = plot.field_snapshots(da, n=3)
    images = [a.images[0] for a in fig.axes if a.images]
    assert len(images) == 3 and len({im.get_clim() for im in images}) == 1
    vmax = float(np.abs(da.isel(time=[0, 3, 6])).max())
    assert images[0].get_clim() == pytest.approx((-vmax, vmax))  # both signs: symmetric about 0
    np.testing.assert_allclose(images[1].get_array(), da.isel(time=3).values)  # (y, x): x across
    titles = [a.get_title() for a in fig.axes if a.images]
    assert titles == ["t = 0 s", "t = 1.5 s", "t = 3 s"]
    colorbar = [a for a in fig.axes if not a.images]
    assert len(colorbar) == 1 and colorbar[0].get_ylabel() == "height [m]"


def test_field_snapshots_at_given_times_from_a_pde_run():
    ds = ks_run()
    fig = plot.field_snapshots(ds["u"], times=[0.0, 2.0, 4.0], symmetric=False)
    assert len(fig.axes) == 3 and all(len(a.lines) == 1 for a in fig.axes)
    np.testing.assert_allclose(fig.axes[2].lines[0].get_ydata(), ds["u"].sel(time=4.0).values)
    assert len({a.get_ylim() for a in fig.axes}) == 1


def test_one_d_field_without_times_is_a_space_time_image():
    ds = ks_run()
    fig = plot.field_snapshots(ds)
    (image,) = fig.axes[0].images
    assert image.get_array().shape == (ds.sizes["time"], ds.sizes["x"])
    ax = plot.space_time(ds["u"], cmap="magma")
    assert isinstance(ax.images[0], AxesImage) and ax.images[0].get_cmap().name == "magma"
    assert ax.get_xlabel() == "x" and ax.get_ylabel() == "time"


def test_field_snapshots_and_space_time_bad_input():
    da = field_2d()
    with pytest.raises(ValueError, match=r"no dim 'step' \(given as time_dim='step'\)"):
        plot.field_snapshots(da, time_dim="step")
    with pytest.raises(ValueError, match=r"times \[9.0\] lie outside the stored times \[0, 3\]"):
        plot.field_snapshots(da, times=[1.0, 9.0])
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        plot.field_snapshots(da, n=0)
    with pytest.raises(ValueError, match=r"dims \('time', x\) or \('time', y, x\)"):
        plot.field_snapshots(da.expand_dims(member=2))
    with pytest.raises(ValueError, match=r"Dataset with 2 variables"):
        plot.field_snapshots(xr.Dataset({"u": da, "v": da}))
    with pytest.raises(ValueError, match="for 2-D fields use field_snapshots"):
        plot.space_time(da)
    with pytest.raises(ValueError, match=r"given as time_dim='t'"):
        plot.space_time(ks_run()["u"], time_dim="t")


# ---- seismograms ----------------------------------------------------------------------------------------


@functools.cache
def gather() -> xr.DataArray:
    n, dt = 24, 2e-3
    grid = sciax.pde.Grid((n, n), n * 10.0)
    model = sciax.pde.AcousticWave(grid, f0=20.0, bc=sciax.pde.CPML(6), receivers=[(3, j) for j in range(2, 22, 4)])
    state = {"p": jnp.zeros((n, n)), "v": jnp.zeros((n, n))}
    sol = sciax.simulate(
        model,
        state,
        jnp.arange(121) * dt,
        {"c": 1500.0, "source": jnp.array([12, 12])},
        method=sciax.pde.Leapfrog(dt),
        save="seismogram",
    )
    return model.seismograms(sol)


def test_seismogram_image_time_down_and_clipped():
    data = gather()
    ax = plot.seismograms(data, clip=0.9)
    (image,) = ax.images
    assert image.get_array().shape == (data.sizes["time"], data.sizes["receiver"])
    level = np.quantile(np.abs(data.values), 0.9)
    assert image.get_clim() == pytest.approx((-level, level))
    top, bottom = ax.get_ylim()[1], ax.get_ylim()[0]
    assert top < bottom  # time increases downwards
    assert ax.get_xlabel() == "receiver"


def test_seismogram_wiggles_one_line_per_receiver():
    data = gather()
    ax = plot.seismograms(data, wiggle=True)
    assert len(ax.lines) == data.sizes["receiver"] and len(ax.collections) == data.sizes["receiver"]
    offsets = [np.median(line.get_xdata()) for line in ax.lines]
    np.testing.assert_allclose(offsets, np.arange(data.sizes["receiver"]), atol=0.5)
    assert ax.get_ylim()[0] > ax.get_ylim()[1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"receiver_dim": "trace"}, r"given as receiver_dim='trace'"),
        ({"time_dim": "t"}, r"given as time_dim='t'"),
        ({"clip": 0.0}, r"clip must be a quantile in \(0, 1\]"),
        ({"clip": 1.5}, r"clip must be a quantile in \(0, 1\]"),
    ],
)
def test_seismograms_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plot.seismograms(gather(), **kwargs)


def test_seismograms_need_one_gather():
    with pytest.raises(ValueError, match=r"extra dims \['member'\].*isel\(member=0\)"):
        plot.seismograms(gather().expand_dims(member=2))


# ---- posterior_pairs, sobol_bars -------------------------------------------------------------------------


def fake_posterior():
    from sciax import _arviz

    rng = np.random.default_rng(0)
    draws = {
        "alpha": 0.5 + 0.05 * rng.standard_normal((2, 100)),
        "beta": 0.03 + 0.01 * rng.standard_normal((2, 100)),
        "y0": 10 + rng.standard_normal((2, 100, 2)),
    }
    return _arviz.inference_data({"posterior": _arviz.dataset(draws, {}, {})})


def test_posterior_pairs_marks_the_reference():
    axes = plot.posterior_pairs(
        fake_posterior(), ["alpha", "beta"], reference={"alpha": 0.5, "beta": 0.03}, kind="scatter"
    )
    assert axes.shape == (2, 2)
    joint = axes[1, 0]
    marker = [line for line in joint.lines if line.get_marker() == "o"]
    assert len(marker) == 1 and marker[0].get_xdata()[0] == pytest.approx(0.5)
    assert marker[0].get_ydata()[0] == pytest.approx(0.03)
    for i, (name, value) in enumerate([("alpha", 0.5), ("beta", 0.03)]):
        _assert_marks_value_axis(axes[i, i], value, name)
    kde = plot.posterior_pairs(fake_posterior(), ["alpha", "beta"])  # default kind="kde"
    assert np.asarray(kde).shape == (2, 2)


def _assert_marks_value_axis(ax, value, name):
    """The reference crosses the marginal along the axis that carries the parameter's values.

    ArviZ may draw a marginal on its side (0.x rotates the last one of two); the
    value axis is the one whose limits span the draws, not the density's [0, max].
    """
    lo, hi = (0.2, 0.8) if name == "alpha" else (-0.05, 0.12)
    x_is_value = lo <= ax.get_xlim()[0] < ax.get_xlim()[1] <= hi
    y_is_value = lo <= ax.get_ylim()[0] < ax.get_ylim()[1] <= hi
    assert x_is_value != y_is_value, (name, ax.get_xlim(), ax.get_ylim())
    lines = [line for line in ax.lines if line.get_color() == "C3"]
    assert len(lines) == 1, name
    along = lines[0].get_xdata() if x_is_value else lines[0].get_ydata()
    np.testing.assert_allclose(np.asarray(along, dtype=float), value)


def test_posterior_pairs_vector_variable_and_rotated_marginals():
    axes = plot.posterior_pairs(fake_posterior(), ["beta", "y0"], reference={"beta": 0.03, "y0": [10.0, 11.0]})
    assert axes.shape == (3, 3)  # beta, y0[0], y0[1]
    marker = [line for line in axes[2, 1].lines if line.get_marker() == "o"]
    assert len(marker) == 1 and marker[0].get_xdata()[0] == 10.0 and marker[0].get_ydata()[0] == 11.0


def test_posterior_pairs_bad_input():
    with pytest.raises(ValueError, match=r"var_names names 'gamma'"):
        plot.posterior_pairs(fake_posterior(), ["alpha", "gamma"])
    with pytest.raises(ValueError, match=r"reference names \['delta'\]"):
        plot.posterior_pairs(fake_posterior(), ["alpha", "beta"], reference={"delta": 1.0})
    with pytest.raises(ValueError, match="must have a 'posterior' group"):
        plot.posterior_pairs(xr.Dataset())


def test_sobol_bars_is_the_prob_helper():
    assert plot.sobol_bars is sciax.prob.plot_sobol


def test_sobol_bars_bad_input_names_the_helper():
    with pytest.raises(TypeError, match=r"^sobol_bars: indices must be the Dataset returned by sciax.prob.sobol"):
        plot.sobol_bars(xr.Dataset())


def test_shot_gather_is_also_published_as_seismograms():
    assert plot.seismograms is plot.shot_gather
    with pytest.raises(ValueError, match=r"^shot_gather: clip must be a quantile"):
        plot.shot_gather(gather(), clip=2.0)
