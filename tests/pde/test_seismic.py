"""sciax.pde.seismic: shot modelling against the Leapfrog driver, adjoint gradients against finite
differences, vmap over shots, wavelets, misfits, preconditioning (float64)."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import scipy.signal

import sciax

S = sciax.pde.seismic
N, H, DT, F0, STEPS, WIDTH = 24, 10.0, 1e-3, 25.0, 100, 6
GRID = sciax.pde.Grid((N, N), (N * H, N * H))
SURVEY = S.Survey(GRID, [[7, 8], [7, 15]], [[7, j] for j in range(6, 18, 2)], f0=F0, bc=sciax.pde.CPML(WIDTH))
DEPTH = np.arange(N)[:, None] * np.ones((1, N))
# The largest velocity lies in the bottom absorbing layer, so the interior perturbations of the
# gradient check leave the CPML profiles (built from it, held fixed under differentiation) unchanged.
C = jnp.asarray(2000.0 + 300.0 * (DEPTH > 12) + 100.0 * np.sin(np.arange(N) / 4.0)[None, :] + 200.0 * (DEPTH >= N - 3))
WAVELET = S.Wavelet.ricker(F0, DT, STEPS, dtype=jnp.float64)
MODEL = eqx.filter_jit(lambda survey, c, wavelet: S.model_shots(survey, c, wavelet, DT, checkpoint=16))
MODEL_AUTODIFF = eqx.filter_jit(
    lambda survey, c, wavelet: S.model_shots(survey, c, wavelet, DT, checkpoint=16, gradient="autodiff")
)
C0 = C - 60.0 * jnp.asarray(np.exp(-((DEPTH - 13) ** 2 + (np.arange(N)[None] - 11) ** 2) / 12))
OBSERVED, ENERGY = eqx.filter_jit(lambda c: S.model_shots(SURVEY, c, WAVELET, DT, checkpoint=16, energy=True))(C)


@functools.cache
def _pullback(model):
    """The seismograms at `C0` and their pullback in `(c, wavelet)`, shared by the gradient tests."""
    return jax.vjp(lambda c, wavelet: model(SURVEY, c, wavelet), C0, WAVELET)


def test_model_shots_and_illumination_equal_leapfrog_simulate():
    # The Ricker wavelet injected by model_shots gives the seismograms of the Leapfrog driver, and the
    # illumination is the sum over shots and time steps of its squared pressure.
    zeros = jnp.zeros((N, N))
    ts = np.arange(STEPS + 1) * DT

    def simulate(source):
        sol = sciax.simulate(
            SURVEY.model,
            {"p": zeros, "v": zeros},
            ts,
            {"c": C, "source": source},
            method=sciax.pde.Leapfrog(DT),
            save=("p", "seismogram"),
        )
        return sol.ys["seismogram"], jnp.sum(sol.ys["p"][1:] ** 2, axis=0)

    traces, energy = jax.vmap(simulate)(SURVEY.sources)
    scale = float(jnp.max(jnp.abs(traces)))
    np.testing.assert_allclose(OBSERVED, traces, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(ENERGY, jnp.sum(energy, axis=0), rtol=0, atol=1e-12 * float(jnp.max(ENERGY)))


def test_vmap_over_shots_equals_loop_over_shots():
    for k, source in enumerate(np.asarray(SURVEY.sources)):
        one = S.Survey(GRID, [source], SURVEY.receivers, f0=F0, bc=sciax.pde.CPML(WIDTH))
        scale = float(jnp.max(jnp.abs(OBSERVED)))
        np.testing.assert_allclose(MODEL(one, C, WAVELET)[0], OBSERVED[k], rtol=0, atol=1e-12 * scale)


def test_adjoint_gradient_matches_finite_difference():
    rng = np.random.default_rng(1)
    direction = jnp.asarray(rng.standard_normal((N, N))) * SURVEY.interior_mask(jnp.float64)
    traces, pullback = _pullback(MODEL)
    eps = 1e-3  # m/s: the central difference's error, ~8e-2 eps^2 relative here, is ~1e-7
    plus, minus = MODEL(SURVEY, C0 + eps * direction, WAVELET), MODEL(SURVEY, C0 - eps * direction, WAVELET)
    for misfit in (S.l2_misfit, S.normalized_misfit):
        gradient, _ = pullback(jax.grad(misfit)(traces, OBSERVED))
        fd = (misfit(plus, OBSERVED) - misfit(minus, OBSERVED)) / (2 * eps)
        np.testing.assert_allclose(jnp.vdot(gradient, direction), fd, rtol=1e-6)


def test_adjoint_state_gradient_equals_autodiff():
    # The discrete adjoint (model_shots' custom VJP over the time loop) against JAX's reverse mode of
    # the same checkpointed loop, in the velocity and the wavelet; 100 steps in blocks of 16 leave a
    # partial last block.
    traces, adjoint = _pullback(MODEL)
    _, autodiff = _pullback(MODEL_AUTODIFF)
    cotangent = jax.grad(S.normalized_misfit)(traces, OBSERVED)
    leaves = jax.tree_util.tree_leaves
    for a, b in zip(leaves(adjoint(cotangent)), leaves(autodiff(cotangent)), strict=True):  # d/dc, d/dwavelet
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(b))))


def test_illumination_preconditioner_and_mute():
    mask = S.mute_mask(SURVEY, 3.0, jnp.float64)
    s = np.asarray(S.illumination_preconditioner(ENERGY, mask))
    # Normalised to 1 up to one rounding (XLA:CPU may divide by the maximum as a multiplication by its inverse).
    assert abs(s.max() - 1.0) <= np.finfo(np.float64).eps
    assert s[7, 8] == 0.0 and s[7, 10] == 0.0 and s[0, 0] == 0.0  # source, receiver, layer
    far = np.asarray(mask) == 1.0
    lit = np.asarray(ENERGY)[far]
    # Where nothing is muted the scaling is 1 / sqrt(E / max E + 0.01), up to its normalisation.
    expected = 1 / np.sqrt(lit / np.max(np.asarray(ENERGY * mask)) + 1e-2)
    np.testing.assert_allclose(s[far], expected / expected.max() * s[far].max(), rtol=1e-12)


def test_estimated_wavelet_recovers_the_source():
    # Data made with one wavelet; the wavelet estimated from synthetics of another in the same model.
    # Records long enough (0.25 s) for the waves to leave the box, so cutting them loses little.
    steps = 250
    reference = S.Wavelet.ricker(F0, DT, steps, dtype=jnp.float64)
    true = S.Wavelet(sciax.pde.ricker(jnp.arange(steps) * DT - 0.004, 18.0, 2e-3), DT)
    estimate = S.estimate_wavelet(MODEL(SURVEY, C, true), MODEL(SURVEY, C, reference), reference, damping=1e-8)
    # Only frequencies present in the reference wavelet survive: compare below 60 Hz.
    np.testing.assert_allclose(
        S.lowpass(estimate.samples, DT, 60.0),
        S.lowpass(true.samples, DT, 60.0),
        atol=0.02 * float(jnp.max(jnp.abs(true.samples))),
    )


def test_lowpass_keeps_low_and_removes_high_frequencies():
    t = np.arange(2000) * 1e-3
    low, high = np.sin(2 * np.pi * 5 * t), np.sin(2 * np.pi * 80 * t)
    out = np.asarray(S.lowpass(low + high, 1e-3, 30.0))
    middle = slice(500, 1500)  # away from the ends of the record
    np.testing.assert_allclose(out[middle], low[middle], atol=1e-2)


def test_causal_lowpass_is_scipys_butterworth_and_causal():
    # The filtered unit impulse is the filter's impulse response: zero before the impulse and, in
    # frequency, scipy's analog 8th-order Butterworth response with its corner at 0.7 f_max.
    dt, n, f_max, delay = 1e-3, 4000, 20.0, 500
    impulse = np.zeros(n)
    impulse[delay] = 1.0
    h = np.asarray(S.lowpass(jnp.asarray(impulse), dt, f_max, causal=True))
    assert np.max(np.abs(h[:delay])) < 1e-10 * np.max(np.abs(h))  # sampling the response: leaks 1e-12
    freqs = np.fft.rfftfreq(n, dt)
    b, a = scipy.signal.butter(8, 2 * np.pi * 0.7 * f_max, analog=True)
    _, expected = scipy.signal.freqs(b, a, worN=2 * np.pi * freqs)
    response = np.fft.rfft(np.roll(h, -delay))
    np.testing.assert_allclose(response, expected, atol=1e-10)


def test_causal_lowpass_of_the_wavelet_makes_the_lowpassed_seismograms():
    # A causal filter commutes with the (causal) modelling; the zero-phase one does not: its
    # response before t = 0 is cut from the wavelet.
    causal = MODEL(SURVEY, C, WAVELET.lowpass(40.0, causal=True))
    np.testing.assert_allclose(
        causal, S.lowpass(OBSERVED, DT, 40.0, axis=-2, causal=True), atol=1e-6 * np.max(np.abs(causal))
    )
    zero_phase = MODEL(SURVEY, C, WAVELET.lowpass(40.0))
    assert np.max(np.abs(zero_phase - S.lowpass(OBSERVED, DT, 40.0, axis=-2))) > 1e-3 * np.max(np.abs(zero_phase))


def test_normalized_misfit_values():
    rng = np.random.default_rng(0)
    d = jnp.asarray(rng.standard_normal((2, 50, 3)))
    assert float(S.normalized_misfit(3.0 * d, d)) == pytest.approx(0.0, abs=1e-10)
    assert float(S.normalized_misfit(-d, d)) == pytest.approx(2.0 * 6, rel=1e-12)
    angle = np.linspace(0, 2 * np.pi, 50, endpoint=False)
    s, cos = (jnp.asarray(f(angle))[None, :, None] for f in (np.sin, np.cos))
    assert float(S.normalized_misfit(s, cos)) == pytest.approx(1.0, abs=1e-12)  # orthogonal traces
    assert float(S.l2_misfit(d, 0 * d)) == pytest.approx(0.5 * float(jnp.sum(d**2)), rel=1e-14)


def test_lbfgs_first_step_moves_the_velocity_by_the_learning_rate():
    # invert rescales x and the misfit so that optax L-BFGS's first step (the gradient capped to
    # Euclidean norm 1) moves the velocity c = c_start + scale x by learning_rate m/s at most.
    from sciax.pde.seismic._invert import _Band, _lbfgs_scaling

    rng = np.random.default_rng(2)
    grad = jnp.asarray(rng.standard_normal((N, N)))
    band = _Band(OBSERVED, C0, jnp.asarray(rng.uniform(0.0, 40.0, (N, N))), WAVELET, jnp.asarray(7.0))
    scaled, alpha = _lbfgs_scaling(band, grad, 25.0)
    x = jnp.zeros((N, N))
    opt = optax.lbfgs(linesearch=None)
    step, _ = opt.update(alpha * grad / scaled.norm, opt.init(x), x)
    assert float(jnp.max(jnp.abs(scaled.scale * step))) == pytest.approx(25.0, rel=1e-12)


def test_cosine_schedule_is_optax_cosine_decay():
    # invert's schedule="cosine" scales Adam's update in iteration k of a band of `count` as
    # optax.cosine_decay_schedule(learning_rate, count) would set Adam's learning rate.
    from sciax.pde.seismic._invert import _step_factor

    for count in (1, 5, 12):
        expected = optax.cosine_decay_schedule(1.0, count)
        for k in range(count):
            assert _step_factor("cosine", k, count) == pytest.approx(float(expected(k)), rel=1e-6)
            assert _step_factor("constant", k, count) == 1.0
