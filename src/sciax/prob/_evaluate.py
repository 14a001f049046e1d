"""Evaluate a model function on many parameter samples: vmapped, in fixed-size chunks."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ._bounds import missing_parameter_error


def evaluate_samples(
    fn: Callable, samples: np.ndarray, names: tuple[str, ...], *, chunk_size: int, who: str
) -> np.ndarray:
    """`fn({name: scalar}) -> array` on each row of `samples` (shape `(n, D)`); returns `(n, *output shape)`.

    Rows are evaluated `chunk_size` at a time by one compiled, vmapped program
    (the last chunk is padded, so it compiles once), and results are gathered on
    the host. Memory on the device is therefore that of `chunk_size` evaluations
    however many samples there are: 10^6 ODE solves run in chunks of 10^4.

    A `KeyError` from `fn` for a name missing from `names` becomes an error naming the
    parameter (`MissingParameterError`). Raises `ValueError` if any output is not finite (e.g. a failed solve): a
    variance-based index of a NaN is meaningless, and dropping samples would bias it.
    """
    if not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"{who}: chunk_size must be a positive integer, got {chunk_size!r}")
    n = samples.shape[0]
    chunk_size = int(min(chunk_size, n))
    dtype = jnp.result_type(float)

    @jax.jit
    def chunk(x):
        return jax.vmap(lambda row: jnp.asarray(fn(dict(zip(names, row)))))(x)

    try:
        out = _evaluate_chunks(chunk, samples, chunk_size, dtype)
    except KeyError as err:  # fn read a parameter that the bounds do not give: name it
        clear = missing_parameter_error(err, names, who)
        if clear is None:
            raise
        raise clear from err
    _check_finite(out, samples, names, who)
    return out


def _evaluate_chunks(chunk: Callable, samples: np.ndarray, chunk_size: int, dtype) -> np.ndarray:
    n = samples.shape[0]
    out = None
    for start in range(0, n, chunk_size):
        rows = samples[start : start + chunk_size]
        pad = chunk_size - rows.shape[0]
        if pad:
            rows = np.concatenate([rows, np.repeat(rows[-1:], pad, axis=0)])
        values = np.asarray(chunk(jnp.asarray(rows, dtype=dtype)))
        if out is None:
            out = np.empty((n,) + values.shape[1:], dtype=values.dtype)
        out[start : start + chunk_size - pad] = values[: chunk_size - pad]
    return out


def _check_finite(out: np.ndarray, samples: np.ndarray, names: tuple[str, ...], who: str) -> None:
    n = samples.shape[0]
    bad = ~np.isfinite(out.reshape(n, -1)).all(axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        sample = {k: float(v) for k, v in zip(names, samples[first])}
        raise ValueError(
            f"{who}: the model returned non-finite values for {int(bad.sum())} of {n} parameter samples "
            f"(first at {sample}); narrow the bounds or make the simulation robust there "
            "(e.g. raise max_steps or use a stiff method)"
        )
