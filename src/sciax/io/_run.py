"""`run`: a long simulation in chunks, streamed to zarr, checkpointed, resumable after `kill -9`."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
import xarray as xr
from jaxtyping import ArrayLike, PyTree
from tqdm.auto import tqdm

from .. import _checks
from .._method import AbstractMethod
from .._model import AbstractModel
from .._simulate import simulate
from .._solution import Solution
from ._atomic import remove_stale_temporaries
from ._checkpoint import Checkpoint, CheckpointError, check_same_run, read_checkpoint, write_checkpoint
from ._fingerprint import fingerprint
from ._save import save
from ._store import CHUNK, TIME, ChunkedStore
from ._summary import RunFailed, RunSummary
from ._zarr import zarr_module


def run(
    model: AbstractModel,
    y0: PyTree[ArrayLike],
    ts: ArrayLike,
    params: PyTree = None,
    *,
    method: AbstractMethod | None = None,
    output: str | os.PathLike,
    chunk: int = 100,
    checkpoint: bool | str | os.PathLike = True,
    overwrite: bool = False,
    netcdf: str | os.PathLike | None = None,
    progress: bool = True,
    description: str = "sciax run",
    attrs: dict[str, str | int | float] | None = None,
    **options: Any,
) -> RunSummary:
    """Simulate `model` over the output times `ts` chunk by chunk, appending each chunk to a zarr store.

    Chunk `c` covers output times `ts[c * chunk] .. ts[(c + 1) * chunk]`: one
    `sciax.simulate` call (jit-compiled once and reused while the chunk length is
    the same) that starts from the last state of chunk `c - 1`. Only one chunk is
    held in memory, so the length of a run is bounded by disk, not memory. After
    each chunk its rows are appended to `output` and a checkpoint is written
    atomically.

    If the checkpoint exists when `run` starts, the run continues from it: it is
    verified (checksum, and a fingerprint of model, method, params, y0, ts, chunk
    and options), rows written after it are cut from the store (whose last kept row
    must equal the checkpoint's state, bit for bit), and the remaining
    chunks are computed. Because an uninterrupted run is chunked the same way, a
    resumed run's output is bitwise identical to an uninterrupted one. A
    corrupt, truncated or foreign checkpoint raises `CheckpointError` and is
    never used; `overwrite=True` starts afresh.

    **Arguments:**

    - `model`, `y0`, `params`, `method`, `**options`: as for `sciax.simulate`. Unless
      `throw` is given, a failed solve does not raise inside the solver; instead
      the chunk is stored with `chunk_success = False` and `RunFailed` is raised.
    - `ts`: 1-D, strictly increasing, concrete output times; `ts[0]` is the start.
    - `output`: the zarr store to write, a path ending in `.zarr`.
    - `chunk`: output intervals per chunk (>= 1): the unit of memory, of
      checkpointing and of resumption. Part of the run's definition (results
      depend on it at the level of rounding, as each chunk restarts the method).
    - `checkpoint`: `True` (default: `<output>.checkpoint` beside the store), a
      path, or `False` for none (then a killed run cannot be resumed).
    - `overwrite`: delete an existing store, checkpoint and netCDF copy first.
    - `netcdf`: also write the whole output to this `.nc` file at the end (netCDF
      through HDF5 is not safe against a crash mid-write, so it is never streamed).
    - `progress`: show a tqdm progress bar over chunks; `description` labels it.
    - `attrs`: extra global attributes of the store (e.g. `title`, `institution`).

    **Returns:** a `RunSummary`; `summary.open()` gives the output as an `xarray.Dataset`
    with the variables of `Solution.to_xarray` plus, along dim `chunk`,
    `chunk_success`, `chunk_end_time` and the solver statistics (`chunk_num_steps`, ...).
    """
    wall_start = time.perf_counter()
    if not isinstance(model, AbstractModel):
        raise TypeError(f"run: model must be a sciax.AbstractModel, got {type(model).__name__}")
    method = model.default_method() if method is None else method
    if not isinstance(method, AbstractMethod):
        raise TypeError(
            f"run: method must be a sciax.AbstractMethod instance such as sciax.ode.Tsit5(), got {method!r}"
        )
    if isinstance(ts, jax.core.Tracer):
        raise TypeError("run: ts must be concrete (a NumPy or JAX array), not traced; run is not meant for jax.jit")
    ts = np.asarray(_checks.check_ts(ts))
    y0 = _checks.check_y0(y0)
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"run: chunk must be an integer >= 1 (output intervals per chunk), got {chunk!r}")
    output = _suffixed(output, ".zarr", "output", "a zarr store")
    netcdf = None if netcdf is None else _suffixed(netcdf, ".nc", "netcdf", "a netCDF file")
    ckpt_path = _checkpoint_path(checkpoint, output)
    _check_paths(output=(output, True), checkpoint=(ckpt_path, False), netcdf=(netcdf, False))
    zarr_module()  # a clear ImportError before anything is written
    if "throw" not in options and "throw" in method.options:
        options["throw"] = False  # record failure per chunk and stop cleanly, rather than raise mid-solve
    n_chunks = math.ceil((len(ts) - 1) / chunk)
    fp = fingerprint(model=model, method=method, params=params, y0=y0, ts=ts, chunk=int(chunk), options=options)
    store = ChunkedStore(output)
    advice = (
        f"Delete {str(ckpt_path)!r} and {str(output)!r} (or pass overwrite=True; `sciax run --overwrite`) "
        "to start the run afresh"
    )

    if overwrite:
        store.remove()
        for path in (ckpt_path, netcdf):
            if path is not None:
                path.unlink(missing_ok=True)
    if ckpt_path is not None:
        remove_stale_temporaries(ckpt_path)

    state, start, resumed_at = _start(store, ckpt_path, fp, model, y0, ts, n_chunks, advice)

    attrs = {"source": "sciax.io.run", "output_times_per_chunk": int(chunk), "n_chunks": n_chunks, **(attrs or {})}
    with tqdm(total=n_chunks, initial=start, disable=not progress, unit="chunk", desc=description) as bar:
        for c in range(start, n_chunks):
            lo, hi = c * chunk, min((c + 1) * chunk, len(ts) - 1)
            sol = jax.device_get(simulate(model, state, ts[lo : hi + 1], params, method=method, **options))
            data = sol.to_xarray()
            data.attrs.clear()  # its `success` is per chunk: stored as the variable chunk_success instead
            if c > 0:  # the first row repeats the last row of the previous chunk
                data = data.isel({TIME: slice(1, None)})
            success = bool(np.all(sol.success))
            store.append(data, _chunk_stats(sol, success), rows_per_chunk=int(chunk), attrs=attrs)
            if not success:
                raise RunFailed(
                    f"run: chunk {c + 1} of {n_chunks} (t = {ts[lo]:g} to {ts[hi]:g}) failed: the method did not "
                    "succeed (non-finite state, max_steps reached or step size collapsed). Output up to "
                    f"t = {ts[lo]:g} is complete{' and checkpointed' if ckpt_path else ''}; the failed chunk's rows "
                    f"are kept in {str(output)!r} with chunk_success = False for inspection. Change the method, "
                    "dt or tolerances and start afresh (overwrite=True)"
                )
            state = jax.tree_util.tree_map(lambda a: np.asarray(a)[-1], sol.ys)
            rows = hi + 1
            if ckpt_path is not None:
                write_checkpoint(ckpt_path, _checkpoint(c + 1, n_chunks, rows, ts[hi], c + 1 == n_chunks, fp, state))
            bar.set_postfix(t=f"{ts[hi]:.6g}", refresh=False)
            bar.update(1)

    store.finish()
    if netcdf is not None and not netcdf.exists():
        save(store.open(), netcdf)
    steps = store.open()
    num_steps = int(steps["chunk_num_steps"].sum()) if "chunk_num_steps" in steps else 0
    return RunSummary(
        output=output,
        checkpoint=ckpt_path,
        netcdf=netcdf,
        n_chunks=n_chunks,
        chunks_run=n_chunks - start,
        resumed_at=resumed_at,
        n_times=int(steps.sizes[TIME]),
        t_start=float(ts[0]),
        t_end=float(ts[-1]),
        num_steps=num_steps,
        wall_time_s=time.perf_counter() - wall_start,
    )


def _checkpoint(done: int, n_chunks: int, rows: int, t, finished: bool, fp: dict, state) -> Checkpoint:
    leaves = tuple(np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(state))
    return Checkpoint(
        chunks_done=done,
        n_chunks=n_chunks,
        rows_written=rows,
        time=float(t),
        done=finished,
        fingerprint=fp,
        state=leaves,
    )


def _start(
    store: ChunkedStore,
    ckpt_path: Path | None,
    fp: dict,
    model: AbstractModel,
    y0,
    ts: np.ndarray,
    n_chunks: int,
    advice: str,
):
    """`(state, chunks done, resumed_at)` to start from: the verified checkpoint, or `y0` for a fresh run.

    Cuts the store back to the checkpoint; refuses (never ignores) anything inconsistent.
    """
    if ckpt_path is not None and ckpt_path.exists():
        try:
            ckpt = read_checkpoint(ckpt_path)
            check_same_run(ckpt, fp, ckpt_path)
        except CheckpointError as err:
            raise CheckpointError(f"run: {err}. It was not used. {advice}") from None
        state = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(y0), list(ckpt.state))
        rows = ckpt.rows_written
        if rows == 0:
            store.remove()  # killed before the first chunk was complete: nothing to keep
        elif not store.exists():
            raise CheckpointError(
                f"run: checkpoint {str(ckpt_path)!r} records {rows} output times, but "
                f"{str(store.path)!r} is missing. {advice}"
            )
        elif not ckpt.done:
            try:
                store.truncate(rows, ckpt.chunks_done)
            except ValueError as err:
                raise CheckpointError(f"run: {err}. {advice}") from None
            _check_last_row(store, model, state, ts[rows - 1], advice)
        return state, ckpt.chunks_done, ckpt.chunks_done
    if store.exists():
        raise FileExistsError(
            f"run: output {str(store.path)!r} already exists and there is no checkpoint to resume it from "
            f"({'checkpointing is off' if ckpt_path is None else repr(str(ckpt_path)) + ' is missing'}); "
            "pass overwrite=True (`sciax run --overwrite`) to replace it, or choose another output"
        )
    if ckpt_path is not None:
        # Written before the store exists, so that a store is never left without a checkpoint.
        write_checkpoint(ckpt_path, _checkpoint(0, n_chunks, 0, ts[0], False, fp, y0))
    return y0, 0, None


def _check_last_row(store: ChunkedStore, model: AbstractModel, state, t, advice: str) -> None:
    """The store's last row must be the checkpoint's state, bit for bit (it was written from it)."""
    row = Solution(
        ts=np.asarray([t]),
        ys=jax.tree_util.tree_map(lambda a: np.asarray(a)[None], state),
        stats={},
        success=np.asarray(True),
        labels=model.labels(),
    ).to_xarray()
    stored = store.open().isel({TIME: slice(-1, None)})
    for name, expected in row.variables.items():
        if name in stored.variables and not np.array_equal(stored[name].values, expected.values):
            raise CheckpointError(
                f"run: the last output time in {str(store.path)!r} does not match the checkpoint's state "
                f"(variable {name!r} differs); the store was changed or damaged. {advice}"
            )


def _chunk_stats(sol, success: bool) -> xr.Dataset:
    """One entry along `chunk`: success, end time and the method's scalar statistics."""
    data = {
        "chunk_success": ((CHUNK,), np.array([success])),
        "chunk_end_time": ((CHUNK,), np.asarray(sol.ts)[-1:]),
    }
    for key, value in sorted(sol.stats.items()):
        if value is not None and np.ndim(value) == 0 and np.issubdtype(np.asarray(value).dtype, np.integer):
            data[f"chunk_{key}"] = ((CHUNK,), np.asarray(value).reshape(1))
    return xr.Dataset(data)


