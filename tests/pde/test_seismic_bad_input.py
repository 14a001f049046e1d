"""sciax.pde.seismic: bad input is a Python exception (or warning) naming what is wrong."""

import jax.numpy as jnp
import numpy as np
import pytest

import sciax

S = sciax.pde.seismic
GRID = sciax.pde.Grid((30, 40), (300.0, 400.0))
RECEIVERS = [[10, j] for j in range(10, 30, 4)]


def _survey(sources=((10, 12),), receivers=RECEIVERS):
    return S.Survey(GRID, np.asarray(sources), np.asarray(receivers), f0=20.0, bc=sciax.pde.CPML(8))


def test_source_inside_absorbing_layer_is_named():
    with pytest.raises(
        ValueError, match=r"source 1 at \(5, 20\) lies inside the absorbing layer along axis 0; indices 8..21"
    ):
        _survey(sources=[[10, 12], [5, 20]])


def test_receiver_outside_grid_is_named():
    with pytest.raises(ValueError, match=r"receiver 2 at \(10, 45\) lies outside the grid of shape \(30, 40\)"):
        _survey(receivers=[[10, 10], [10, 11], [10, 45]])


def test_receiver_inside_right_layer_is_named():
    with pytest.raises(ValueError, match=r"receiver 0 at \(10, 35\) lies inside the absorbing layer along axis 1"):
        _survey(receivers=[[10, 35]])


def test_points_must_be_integer_pairs():
    with pytest.raises(ValueError, match=r"sources must be integer grid indices of shape \(n, 2\)"):
        _survey(sources=[[10.0, 12.0]])


def test_wavelet_at_another_dt():
    survey = _survey()
    wavelet = S.Wavelet.ricker(20.0, 2e-3, 50)
    with pytest.raises(ValueError, match=r"wavelet is sampled at dt=0.002 s, but the modelling step is dt=0.001 s"):
        S.model_shots(survey, jnp.full(GRID.shape, 2000.0), wavelet, 1e-3)


def test_unstable_step():
    survey = _survey()
    with pytest.raises(ValueError, match=r"dt=0.01 s exceeds the stable leapfrog step"):
        S.model_shots(survey, jnp.full(GRID.shape, 2000.0), S.Wavelet.ricker(20.0, 1e-2, 50), 1e-2)


def test_bounds_excluding_the_starting_model():
    survey = _survey()
    wavelet = S.Wavelet.ricker(20.0, 1e-3, 150)
    observed = jnp.zeros((1, 151, len(RECEIVERS)))
    c0 = jnp.full(GRID.shape, 2000.0).at[15, 15].set(3200.0)
    with pytest.raises(ValueError, match=r"bounds \(1500, 3000\) m/s exclude the starting model.*2000..3200 m/s"):
        S.invert(survey, observed, c0, wavelet, 1e-3, bounds=(1500.0, 3000.0))


def test_too_few_points_per_wavelength_warns_with_the_numbers():
    survey = _survey()
    with pytest.warns(
        UserWarning,
        match=r"3.00 grid points per minimum wavelength \(min velocity 1500 m/s, peak frequency 50 Hz, spacing 10 m\)",
    ):
        survey.check_sampling(jnp.full(GRID.shape, 1500.0), 50.0)


def test_observed_of_the_wrong_shape_and_unknown_options():
    survey = _survey()
    wavelet = S.Wavelet.ricker(20.0, 1e-3, 150)
    c0 = jnp.full(GRID.shape, 2000.0)
    with pytest.raises(ValueError, match=r"observed must have shape \(shots, steps \+ 1, receivers\) = \(1, 151, 5\)"):
        S.invert(survey, jnp.zeros((1, 150, 5)), c0, wavelet, 1e-3)
    observed = jnp.zeros((1, 151, 5))
    with pytest.raises(ValueError, match=r'optimizer must be "adam" or "lbfgs", got \'sgd\''):
        S.invert(survey, observed, c0, wavelet, 1e-3, optimizer="sgd")
    with pytest.raises(ValueError, match=r'band_filter must be "causal" or "zero-phase", got \'linear\''):
        S.invert(survey, observed, c0, wavelet, 1e-3, band_filter="linear")
    with pytest.raises(ValueError, match=r"schedule must be one of \['constant', 'cosine'\], got 'linear'"):
        S.invert(survey, observed, c0, wavelet, 1e-3, schedule="linear")
    with pytest.raises(ValueError, match=r'schedule=\'cosine\' needs optimizer="adam" .*, got \'lbfgs\''):
        S.invert(survey, observed, c0, wavelet, 1e-3, schedule="cosine", optimizer="lbfgs")
    with pytest.raises(ValueError, match=r"misfit must be one of \['l2', 'normalized'\], got 'l1'"):
        S.invert(survey, observed, c0, wavelet, 1e-3, misfit="l1")


def test_mesh_axis_gradient_and_checkpoint_options():
    survey = _survey()
    wavelet = S.Wavelet.ricker(20.0, 1e-3, 150)
    c0 = jnp.full(GRID.shape, 2000.0)
    mesh = sciax.parallel.make_mesh("slab")
    with pytest.raises(ValueError, match=r"mesh axis 'w' does not exist; the mesh has axes \('x',\)"):
        S.model_shots(survey, c0, wavelet, 1e-3, mesh=mesh, axis="w")
    with pytest.raises(ValueError, match=r"mesh axis 'w' does not exist"):
        S.invert(survey, jnp.zeros((1, 151, 5)), c0, wavelet, 1e-3, mesh=mesh, axis="w")
    with pytest.raises(TypeError, match=r"mesh must be a jax.sharding.Mesh .*, got str"):
        S.model_shots(survey, c0, wavelet, 1e-3, mesh="x")
    with pytest.raises(ValueError, match=r'gradient must be "adjoint" or "autodiff", got \'exact\''):
        S.model_shots(survey, c0, wavelet, 1e-3, gradient="exact")
