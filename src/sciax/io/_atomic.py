"""Atomic file replacement: a reader sees the old file or the new one, never a mixture."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` through a temporary file in the same folder, then rename it into place.

    The temporary file is flushed and fsync'ed before `os.replace`, which is atomic on
    POSIX and Windows when source and target are on the same file system (hence the
    same folder). A process killed at any moment leaves either the previous file or
    the complete new one under `path`, plus at worst a stray `*.tmp` file
    (see `remove_stale_temporaries`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        use_default_permissions(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    _fsync_folder(path.parent)
    return path


def use_default_permissions(path: str | os.PathLike) -> None:
    """Give a `mkstemp` file (created 0600) the permissions a plain `open` would: 0666 minus the umask."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def remove_stale_temporaries(path: str | os.PathLike) -> None:
    """Delete temporaries that `atomic_write_bytes(path, ...)` left behind when killed mid-write."""
    path = Path(path)
    if path.parent.is_dir():
        for stale in path.parent.glob(path.name + ".*.tmp"):
            stale.unlink(missing_ok=True)


def _fsync_folder(folder: Path) -> None:
    # The rename is durable only once the folder entry is on disk (matters for power loss,
    # not for a killed process); not every platform lets a folder be opened, so best effort.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
