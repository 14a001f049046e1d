"""Small zarr helpers shared by `save` and the streaming output store.

zarr is imported on first use, so `import sciax` neither needs it nor pays for it.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType


def zarr_module() -> ModuleType:
    """The `zarr` package, or an `ImportError` saying what needs it and how to install it."""
    try:
        return importlib.import_module("zarr")
    except ImportError:
        raise ImportError(
            "sciax.io needs the zarr package (>= 3.1) for .zarr output: pip install 'zarr>=3.1'"
        ) from None


@contextlib.contextmanager
def quiet_consolidation() -> Iterator[None]:
    """Silence zarr's notice that consolidated metadata is not yet in the format-3 spec.

    sciax consolidates finished stores on purpose: `xarray.open_zarr(path)` then
    opens them without a fallback warning of its own.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Consolidated metadata is currently not part")
        yield


def is_zarr_store(path: Path) -> bool:
    """True if `path` is a folder holding a zarr group (format 3 or 2)."""
    return path.is_dir() and ((path / "zarr.json").exists() or (path / ".zgroup").exists())


def consolidate(path: Path) -> None:
    """Write consolidated metadata for the store at `path` (after its last change)."""
    with quiet_consolidation():
        zarr_module().consolidate_metadata(str(path))
