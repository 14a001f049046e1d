"""Shot modelling for inversion: the seismograms of every shot of a `Survey` for a velocity model
and a `Wavelet`, batched over shots with `vmap`, checkpointed in time for reverse mode."""

from __future__ import annotations

import math
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec
from jaxtyping import Array, ArrayLike, Float

from ._adjoint import adjoint_shot, shot_forward
from ._survey import Survey
from ._wavelet import Wavelet


def check_step(survey: Survey, wavelet: Wavelet, dt: float, c_max: float | None = None) -> None:
    """`ValueError` if `wavelet` is sampled at another step than `dt`, or `dt` exceeds the stable
    leapfrog step of the velocity `c_max` (m/s; skipped if `None`)."""
    if not math.isclose(wavelet.dt, dt, rel_tol=1e-9):
        raise ValueError(
            f"model_shots: the wavelet is sampled at dt={wavelet.dt:g} s, but the modelling step is "
            f"dt={dt:g} s; resample the wavelet"
        )
    if c_max is not None:
        limit = float(survey.model.leapfrog_stable_dt({"c": jnp.asarray(c_max)}))
        if dt > limit:
            raise ValueError(
                f"model_shots: dt={dt:g} s exceeds the stable leapfrog step {limit:.6g} s for velocity {c_max:g} m/s"
            )


def _shot(survey: Survey, c, source, samples, dt: float, checkpoint: int, energy: bool):
    """One shot for JAX's reverse mode (blocks under `jax.checkpoint`): `(seismogram (T + 1, R),
    source-wavefield energy sum_t p^2 or None)`."""
    traces, acc, _ = shot_forward(survey.model, dt, checkpoint, energy, c, samples, source, remat=True)
    return traces, (acc if energy else None)


def model_shots(
    survey: Survey,
    c: Float[ArrayLike, "..."],
    wavelet: Wavelet,
    dt: float,
    *,
    checkpoint: int = 32,
    energy: bool = False,
    gradient: str = "adjoint",
    mesh: Mesh | None = None,
    axis: str | Sequence[str] | None = None,
) -> Float[Array, "shots T1 R"] | tuple[Float[Array, "shots T1 R"], Float[Array, "..."]]:
    """The seismograms of every shot of `survey` in the velocity model `c` (m/s, `grid.shape`).

    Each shot injects `4 pi c^2 wavelet.samples[k]` at its source on the step from `t = k dt`
    (as `AcousticWave` does for its Ricker source; the same seismograms as `sciax.simulate`
    with `Leapfrog(dt)` when the wavelet is that Ricker wavelet) and records the pressure at
    the receivers at `t = 0, dt, ..., n dt` (`n = wavelet.n_steps`): shape
    `(n_shots, n + 1, n_receivers)`. Shots run batched (`jax.vmap`); the time loop is
    checkpointed in blocks of `checkpoint` steps, so reverse-mode memory is about
    `n / checkpoint + checkpoint` wavefields per shot. Differentiable in `c` and the wavelet.

    `gradient="adjoint"` (default): reverse mode runs the discrete adjoint-state method (one
    forward pass keeping the state, pressure at two times and CPML memory, every `checkpoint`
    steps; then per step one recomputed step and one adjoint step, one block's `checkpoint`
    divergence fields held at a time; the adjoint step written out, not JAX's transpose): the same
    gradient as autodiff to round-off, measured at 3.6-4.0x the forward time (500 x 500, 2,000
    steps, float32, 2-core CPU at load 4-5, three runs) against 5.0-5.7x for autodiff in the same
    runs. A single shot (per device) runs unbatched. It is a
    `jax.custom_vjp`, so forward mode (`jax.jvp`) needs `"autodiff"`: JAX's reverse (and
    forward) mode of the checkpointed loop.

    `energy=True` also returns the source-wavefield energy `sum_shots sum_t p^2` (grid-shaped,
    not differentiated), the illumination that `illumination_preconditioner` uses.

    `mesh` (a `jax.sharding.Mesh`, e.g. `sciax.parallel.make_mesh()`): the shots are split over
    the devices of the mesh axes `axis` (default all), the model and wavelet replicated; each
    device runs its shots batched. The seismograms come back as one array sharded along the shot
    axis, the energy summed over devices, and a gradient of a misfit over all shots is summed over
    devices by reverse mode (the transpose of the replicated model). The same values as without
    `mesh`; the shot count must be divisible by the devices along `axis`.

    Raises `ValueError` if the wavelet's `dt` differs from `dt`, (concrete `c`) if `dt` is not
    stable, or for a mesh axis that does not exist or does not divide the shots.
    """
    c = jnp.asarray(c)
    if c.shape != survey.model.grid.shape:
        raise ValueError(f"model_shots: c has shape {c.shape}, but the grid has shape {survey.model.grid.shape}")
    if not (isinstance(checkpoint, int) and checkpoint >= 1):
        raise ValueError(f"model_shots: checkpoint must be an int >= 1 (steps per block), got {checkpoint!r}")
    if gradient not in ("adjoint", "autodiff"):
        raise ValueError(f'model_shots: gradient must be "adjoint" or "autodiff", got {gradient!r}')
    check_step(survey, wavelet, dt, None if isinstance(c, jax.core.Tracer) else float(np.asarray(c).max()))
    axes = None if mesh is None else check_mesh(survey, mesh, axis)
    return _model(survey, c, wavelet.samples.astype(c.dtype), dt, checkpoint, energy, gradient, mesh, axes)


