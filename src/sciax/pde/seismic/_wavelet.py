"""`Wavelet`: a source time function sampled at the modelling step, its low-pass filter, and its
least-squares estimation from recorded data."""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from ..waves import ricker

# Butterworth order of the causal low-pass, and its half-power corner as a fraction of f_max (about
# where the zero-phase cosine taper passes half power, 0.69 f_max); the gain at f_max is 0.06.
_BUTTERWORTH_ORDER = 8
_CORNER = 0.7


def _butterworth(freqs: np.ndarray, f_corner: float) -> np.ndarray:
    """The analog Butterworth low-pass response at `freqs` (Hz): causal, gain 1 at 0 Hz."""
    k = np.arange(1, _BUTTERWORTH_ORDER + 1)
    poles = np.exp(1j * np.pi * (2 * k + _BUTTERWORTH_ORDER - 1) / (2 * _BUTTERWORTH_ORDER))
    s = 1j * freqs[:, None] / f_corner
    return np.prod(-poles) / np.prod(s - poles, axis=1)


def lowpass(
    x: Float[ArrayLike, "... T"], dt: float, f_max: float, axis: int = -1, *, causal: bool = False
) -> Float[Array, "... T"]:
    """Low-pass filter along `axis` (time, step `dt` s, the record starting at `t = 0`), zero-padded
    (to twice the length, or longer for the causal filter's tail) so the filter does not wrap the
    end of a record onto its start. Linear and differentiable.

    `causal=False`: zero phase, the spectrum times a cosine taper falling from 1 at `f_max / 2` to 0
    at `f_max` (Hz). Its response reaches before `t = 0`, which the record cuts: filtering a wavelet
    this way does not filter the seismograms it makes (at 3 Hz in the Marmousi-like model of
    `notebooks/full_waveform_inversion.ipynb`, the true model's misfit to the filtered data was as
    large as a smooth model's), so filter the modelled seismograms instead, as `invert` does.

    `causal=True`: an 8th-order Butterworth filter (half power at `0.7 f_max`, gain 0.06 at
    `f_max`; analog response sampled in frequency, which is causal to round-off). A causal
    filter commutes with the causal wave modelling, so the seismograms of a filtered wavelet are
    the filtered seismograms (what frequency continuation in `invert` needs). It delays the
    signal by about one period of its corner.
    """
    x = jnp.asarray(x)
    n = x.shape[axis]
    if causal:
        # Padded until the slowest pole has decayed by 1e-8, so the response's tail does not wrap.
        rate = 2 * np.pi * _CORNER * f_max * np.sin(np.pi / (2 * _BUTTERWORTH_ORDER))
        length = max(2 * n, n + int(np.ceil(np.log(1e8) / (rate * dt))))
        response = _butterworth(np.fft.rfftfreq(length, dt), _CORNER * f_max)
        return apply_response(x, jnp.asarray(response, jnp.result_type(x.dtype, jnp.complex64)), axis, length)
    return apply_response(x, zero_phase_response(n, dt, f_max, x.dtype), axis)


def zero_phase_response(n: int, dt: float, f_max: float, dtype=jnp.float32) -> Float[Array, " F"]:
    """The zero-phase taper of `lowpass(causal=False)` for records of `n` samples (step `dt` s), on
    the `n + 1` frequencies of the real FFT of length `2 n` (the zero padding)."""
    freqs = np.fft.rfftfreq(2 * n, dt)
    ramp = np.clip((freqs - 0.5 * f_max) / (0.5 * f_max), 0.0, 1.0)
    return jnp.asarray(0.5 * (1 + np.cos(np.pi * ramp)), dtype)


def apply_response(
    x: Float[Array, "... T"], response: Array, axis: int = -1, length: int | None = None
) -> Float[Array, "... T"]:
    """`x` (time along `axis`) times the frequency `response`, given on the real FFT's frequencies
    of the record zero-padded to `length` (default `2 (len(response) - 1)`), cut back to `x`'s length."""
    length = 2 * (response.shape[0] - 1) if length is None else length
    shape = [1] * x.ndim
    shape[axis] = response.shape[0]
    spectrum = jnp.fft.rfft(x, length, axis=axis) * response.reshape(shape)
    out = jnp.fft.irfft(spectrum, length, axis=axis)
    return jnp.take(out, jnp.arange(x.shape[axis]), axis=axis).astype(x.dtype)


