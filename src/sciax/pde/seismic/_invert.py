"""`invert`: full-waveform inversion of a `Survey`'s seismograms for the velocity, with frequency
continuation, illumination preconditioning, velocity bounds and Adam or L-BFGS."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh
from jaxtyping import Array, ArrayLike, Float

from ._misfit import MISFITS
from ._modelling import check_mesh, check_step, model_shots
from ._precondition import illumination_preconditioner, mute_mask
from ._survey import Survey
from ._wavelet import Wavelet, apply_response, lowpass, zero_phase_response


class InversionResult(NamedTuple):
    """What `invert` returns: the final velocity `c` (m/s) and, one entry per iteration (plus the
    start), the `misfit` of the band then inverted (at the model before the iteration's update),
    the `model_error` (RMS velocity error outside the absorbing layers, m/s; NaN without `c_true`)
    and the `band` (its low-pass corner, Hz, `inf` for the full band)."""

    c: Float[Array, "..."]
    misfit: np.ndarray
    model_error: np.ndarray
    band: np.ndarray


def _check_bounds(bounds, c0) -> tuple[float, float]:
    if bounds is None:
        return -np.inf, np.inf
    low, high = (float(b) for b in bounds)
    c_min, c_max = float(jnp.min(c0)), float(jnp.max(c0))
    if not low < high:
        raise ValueError(f"invert: bounds must be (lower, upper) with lower < upper (m/s), got {bounds!r}")
    if c_min < low or c_max > high:
        raise ValueError(
            f"invert: bounds ({low:g}, {high:g}) m/s exclude the starting model, whose velocities span "
            f"{c_min:g}..{c_max:g} m/s"
        )
    return low, high


# Module-level optimisers with unit step (the learning rate is folded into the preconditioner), so
# the compiled update and gradient are shared by every band and every call.
_OPTIMIZERS = {"adam": optax.adam(1.0), "lbfgs": optax.lbfgs()}


def _optimizer(name: str):
    if name not in _OPTIMIZERS:
        raise ValueError(f'invert: optimizer must be "adam" or "lbfgs", got {name!r}')
    return _OPTIMIZERS[name]


def invert(
    survey: Survey,
    observed: Float[ArrayLike, "shots T1 R"],
    c0: Float[ArrayLike, "..."],
    wavelet: Wavelet,
    dt: float,
    *,
    iterations: int | tuple[int, ...] = 20,
    bands: tuple[float | None, ...] = (None,),
    band_filter: str = "causal",
    misfit: str = "l2",
    optimizer: str = "adam",
    learning_rate: float = 20.0,
    schedule: str = "constant",
    bounds: tuple[float, float] | None = None,
    mute_radius: float = 3.0,
    precondition: bool = True,
    stabilisation: float = 1e-2,
    c_true: Float[ArrayLike, "..."] | None = None,
    checkpoint: int = 32,
    mesh: Mesh | None = None,
    axis: str | Sequence[str] | None = None,
    verbose: bool = False,
) -> InversionResult:
    """Full-waveform inversion of `observed` (`(n_shots, T + 1, n_receivers)`, as `model_shots`
    makes with `wavelet` and step `dt`) for the velocity, from the starting model `c0` (m/s).

    For each band `f` of `bands` (frequency continuation; `None` = the full band), the data
    are low-passed to `f` (`lowpass`, see `band_filter`), the source illumination of the current
    model is computed, and `iterations` (one count, or one per band) steps of `optimizer` minimise
    `misfit` (`"l2"` or `"normalized"`, divided by its value at the band's start) over `x` in
    `c = c_band + s x`: `s` the illumination preconditioner (ones if `precondition=False`) muted in
    the absorbing layers and within `mute_radius` points of sources and receivers (`stabilisation`:
    see `illumination_preconditioner`), scaled to `learning_rate` m/s. After every step `c` is
    projected onto `bounds` (m/s) and `x` follows it.

    `band_filter`: both constructions are exact (in the true model each band's misfit is zero to
    round-off). `"causal"` (default): an 8th-order Butterworth filter applied to the data and to
    the wavelet, whose seismograms are then the band's data (a causal filter commutes with the
    modelling). `"zero-phase"`: the cosine
    taper applied to the data and to the modelled seismograms inside the misfit (not to the
    wavelet: its response before `t = 0` would be cut from the wavelet but not from the data, a
    misfit no model fits, measured as large as a smooth starting model's at 3 Hz in the
    Marmousi-like section of `notebooks/full_waveform_inversion.ipynb`); the full band is modelled.
    The causal filter delays a band by about one period of its corner, a large part of a short
    record at low corners: in tests/pde/test_seismic_inversion.py (0.3 s) causal bands from
    10 Hz gave 53.6 -> 48.3 m/s, from 20 Hz 53.6 -> 30.2 m/s. In the notebook's first section
    (100 x 100, 0.7 s, 60 Adam steps) causal bands from 10 Hz gave 137.4 -> 61.6 m/s, the exact
    zero-phase filter 72.8 m/s (bands 15, 25 Hz and all).

    `schedule` (Adam only): `"constant"` steps, or `"cosine"`: in iteration `k` of a band of
    `n` the step is `learning_rate * (1 + cos(pi k / n)) / 2` (optax's `cosine_decay_schedule`),
    restarted in every band.

    `optimizer`: `"adam"` (optax; each step moves a cell by about `s * learning_rate` m/s)
    or `"lbfgs"` (optax L-BFGS with its zoom line search, restarted in every band; `x` is scaled so
    that its first step moves the velocity by at most `learning_rate` m/s, the line search's value
    and gradient are reused by the next iteration; the projection makes it an approximate
    projected method). Shots run batched with `jax.vmap`, and with `mesh` split over
    the devices of its axes `axis` (see `model_shots`); gradients by the adjoint-state method
    of `model_shots`.

    Raises `ValueError` for bounds that exclude `c0`, an unknown option or a schedule with L-BFGS,
    a wavelet sampled at another `dt`, an unstable `dt` at the upper bound (or `c0`'s largest
    velocity), data of the wrong shape;
    warns below 5 grid points per minimum wavelength at the wavelet's peak frequency.
    Reference: Virieux & Operto (2009), Geophysics 74, WCC1 (the workflow).
    """
    c0 = jnp.asarray(c0)
    observed = jnp.asarray(observed, c0.dtype)
    shape = (survey.n_shots, wavelet.n_steps + 1, len(survey.receivers))
    if observed.shape != shape:
        raise ValueError(
            f"invert: observed must have shape (shots, steps + 1, receivers) = {shape}, got {observed.shape}"
        )
    if c0.shape != survey.model.grid.shape:
        raise ValueError(f"invert: c0 has shape {c0.shape}, but the grid has shape {survey.model.grid.shape}")
    if misfit not in MISFITS:
        raise ValueError(f"invert: misfit must be one of {sorted(MISFITS)}, got {misfit!r}")
    _optimizer(optimizer)
    if band_filter not in ("causal", "zero-phase"):
        raise ValueError(f'invert: band_filter must be "causal" or "zero-phase", got {band_filter!r}')
    _check_schedule(schedule, optimizer)
    low, high = _check_bounds(bounds, c0)
    check_step(survey, wavelet, dt, high if np.isfinite(high) else float(jnp.max(c0)))
    survey.check_sampling(c0, wavelet.peak_frequency())
    if mesh is not None:
        check_mesh(survey, mesh, axis)
    counts = (iterations,) * len(bands) if isinstance(iterations, int) else tuple(iterations)
    if len(counts) != len(bands):
        raise ValueError(f"invert: iterations gives {len(counts)} counts for {len(bands)} bands")

    interior = survey.interior_mask(bool)
    error = (
        (lambda c: float(jnp.sqrt(jnp.mean((c - c_true)[interior] ** 2))))
        if c_true is not None
        else (lambda c: float("nan"))
    )
    mask = mute_mask(survey, mute_radius, c0.dtype)
    c = c0
    history = {"misfit": [], "model_error": [error(c)], "band": []}
    for f_max, count in zip(bands, counts):
        band_wavelet, band_data, response = _band(observed, wavelet, dt, f_max, band_filter)
        c = _invert_band(
            survey,
            (band_data, response),
            c,
            band_wavelet,
            dt,
            count,
            misfit,
            optimizer,
            (learning_rate, schedule),
            (low, high),
            mask,
            stabilisation if precondition else None,
            (checkpoint, mesh, axis),
            history,
            error,
            verbose,
            np.inf if f_max is None else f_max,
        )
    misfits = history["misfit"]
    return InversionResult(c, np.asarray(misfits), np.asarray(history["model_error"]), np.asarray(history["band"]))


def _band(observed, wavelet: Wavelet, dt: float, f_max: float | None, band_filter: str):
    """One band's wavelet, data and (zero-phase filter) the response that filters the modelled
    seismograms in the misfit. Both constructions are exact: the true model makes the band's data.
    The causal filter commutes with the causal modelling, so it filters the wavelet; the zero-phase
    filter's response before t = 0 would be cut from a filtered wavelet, so the full wavelet is
    modelled and its seismograms filtered like the data."""
    if f_max is None:
        return wavelet, observed, None
    if band_filter == "causal":
        return wavelet.lowpass(f_max, causal=True), lowpass(observed, dt, f_max, axis=-2, causal=True), None
    response = zero_phase_response(observed.shape[-2], dt, f_max, observed.dtype)
    return wavelet, apply_response(observed, response, axis=-2), response


SCHEDULES = ("constant", "cosine")


def _check_schedule(schedule: str, optimizer: str) -> None:
    if schedule not in SCHEDULES:
        raise ValueError(f"invert: schedule must be one of {list(SCHEDULES)}, got {schedule!r}")
    if schedule != "constant" and optimizer != "adam":
        raise ValueError(
            f'invert: schedule={schedule!r} needs optimizer="adam" (L-BFGS picks its steps), got {optimizer!r}'
        )


def _step_factor(schedule: str, it: int, count: int) -> float:
    """Adam's step in iteration `it` of a band of `count`, relative to `learning_rate`: constant,
    or a half cosine from 1 towards 0 (Loshchilov & Hutter 2017, SGDR, without restarts)."""
    if schedule == "cosine":
        return 0.5 * (1.0 + np.cos(np.pi * it / count))
    return 1.0


class _Band(NamedTuple):
    """What one band's misfit reads (arrays only; the survey and options are passed beside it);
    `response`: the zero-phase filter applied to the modelled seismograms (None: unfiltered)."""

    data: Array
    c_start: Array
    scale: Array
    wavelet: Wavelet
    norm: Array
    response: Array | None = None


def _shots(survey, c, wavelet, dt, shots, energy=False):
    """`model_shots` with `shots = (checkpoint, mesh, axis)`."""
    checkpoint, mesh, axis = shots
    return model_shots(survey, c, wavelet, dt, checkpoint=checkpoint, energy=energy, mesh=mesh, axis=axis)


def _loss(x, band: _Band, survey, dt, shots, misfit):
    c = band.c_start + band.scale * x
    synthetic = _shots(survey, c, band.wavelet, dt, shots)
    if band.response is not None:
        synthetic = apply_response(synthetic, band.response, axis=-2)
    return MISFITS[misfit](synthetic, band.data) / band.norm


@eqx.filter_jit
def _value_and_grad(x, band, survey, dt, shots, misfit):
    return jax.value_and_grad(_loss)(x, band, survey, dt, shots, misfit)


@eqx.filter_jit
def _update(x, state, value, grad, factor, band, survey, dt, shots, misfit, optimizer):
    opt = _OPTIMIZERS[optimizer]
    if optimizer == "adam":
        updates, state = opt.update(grad, state, x)
        # Adam's step is proportional to its learning rate: the schedule scales the update.
        updates = factor * updates
    else:
        value_fn = lambda y: _loss(y, band, survey, dt, shots, misfit)  # noqa: E731
        updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=value_fn)
    return optax.apply_updates(x, updates), state


@eqx.filter_jit
def _energy(survey, c, wavelet, dt, shots):
    return _shots(survey, c, wavelet, dt, shots, energy=True)


def _invert_band(
    survey,
    data,
    c_start,
    wavelet,
    dt,
    count,
    misfit,
    optimizer,
    step,
    bounds,
    mask,
    stabilisation,
    shots,
    history,
    error,
    verbose,
    f_max,
):
    low, high = bounds
    learning_rate, schedule = step
    data, response = data
    if stabilisation is not None:
        _, energy = _energy(survey, c_start, wavelet, dt, shots)
        scale = learning_rate * illumination_preconditioner(energy, mask, stabilisation)
    else:
        scale = learning_rate * mask
    x = jnp.zeros_like(c_start)
    band = _Band(data, c_start, scale, wavelet, jnp.ones((), c_start.dtype), response)
    first, grad = _value_and_grad(x, band, survey, dt, shots, misfit)
    band = band._replace(norm=jnp.maximum(first, jnp.finfo(c_start.dtype).tiny))
    alpha = 1.0
    if optimizer == "lbfgs":
        band, alpha = _lbfgs_scaling(band, grad, learning_rate)
    state = _optimizer(optimizer).init(x)
    options = (survey, dt, shots, misfit)
    # The first iteration's value and gradient at x = 0 in the band's (rescaled) variables.
    reuse = (first / band.norm, alpha * grad / band.norm)
    for it in range(count):
        value, grad = reuse if reuse is not None else _value_and_grad(x, band, *options)
        factor = jnp.asarray(_step_factor(schedule, it, count), x.dtype)
        x_new, state = _update(x, state, value, grad, factor, band, *options, optimizer)
        # Projection onto the bounds, carried back to x where the scale moves c.
        free = band.c_start + band.scale * x_new
        c = jnp.clip(free, low, high)
        moved = c != free
        lit = band.scale > 0
        x = jnp.where(moved, jnp.where(lit, (c - band.c_start) / jnp.where(lit, band.scale, 1), 0.0), x_new)
        # L-BFGS's line search ends with the value and gradient at its accepted point: reused
        # unless the projection moved it.
        reuse = None
        if optimizer == "lbfgs" and not bool(jnp.any(moved)):
            reuse = (optax.tree_utils.tree_get(state, "value"), optax.tree_utils.tree_get(state, "grad"))
        history["misfit"].append(float(value * band.norm))
        history["model_error"].append(error(c))
        history["band"].append(f_max)
        if verbose:
            print(
                f"band {f_max:6.1f} Hz  iteration {it:3d}  misfit {float(value * band.norm):.4e}  "
                f"velocity RMS error {history['model_error'][-1]:.2f} m/s",
                flush=True,
            )
    return jnp.clip(band.c_start + band.scale * x, low, high)


def _lbfgs_scaling(band: _Band, grad, learning_rate: float) -> tuple[_Band, Array]:
    """Rescale `x` and the misfit so that L-BFGS's first step (unit step along the gradient of
    Euclidean norm 1, as optax takes it) moves the velocity by at most `learning_rate` m/s: without
    it, the unit-norm step spread over every cell moves each by a fraction of a m/s."""
    tiny = jnp.finfo(grad.dtype).tiny
    g_norm = jnp.maximum(jnp.sqrt(jnp.sum(grad**2)), tiny)
    alpha = learning_rate * g_norm / jnp.maximum(jnp.max(jnp.abs(band.scale * grad)), tiny)
    # The gradient in the rescaled x is alpha * grad / norm: its norm is 1 with this norm.
    return band._replace(scale=alpha * band.scale, norm=alpha * g_norm), alpha