def _suffixed(path, suffix: str, name: str, what: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"run: {name} must be a path, got {type(path).__name__}")
    path = Path(path)
    if path.suffix != suffix:
        raise ValueError(f"run: {name} must be {what}, a path ending in {suffix}; got {str(path)!r}")
    return path


def _check_paths(**paths: tuple[Path | None, bool]) -> None:
    """Refuse, before anything is computed, output paths that cannot be written; create their folders.

    `paths` maps an argument name to `(path, is_folder)` (`path` None: not written).
    Without this check the OS errors surface late (after a whole run, for `netcdf`)
    and misleadingly: `mkdir` on a path below a file says `FileExistsError` about the file.
    """
    for name, (path, is_folder) in paths.items():
        if path is None:
            continue
        for parent in reversed(path.parents):
            if parent.exists() and not parent.is_dir():
                raise NotADirectoryError(
                    f"run: {name} {str(path)!r} cannot be created: {str(parent)!r} is a file, not a folder; "
                    f"choose another {name} path"
                )
        if not is_folder and path.is_dir():
            raise IsADirectoryError(f"run: {name} {str(path)!r} is a folder; expected a file path")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise type(err)(
                f"run: {name} {str(path)!r} cannot be written: creating its folder {str(path.parent)!r} "
                f"failed ({err.strerror or err})"
            ) from None


def _checkpoint_path(checkpoint, output: Path) -> Path | None:
    if checkpoint is True:
        return output.with_name(output.name + ".checkpoint")
    if checkpoint is False or checkpoint is None:
        return None
    if isinstance(checkpoint, (str, os.PathLike)):
        return Path(checkpoint)
    raise TypeError(f"run: checkpoint must be True, False or a path, got {type(checkpoint).__name__}")