class Wavelet(eqx.Module):
    """A source time function: `samples[k]` is its value at `t = k dt` (s); the amplitude injected
    at a source is `4 pi c^2 samples[k]`, as for `AcousticWave`'s Ricker source.

    **Fields:** `samples` (shape `(n_steps,)`), `dt` (s, static: modelling checks it against its step).
    """

    samples: Float[Array, " T"]
    dt: float = eqx.field(static=True)

    def __init__(self, samples: ArrayLike, dt: float):
        samples = jnp.asarray(samples)
        if samples.ndim != 1 or samples.shape[0] < 2:
            raise ValueError(f"Wavelet: samples must be a 1-D array of at least 2 values, got shape {samples.shape}")
        if not (isinstance(dt, (int, float, np.floating)) and dt > 0):
            raise ValueError(f"Wavelet: dt must be a number > 0 (s), got {dt!r}")
        self.samples, self.dt = samples, float(dt)

    @classmethod
    def ricker(cls, f0: float, dt: float, n_steps: int, amplitude: float = 1e-3, dtype=jnp.float32) -> Wavelet:
        """The Ricker wavelet of `sciax.pde.ricker` (peak `f0` Hz, delay `1.2 / f0`), `n_steps` samples."""
        return cls(ricker(jnp.arange(n_steps) * dt, f0, amplitude).astype(dtype), dt)

    @property
    def n_steps(self) -> int:
        return int(self.samples.shape[0])

    def lowpass(self, f_max: float, *, causal: bool = False) -> Wavelet:
        """This wavelet through `lowpass(..., f_max, causal=causal)` (Hz)."""
        return Wavelet(lowpass(self.samples, self.dt, f_max, causal=causal), self.dt)

    def peak_frequency(self) -> float:
        """The frequency (Hz) of the largest amplitude of the spectrum."""
        spectrum = np.abs(np.fft.rfft(np.asarray(self.samples), 4 * self.n_steps))
        return float(np.fft.rfftfreq(4 * self.n_steps, self.dt)[np.argmax(spectrum)])


def estimate_wavelet(
    observed: Float[ArrayLike, "... T R"],
    synthetic: Float[ArrayLike, "... T R"],
    reference: Wavelet,
    damping: float = 1e-4,
) -> Wavelet:
    """Least-squares source wavelet from recorded data (Pratt 1999, Geophysics 64, 888, eq. 17).

    `synthetic`: the seismograms that `reference` makes in a model close to the
    true one (same shape as `observed`: `(..., time, receiver)`, time step
    `reference.dt`). In each frequency, the scalar `W(f)` minimising
    `sum |W S_ref / W_ref - D|^2` over shots and receivers is
    `W_ref sum(conj(S) D) / (sum |S|^2 + damping * max |S|^2)` (the damping keeps
    frequencies with no energy at zero). Zero-padded to twice the length.
    Differentiable in `observed`.
    """
    observed, synthetic = jnp.asarray(observed), jnp.asarray(synthetic)
    if observed.shape != synthetic.shape or observed.ndim < 2:
        raise ValueError(
            f"estimate_wavelet: observed and synthetic must share a shape (..., time, receiver), got "
            f"{observed.shape} and {synthetic.shape}"
        )
    n = observed.shape[-2]
    if n != reference.n_steps and n != reference.n_steps + 1:
        raise ValueError(f"estimate_wavelet: {n} time samples, but the reference wavelet has {reference.n_steps}")
    spec_d = jnp.fft.rfft(observed, 2 * n, axis=-2)
    spec_s = jnp.fft.rfft(synthetic, 2 * n, axis=-2)
    axes = tuple(a for a in range(observed.ndim) if a != observed.ndim - 2)
    cross = jnp.sum(jnp.conj(spec_s) * spec_d, axis=axes)
    power = jnp.sum(jnp.abs(spec_s) ** 2, axis=axes)
    ratio = cross / (power + damping * jnp.max(power))
    w_ref = jnp.fft.rfft(reference.samples, 2 * n)
    samples = jnp.fft.irfft(w_ref * ratio, 2 * n)[: reference.n_steps]
    return Wavelet(samples.astype(reference.samples.dtype), reference.dt)
