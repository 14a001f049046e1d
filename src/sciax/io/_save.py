"""`save`: write a labelled Dataset (or a `Solution`) to netCDF or zarr in one go."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import xarray as xr

from .._solution import Solution
from ._atomic import use_default_permissions
from ._zarr import is_zarr_store, quiet_consolidation, zarr_module

_NETCDF = (".nc", ".nc4")
_ZARR = (".zarr",)


def save(data: xr.Dataset | Solution, path: str | os.PathLike) -> Path:
    """Write a Dataset (or a `Solution`, via `to_xarray`) to netCDF or zarr, chosen by the suffix of `path`.

    - `.nc` / `.nc4`: netCDF-4 through h5netcdf;
    - `.zarr`: a zarr (format 3) directory store, with consolidated metadata.

    Either is written under a temporary name in the same folder and renamed into
    place, so a crash never leaves a half-written file under `path`; an existing
    file or store at `path` is replaced. For output written while a long
    simulation runs, use `sciax.io.run`, which appends chunk by chunk instead.
    """
    if isinstance(data, Solution):
        data = data.to_xarray()
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"save: data must be an xarray.Dataset or sciax.Solution, got {type(data).__name__}")
    path = Path(path)
    if path.suffix not in _NETCDF + _ZARR:
        raise ValueError(f"save: path must end in .nc (netCDF) or .zarr (zarr directory store), got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix in _NETCDF:
        _save_netcdf(data, path)
    else:
        _save_zarr(data, path)
    return path


def _save_netcdf(data: xr.Dataset, path: Path) -> None:
    fd, tmp = tempfile.mkstemp(suffix=".nc.tmp", dir=path.parent)
    os.close(fd)
    try:
        data.to_netcdf(tmp, engine="h5netcdf")
        use_default_permissions(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _save_zarr(data: xr.Dataset, path: Path) -> None:
    if path.exists() and not is_zarr_store(path):
        raise ValueError(f"save: {str(path)!r} exists and is not a zarr store; refusing to replace it")
    zarr_module()  # a clear ImportError before anything is written
    tag = uuid.uuid4().hex[:12]
    tmp = path.with_name(f"{path.name}.{tag}.tmp")
    old = path.with_name(f"{path.name}.{tag}.old")
    try:
        with quiet_consolidation():
            data.to_zarr(tmp, mode="w-", zarr_format=3, consolidated=True)
        # A directory cannot be swapped in one atomic step over an existing one:
        # move the old store aside first, so `path` is always a complete store or absent.
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, old):
            if leftover.exists():
                shutil.rmtree(leftover)