def check_mesh(survey: Survey, mesh, axis) -> tuple[str, ...]:
    """The mesh axes the shots are split over, checked against the mesh and the shot count."""
    if not isinstance(mesh, Mesh):
        raise TypeError(
            "model_shots: mesh must be a jax.sharding.Mesh (e.g. sciax.parallel.make_mesh()), got "
            f"{type(mesh).__name__}"
        )
    axes = tuple(mesh.axis_names) if axis is None else ((axis,) if isinstance(axis, str) else tuple(axis))
    for a in axes:
        if a not in mesh.axis_names:
            raise ValueError(f"model_shots: mesh axis {a!r} does not exist; the mesh has axes {tuple(mesh.axis_names)}")
    devices = math.prod(mesh.shape[a] for a in axes)
    if survey.n_shots % devices:
        raise ValueError(
            f"model_shots: {survey.n_shots} shots are not divisible by the {devices} devices of mesh axes {axes}"
        )
    return axes


# Compiled once per survey, shapes, step and options: repeated calls (data, gathers before and
# after an inversion) reuse it.
@eqx.filter_jit
def _model(survey, c, samples, dt, checkpoint, energy, gradient, mesh, axes):
    if gradient == "adjoint":
        shot = adjoint_shot(survey, dt, checkpoint, energy)
        one = lambda s, c, samples: shot(c, samples, s)  # noqa: E731
    else:
        one = lambda s, c, samples: _shot(survey, c, s, samples, dt, checkpoint, energy)  # noqa: E731
    batched = jax.vmap(one, in_axes=(0, None, None))

    def shots(sources, c, samples):
        # One shot (per device) runs unbatched: batched, its source index makes the injection a
        # scatter, measured 15-30 % slower per step on XLA:CPU.
        if sources.shape[0] != 1:
            return batched(sources, c, samples)
        return jax.tree_util.tree_map(lambda x: None if x is None else x[None], one(sources[0], c, samples))

    if mesh is None:
        traces, acc = shots(survey.sources, c, samples)
        return (traces, jnp.sum(acc, axis=0)) if energy else traces

    def local(sources, c, samples):  # this device's shots; the energy summed over all devices
        traces, acc = shots(sources, c, samples)
        return traces, (jax.lax.psum(jnp.sum(acc, axis=0), axes) if energy else acc)

    spread, whole = PartitionSpec(axes), PartitionSpec()
    traces, acc = jax.shard_map(
        local,
        mesh=mesh,
        in_specs=(spread, whole, whole),
        out_specs=(spread, whole if energy else spread),
        check_vma=False,
    )(survey.sources, c, samples)
    return (traces, acc) if energy else traces
