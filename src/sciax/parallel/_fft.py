"""Distributed real FFT on a `ShardedGrid`, by transposes with `lax.all_to_all` (no gathering).

Layout: the spectral array is the rfft layout of `sciax.pde.spectral` with the
same global shape as on one device and the same block decomposition as the
physical field, so every Fourier symbol, mask and stepper works unchanged.

- 2-D/3-D grids (slab: x sharded; pencil: x and y of a 3-D grid sharded): the
  last axis stays whole. Its real FFT is local; each sharded axis is then made
  whole by an `all_to_all` that splits the (zero-padded) last axis instead, is
  transformed, and is transposed back. Two `all_to_all` per sharded axis.
- 1-D grids (x sharded over `P` devices, `n` divisible by `P^2`): the four-step
  algorithm: a length-`P` transform across devices, twiddle factors, a local
  length-`n/P` transform, and a transpose from the cyclic to the block order.
  The rfft half of the spectrum is sliced out in the global view.

Any other decomposition (a sharded last axis on a multi-dimensional grid) is
refused by `check_fft_decomposition`. Differentiable (all_to_all transposes
to all_to_all); float64 results agree with `jnp.fft` to round-off.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

from ..grid import fourier
from ._sharded_grid import ShardedGrid


def check_fft_decomposition(grid: ShardedGrid, what: str) -> None:
    """`ValueError` unless the distributed FFT can transform fields on `grid`."""
    sharded = [i for i, a in enumerate(grid.names) if a is not None and grid.sizes[i] > 1]
    if not sharded:
        return
    if grid.ndim == 1:
        p = grid.sizes[0]
        if grid.shape[0] % (p * p):
            raise ValueError(
                f"{what}: the distributed 1-D FFT needs the {grid.shape[0]} grid points divisible by the square of "
                f"the {p} devices ({p * p}); use a grid size that is a multiple of {p * p}"
            )
        return
    if grid.names[-1] is not None and grid.sizes[-1] > 1:
        raise ValueError(
            f"{what}: the distributed FFT cannot handle a sharded last grid axis ({grid.dims[-1]!r}, mesh axis "
            f"{grid.names[-1]!r}) on a {grid.ndim}-D grid: that axis holds the real FFT and must stay whole. "
            f"Shard the leading axes instead (slab: x; pencil: x and y of a 3-D grid)"
        )


def _helper_length(grid: ShardedGrid) -> int:
    """The rfft length of the last axis, padded so that every mesh size in use divides it."""
    half = grid.shape[-1] // 2 + 1
    step = math.lcm(*grid.sizes)
    return -(-half // step) * step


def _pad_last(x, length: int):
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, length - x.shape[-1])])


def _transposed(x, axis: int, name: str, fn):
    """Apply `fn` along `axis` (split over mesh axis `name`) by swapping it with the last axis."""
    x = lax.all_to_all(x, name, split_axis=x.ndim - 1, concat_axis=axis, tiled=True)
    x = fn(x, axis=axis)
    return lax.all_to_all(x, name, split_axis=axis, concat_axis=x.ndim - 1, tiled=True)


def _sharded_axes(grid: ShardedGrid, batch_ndim: int):
    return [(batch_ndim + i, a) for i, a in enumerate(grid.names) if a is not None and grid.sizes[i] > 1]


def _forward_nd(grid: ShardedGrid, batch_ndim: int, x):
    x = _pad_last(jnp.fft.rfft(x, axis=-1), _helper_length(grid))
    for axis, name in _sharded_axes(grid, batch_ndim):
        x = _transposed(x, axis, name, jnp.fft.fft)
    for i, a in enumerate(grid.names[:-1]):
        if a is None or grid.sizes[i] == 1:
            x = jnp.fft.fft(x, axis=batch_ndim + i)
    return x


def _inverse_nd(grid: ShardedGrid, batch_ndim: int, x):
    for i, a in enumerate(grid.names[:-1]):
        if a is None or grid.sizes[i] == 1:
            x = jnp.fft.ifft(x, axis=batch_ndim + i)
    for axis, name in reversed(_sharded_axes(grid, batch_ndim)):
        x = _transposed(x, axis, name, jnp.fft.ifft)
    return jnp.fft.irfft(x[..., : grid.shape[-1] // 2 + 1], n=grid.shape[-1], axis=-1)


def _four_step(x, name: str, p: int, n: int):
    """Complex DFT of a length-`n` signal in `p` contiguous blocks; output in the same block order."""
    m = x.shape[-1]
    c = m // p
    lead = x.shape[:-1]
    # Block j = d*m + q with q = c_idx*c + r: gather, for my chunk c_idx, the values of every device d.
    y = lax.all_to_all(x.reshape(*lead, p, c), name, split_axis=x.ndim - 1, concat_axis=x.ndim - 1, tiled=True)
    y = jnp.fft.fft(y, axis=-2)  # over d: index k_a
    me = lax.axis_index(name)
    q = me * c + jnp.arange(c)
    y = y * jnp.exp(-2j * jnp.pi * (jnp.arange(p)[:, None] * q[None, :]) / n).astype(y.dtype)
    # Send k_a to device k_a, collect every chunk of q: now device k_a holds all q.
    y = lax.all_to_all(y, name, split_axis=x.ndim - 1, concat_axis=x.ndim - 1, tiled=True).reshape(*lead, m)
    y = jnp.fft.fft(y, axis=-1)  # X[me + p*k_b] at k_b
    # Cyclic to block order: X[e*m + p*s + d] lives on device d at k_b = e*c + s; send it to device e.
    y = lax.all_to_all(y.reshape(*lead, p, c), name, split_axis=x.ndim - 1, concat_axis=x.ndim - 1, tiled=True)
    return jnp.swapaxes(y, -1, -2).reshape(*lead, m)


def _inverse_four_step(x, name: str, p: int, n: int):
    return jnp.conj(_four_step(jnp.conj(x), name, p, n)) / n


def _shard_map(grid: ShardedGrid, fn, batch_ndim: int):
    spec = grid.spec(batch_ndim)
    return jax.shard_map(fn, mesh=grid.mesh, in_specs=spec, out_specs=spec, check_vma=False)


@fourier.forward_transform.register
def _forward(grid: ShardedGrid, u):
    batch_ndim = u.ndim - grid.ndim
    if not _sharded_axes(grid, batch_ndim):
        return jnp.fft.rfftn(u, axes=tuple(range(-grid.ndim, 0)))
    if grid.ndim == 1:
        n = grid.shape[0]
        full = _shard_map(grid, partial(_four_step, name=grid.names[0], p=grid.sizes[0], n=n), batch_ndim)(
            u.astype(jnp.result_type(u.dtype, jnp.complex64))
        )
        return full[..., : n // 2 + 1]
    out = _shard_map(grid, partial(_forward_nd, grid, batch_ndim), batch_ndim)(u)
    return out[..., : grid.shape[-1] // 2 + 1]


@fourier.inverse_transform.register
def _inverse(grid: ShardedGrid, u_hat):
    batch_ndim = u_hat.ndim - grid.ndim
    if not _sharded_axes(grid, batch_ndim):
        return jnp.fft.irfftn(u_hat, s=grid.shape, axes=tuple(range(-grid.ndim, 0)))
    if grid.ndim == 1:
        n, half = grid.shape[0], u_hat.shape[-1]
        # For a real signal the modes k and n - k are conjugate: Re(ifft) of the half spectrum with the
        # modes 0 < k < n/2 doubled is irfft (which, like Re, drops the imaginary parts of modes 0 and n/2).
        weight = jnp.asarray([1.0] + [2.0] * (half - 1 - (n % 2 == 0)) + [1.0] * (n % 2 == 0), u_hat.real.dtype)
        full = jnp.pad(weight * u_hat, [(0, 0)] * batch_ndim + [(0, n - half)])
        x = _shard_map(grid, partial(_inverse_four_step, name=grid.names[0], p=grid.sizes[0], n=n), batch_ndim)(full)
        return jnp.real(x)
    x = _shard_map(grid, partial(_inverse_nd, grid, batch_ndim), batch_ndim)(_pad_last(u_hat, _helper_length(grid)))
    return x
