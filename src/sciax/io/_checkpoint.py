"""Checkpoints of a chunked run: state arrays plus metadata, checksummed and written atomically.

File layout (one file, no pickling anywhere):

    SCIAX-CHECKPOINT 1\\n
    {"meta": {...}, "payload_bytes": N, "sha256": "..."}\\n     <- one line of JSON
    <N bytes: an .npz archive of the state leaves, read with allow_pickle=False>

`sha256` covers the canonical JSON of `meta` and the payload, so a truncated,
bit-flipped or hand-edited checkpoint is detected before anything in it is used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np

from ._atomic import atomic_write_bytes

_MAGIC = b"SCIAX-CHECKPOINT 1\n"


class CheckpointError(RuntimeError):
    """A checkpoint is unreadable, corrupt, truncated, or belongs to a different run."""


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """What a chunked run needs to continue after its last completed chunk.

    **Fields:**

    - `chunks_done`: chunks completed (0 for the checkpoint written before the first).
    - `n_chunks`: chunks in the whole run.
    - `rows_written`: output times already in the output store.
    - `time`: the model time of `state`.
    - `done`: whether the run has finished.
    - `fingerprint`: one digest per part of the run's definition (see `sciax.io.run`).
    - `state`: the state's leaves (numpy arrays, in pytree order) at `time`.
    """

    chunks_done: int
    n_chunks: int
    rows_written: int
    time: float
    done: bool
    fingerprint: dict[str, str]
    state: tuple[np.ndarray, ...]

    def meta(self) -> dict:
        fields = dataclasses.asdict(self)
        del fields["state"]
        fields["state_leaves"] = [{"dtype": a.dtype.str, "shape": list(a.shape)} for a in self.state]
        return fields


def write_checkpoint(path: str | os.PathLike, checkpoint: Checkpoint) -> Path:
    """Write `checkpoint` to `path` atomically (temporary file, fsync, rename)."""
    buffer = io.BytesIO()
    np.savez(buffer, *checkpoint.state)
    payload = buffer.getvalue()
    meta = checkpoint.meta()
    header = {"meta": meta, "payload_bytes": len(payload), "sha256": _checksum(meta, payload)}
    blob = _MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + payload
    return atomic_write_bytes(path, blob)


def read_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read and verify the checkpoint at `path`; `CheckpointError` says what is wrong with it."""
    path = Path(path)
    blob = path.read_bytes()
    where = f"checkpoint {str(path)!r}"
    if not blob.startswith(_MAGIC):
        raise CheckpointError(f"{where} is not a sciax checkpoint (its first line is not {_MAGIC.strip().decode()!r})")
    end = blob.find(b"\n", len(_MAGIC))
    if end < 0:
        raise CheckpointError(f"{where} is truncated: its header line is incomplete ({len(blob)} bytes in all)")
    try:
        header = json.loads(blob[len(_MAGIC) : end])
        meta, n_bytes, expected = header["meta"], int(header["payload_bytes"]), str(header["sha256"])
    except (ValueError, KeyError, TypeError) as err:
        raise CheckpointError(f"{where} is corrupt: its header is not valid ({err})") from None
    payload = blob[end + 1 :]
    if len(payload) != n_bytes:
        raise CheckpointError(
            f"{where} is truncated or padded: its header announces {n_bytes} bytes of state, "
            f"the file holds {len(payload)}"
        )
    if _checksum(meta, payload) != expected:
        raise CheckpointError(f"{where} is corrupt: the sha256 checksum of its contents does not match its header")
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
            state = tuple(archive[f"arr_{i}"] for i in range(len(meta["state_leaves"])))
        checkpoint = Checkpoint(
            chunks_done=int(meta["chunks_done"]),
            n_chunks=int(meta["n_chunks"]),
            rows_written=int(meta["rows_written"]),
            time=float(meta["time"]),
            done=bool(meta["done"]),
            fingerprint=dict(meta["fingerprint"]),
            state=state,
        )
    except (ValueError, KeyError, TypeError, OSError) as err:
        raise CheckpointError(f"{where} is corrupt: its contents do not decode ({err})") from None
    for i, (leaf, spec) in enumerate(zip(state, meta["state_leaves"])):
        if leaf.dtype.str != spec["dtype"] or list(leaf.shape) != spec["shape"]:
            raise CheckpointError(f"{where} is corrupt: state leaf {i} does not match its recorded dtype and shape")
    return checkpoint


def check_same_run(checkpoint: Checkpoint, fingerprint: dict[str, str], path: str | os.PathLike) -> None:
    """`CheckpointError` naming the parts (model, params, ts, ...) that differ from this run's."""
    if checkpoint.fingerprint == fingerprint:
        return
    parts = sorted(set(checkpoint.fingerprint) | set(fingerprint))
    differ = [p for p in parts if checkpoint.fingerprint.get(p) != fingerprint.get(p)]
    raise CheckpointError(
        f"checkpoint {str(path)!r} was written by a different run: its {', '.join(differ)} "
        f"differ{'s' if len(differ) == 1 else ''} from this run's"
    )


def _checksum(meta: dict, payload: bytes) -> str:
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    digest.update(payload)
    return digest.hexdigest()
