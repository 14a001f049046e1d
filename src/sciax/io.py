"""Input/output: write simulation results (xarray Datasets) to netCDF."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import xarray as xr

from ._solution import Solution


def save(data: xr.Dataset | Solution, path: str | os.PathLike) -> Path:
    """Write a Dataset (or a `Solution`, via `to_xarray`) to netCDF at `path`.

    The file is written to a temporary name in the same folder and renamed into
    place, so a crash never leaves a half-written file under `path`.
    """
    if isinstance(data, Solution):
        data = data.to_xarray()
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"save: data must be an xarray.Dataset or sciax.Solution, got {type(data).__name__}")
    path = Path(path)
    if path.suffix not in (".nc", ".nc4"):
        raise ValueError(f"save: path must end in .nc (netCDF), got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".nc.tmp", dir=path.parent)
    os.close(fd)
    try:
        data.to_netcdf(tmp, engine="h5netcdf")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path
