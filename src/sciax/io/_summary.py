"""`RunSummary` (what `sciax.io.run` returns) and `RunFailed` (a chunk whose solve failed)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import xarray as xr


class RunFailed(RuntimeError):
    """A chunk of a `sciax.io.run` did not succeed; everything before it is kept and checkpointed."""


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """The outcome of `sciax.io.run` (or `sciax run CONFIG.toml`).

    **Fields:**

    - `output`: the zarr store (dims `time`, state dims; per-chunk statistics along `chunk`).
    - `checkpoint`: the checkpoint file, or `None` when checkpointing was off.
    - `netcdf`: the netCDF copy written at the end, or `None`.
    - `n_chunks`: chunks in the whole run; `chunks_run`: chunks computed by this call.
    - `resumed_at`: chunks already done when this call started, `None` for a fresh start.
    - `n_times`, `t_start`, `t_end`: output times stored and their range.
    - `num_steps`: time steps taken over the whole run (from the per-chunk statistics).
    - `wall_time_s`: seconds this call took.
    """

    output: Path
    checkpoint: Path | None
    netcdf: Path | None
    n_chunks: int
    chunks_run: int
    resumed_at: int | None
    n_times: int
    t_start: float
    t_end: float
    num_steps: int
    wall_time_s: float

    def open(self) -> xr.Dataset:
        """The output as a lazily loaded `xarray.Dataset`."""
        return xr.open_zarr(self.output)

    def __str__(self) -> str:
        if self.resumed_at is None:
            start = "fresh start"
        elif self.chunks_run == 0:
            start = "already complete: nothing to do"
        else:
            start = f"resumed after chunk {self.resumed_at} of {self.n_chunks}"
        lines = [
            f"  output:        {self.output}",
            f"  times stored:  {self.n_times} on [{self.t_start:g}, {self.t_end:g}]",
            f"  chunks:        {self.n_chunks} ({self.chunks_run} run now; {start})",
            f"  steps taken:   {self.num_steps:,}",
            f"  wall time:     {self.wall_time_s:.2f} s",
        ]
        if self.checkpoint is not None:
            lines.append(f"  checkpoint:    {self.checkpoint}")
        if self.netcdf is not None:
            lines.append(f"  netCDF copy:   {self.netcdf}")
        return "\n".join(lines)
