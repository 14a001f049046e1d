"""`ChunkedStore`: a zarr store that a run appends to chunk by chunk and can roll back.

Each chunk adds rows along `time` (the labelled output of `Solution.to_xarray`)
and one entry along `chunk` (its statistics). zarr writes every file through a
temporary name and a rename, so after `kill -9` each file is either old or new;
arrays can however disagree on their length (killed between two of them), which
`truncate` repairs from the counts a checkpoint recorded.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import xarray as xr

from ._zarr import consolidate, is_zarr_store, zarr_module

TIME = "time"
CHUNK = "chunk"
_STATS_CHUNK = 1024  # entries of the per-chunk statistics per zarr chunk: few small files


class ChunkedStore:
    """The output store of a chunked run at `path` (a folder ending in `.zarr`)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def exists(self) -> bool:
        return self.path.exists()

    def remove(self) -> None:
        """Delete the store (only if it is one: never an unrelated folder)."""
        if not self.path.exists():
            return
        if not is_zarr_store(self.path):
            raise FileExistsError(f"output {str(self.path)!r} exists and is not a zarr store; refusing to delete it")
        shutil.rmtree(self.path)

    def append(self, data: xr.Dataset, stats: xr.Dataset, rows_per_chunk: int, attrs: dict) -> None:
        """Add `data` (dims `time`, ...) and `stats` (dim `chunk`); the first call creates the store.

        `attrs` become the store's global attributes (every write sets them, so both
        datasets carry the same ones).
        """
        data = data.assign_attrs(attrs)
        stats = stats.assign_attrs(attrs)
        zarr_module()  # a clear ImportError before anything is written
        if not self.path.exists():
            encoding = {
                name: {"chunks": (rows_per_chunk,) + var.shape[1:]}
                for name, var in data.data_vars.items()
                if var.dims[:1] == (TIME,)
            }
            data.to_zarr(self.path, mode="w-", zarr_format=3, consolidated=False, encoding=encoding)
            stats_encoding = {name: {"chunks": (_STATS_CHUNK,)} for name in stats.data_vars}
            stats.to_zarr(self.path, mode="a", consolidated=False, encoding=stats_encoding)
            return
        # Coordinates without a time axis (x, y, ...) are already in the store.
        data = data.drop_vars([n for n, v in data.variables.items() if TIME not in v.dims])
        data.to_zarr(self.path, append_dim=TIME, consolidated=False)
        stats.to_zarr(self.path, append_dim=CHUNK, consolidated=False)

    def truncate(self, rows: int, chunks: int) -> None:
        """Cut every array back to `rows` output times and `chunks` chunk entries.

        `ValueError` if the store holds fewer (it was modified or replaced since
        the checkpoint that gave the counts was written).
        """
        for stale in self.path.rglob("*.partial"):  # zarr's temporaries of a killed write
            stale.unlink(missing_ok=True)
        group = zarr_module().open_group(str(self.path), mode="r+")
        for name, array in group.arrays():
            dims = tuple(array.metadata.dimension_names or ())
            shape = list(array.shape)
            for axis, dim in enumerate(dims):
                target = {TIME: rows, CHUNK: chunks}.get(dim)
                if target is None:
                    continue
                if shape[axis] < target:
                    raise ValueError(
                        f"output {str(self.path)!r}: {name!r} has {shape[axis]} entries along {dim!r}, but the "
                        f"checkpoint says {target} were written; the store was changed after the checkpoint"
                    )
                shape[axis] = target
            if tuple(shape) != array.shape:
                array.resize(tuple(shape))

    def finish(self) -> None:
        """Consolidate the metadata, so `xarray.open_zarr(path)` opens the store in one read."""
        consolidate(self.path)

    def open(self) -> xr.Dataset:
        """The store as a lazily loaded `xarray.Dataset`."""
        return xr.open_zarr(self.path, consolidated=False)  # also valid before `finish`
