"""Seismic imaging (`sciax.pde.seismic`): full-waveform inversion with `AcousticWave`.

`Survey` (the model and its shots: sources and receivers at any grid points outside the
absorbing layers), `Wavelet` (a source time function sampled at the modelling step; Ricker,
low-pass, `estimate_wavelet` by least squares), `model_shots` (every shot's seismograms,
batched with `vmap` or split over a device mesh, gradients by the discrete adjoint-state method
from checkpoints), misfits (`l2_misfit`, `normalized_misfit`),
preconditioning (`mute_mask`, `illumination_preconditioner`), and `invert` (frequency
continuation, velocity bounds by projection, Adam or L-BFGS), returning an `InversionResult`.
"""

from ._invert import InversionResult, invert
from ._misfit import l2_misfit, normalized_misfit
from ._modelling import model_shots
from ._precondition import illumination_preconditioner, mute_mask
from ._survey import Survey
from ._wavelet import Wavelet, estimate_wavelet, lowpass

__all__ = [
    "InversionResult",
    "Survey",
    "Wavelet",
    "estimate_wavelet",
    "illumination_preconditioner",
    "invert",
    "l2_misfit",
    "lowpass",
    "model_shots",
    "mute_mask",
    "normalized_misfit",
]
