"""`posterior_predictive`: bands are numpy's quantiles of the draws, markers are the data (artist-level checks).

The inference result is built the way `sciax.prob.infer` builds it (through `sciax._arviz`), from fixed
random draws, so no sampler runs here; the same code path serves ArviZ 0.x and 1.x.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from matplotlib.collections import PathCollection, PolyCollection

from sciax import _arviz, plot

TIMES = np.linspace(0.0, 5.0, 6)
NAMES = ["prey", "predator"]


def fake_result(with_observed: bool = True):
    rng = np.random.default_rng(1)
    mean = np.stack([10 + np.sin(TIMES), 3 + np.cos(TIMES)], axis=1)  # (T, K)
    obs = mean + rng.standard_normal((2, 50, len(TIMES), 2))  # (chain, draw, T, K)
    data = mean + 0.5 * rng.standard_normal(mean.shape)
    data[2, 1] = np.nan  # a missing observation
    dims = {"obs": ("time", "observed"), "prediction": ("time", "observed")}
    coords = {"time": TIMES, "observed": NAMES}
    groups = {
        "posterior": _arviz.dataset({"prediction": obs.mean(axis=1, keepdims=True) + 0 * obs}, dims, coords),
        "posterior_predictive": _arviz.dataset({"obs": obs}, dims, coords),
    }
    if with_observed:
        groups["observed_data"] = _arviz.dataset({"obs": data}, dims, coords, sample_dims=())
    return _arviz.inference_data(groups), obs, data


def band_edges(band: PolyCollection, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edge of a `fill_between` polygon at each time in `t`."""
    vertices = band.get_paths()[0].vertices
    lower, upper = [], []
    for ti in t:
        ys = vertices[np.isclose(vertices[:, 0], ti), 1]
        lower.append(ys.min())
        upper.append(ys.max())
    return np.array(lower), np.array(upper)


def test_bands_are_quantiles_of_the_draws_and_markers_are_the_data():
    result, obs, data = fake_result()
    axes = plot.posterior_predictive(result)
    assert axes.shape == (2,)
    flat = obs.reshape(-1, len(TIMES), 2)
    for k, ax in enumerate(axes):
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == 2
        for band, (lo, hi) in zip(bands, [(0.05, 0.95), (0.25, 0.75)]):
            lower, upper = band_edges(band, TIMES)
            np.testing.assert_allclose(lower, np.quantile(flat[..., k], lo, axis=0), rtol=1e-12)
            np.testing.assert_allclose(upper, np.quantile(flat[..., k], hi, axis=0), rtol=1e-12)
        np.testing.assert_allclose(ax.lines[0].get_ydata(), np.median(flat[..., k], axis=0), rtol=1e-12)
        (markers,) = [c for c in ax.collections if isinstance(c, PathCollection)]
        seen = np.isfinite(data[:, k])
        np.testing.assert_array_equal(markers.get_offsets(), np.stack([TIMES[seen], data[seen, k]], axis=1))
        assert ax.get_ylabel() == NAMES[k] and ax.get_xlabel() == "time"
    assert len(axes[1].collections[-1].get_offsets()) == len(TIMES) - 1  # the NaN is not drawn


def test_prediction_bands_and_data_given_explicitly_on_given_axes():
    import matplotlib.pyplot as plt

    result, obs, data = fake_result(with_observed=False)
    _, given = plt.subplots(1, 2)
    axes = plot.posterior_predictive(result, xr.DataArray(data), var_name="prediction", quantiles=(0.1, 0.9), ax=given)
    assert list(axes) == list(given)
    prediction = np.asarray(_arviz.group(result, "posterior")["prediction"]).reshape(-1, len(TIMES), 2)
    (band,) = [c for c in axes[0].collections if isinstance(c, PolyCollection)]
    lower, upper = band_edges(band, TIMES)
    np.testing.assert_allclose(lower, np.quantile(prediction[..., 0], 0.1, axis=0), rtol=1e-12)
    np.testing.assert_allclose(upper, np.quantile(prediction[..., 0], 0.9, axis=0), rtol=1e-12)


def test_one_component_without_an_observed_dim():
    rng = np.random.default_rng(2)
    draws = rng.standard_normal((1, 40, len(TIMES)))
    result = _arviz.inference_data({"posterior_predictive": _arviz.dataset({"y": draws}, {}, {})})
    ax = plot.posterior_predictive(result, np.arange(6.0), var_name="y")
    assert hasattr(ax, "plot")  # a single Axes
    (markers,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    np.testing.assert_array_equal(markers.get_offsets()[:, 1], np.arange(6.0))


def test_bad_input_names_the_argument():
    result, _, data = fake_result()
    with pytest.raises(ValueError, match="var_name='mu' is in neither"):
        plot.posterior_predictive(result, var_name="mu")
    with pytest.raises(ValueError, match=r"data has shape \(5, 2\); expected \(6, 2\)"):
        plot.posterior_predictive(result, data[:5])
    with pytest.raises(ValueError, match="quantiles must be an even number"):
        plot.posterior_predictive(result, quantiles=(0.5,))
    with pytest.raises(ValueError, match="ax has 1 Axes but there are 2"):
        plot.posterior_predictive(result, ax=[None])
    with pytest.raises(ValueError, match=r"no observed_data\['obs'\]; pass the observations as data="):
        plot.posterior_predictive(fake_result(with_observed=False)[0])
    with pytest.raises(ValueError, match="is in neither"):
        plot.posterior_predictive(xr.Dataset())
