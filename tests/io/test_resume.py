"""Checkpoint/restart: kill -9 and resume gives bitwise-identical output; bad checkpoints are refused."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time

import pytest

from sciax import io
from sciax.io import _run

from ._helpers import assert_bitwise_equal, write_ks_config

POLL_S, START_TIMEOUT_S = 0.02, 120.0


def test_kill_9_then_resume_is_bitwise_identical(tmp_path):
    """`sciax run` in a subprocess, SIGKILLed after its second checkpoint, resumed here."""
    killed_dir, reference_dir = tmp_path / "killed", tmp_path / "reference"
    killed_dir.mkdir(), reference_dir.mkdir()
    config = write_ks_config(killed_dir, end=60.0, chunk=2)  # 60 chunks of 2 output intervals
    ckpt = killed_dir / "ks.zarr.checkpoint"
    with open(tmp_path / "log.txt", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "sciax", "run", str(config)], stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline and proc.poll() is None:
                if ckpt.exists() and io.read_checkpoint(ckpt).chunks_done >= 2:
                    break
                time.sleep(POLL_S)
            still_running = proc.poll() is None
            proc.send_signal(signal.SIGKILL)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
    assert still_running, (
        "the run finished (or failed) before it could be killed:\n" + (tmp_path / "log.txt").read_text()
    )
    interrupted = io.read_checkpoint(ckpt)
    assert 2 <= interrupted.chunks_done < interrupted.n_chunks and not interrupted.done

    resumed = io.run_config(config, progress=False)
    assert resumed.resumed_at == interrupted.chunks_done
    assert resumed.chunks_run == resumed.n_chunks - interrupted.chunks_done
    assert io.read_checkpoint(ckpt).done

    reference = io.run_config(write_ks_config(reference_dir, end=60.0, chunk=2), progress=False)
    assert reference.resumed_at is None and reference.n_times == resumed.n_times == 121
    assert_bitwise_equal(killed_dir / "ks.zarr", reference_dir / "ks.zarr")


def _interrupt_after(monkeypatch, n_writes: int) -> None:
    """Make the `n_writes`-th checkpoint write raise, as a kill between a chunk's append and its checkpoint."""
    real, calls = _run.write_checkpoint, []

    def flaky(path, checkpoint):
        calls.append(checkpoint.chunks_done)
        if len(calls) == n_writes:
            raise KeyboardInterrupt("simulated kill")
        return real(path, checkpoint)

    monkeypatch.setattr(_run, "write_checkpoint", flaky)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run of the small config (5 chunks)."""
    folder = tmp_path_factory.mktemp("reference")
    summary = io.run_config(write_ks_config(folder, end=10.0, chunk=4), progress=False)
    return summary.output


def _interrupted_run(tmp_path, monkeypatch):
    config = write_ks_config(tmp_path, end=10.0, chunk=4)
    _interrupt_after(monkeypatch, 4)  # initial checkpoint + 2 chunks saved; chunk 3 appended, not checkpointed
    with pytest.raises(KeyboardInterrupt):
        io.run_config(config, progress=False)
    monkeypatch.undo()
    return config


def test_rows_after_the_checkpoint_are_rolled_back(tmp_path, monkeypatch, reference):
    config = _interrupted_run(tmp_path, monkeypatch)
    assert io.read_checkpoint(tmp_path / "ks.zarr.checkpoint").chunks_done == 2
    summary = io.run_config(config, progress=False)
    assert summary.resumed_at == 2 and summary.chunks_run == 3
    assert_bitwise_equal(tmp_path / "ks.zarr", reference)
    again = io.run_config(config, progress=False)  # complete: nothing left to do
    assert again.chunks_run == 0 and again.n_times == summary.n_times


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda b: b[: len(b) - 100], "truncated"),
        (lambda b: b[:30], "truncated"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum"),
        (lambda b: b"PK" + b[2:], "not a sciax checkpoint"),
        (lambda b: b.replace(b'"chunks_done": 2', b'"chunks_done": 3'), "checksum"),
    ],
    ids=["truncated-payload", "truncated-header", "flipped-bit", "wrong-magic", "edited-header"],
)
def test_damaged_checkpoint_is_refused(tmp_path, monkeypatch, damage, message):
    config = _interrupted_run(tmp_path, monkeypatch)
    ckpt = tmp_path / "ks.zarr.checkpoint"
    ckpt.write_bytes(damage(ckpt.read_bytes()))
    with pytest.raises(io.CheckpointError, match=message) as info:
        io.run_config(config, progress=False)
    assert "overwrite" in str(info.value) and "was not used" in str(info.value)


def test_checkpoint_of_another_run_is_refused(tmp_path, monkeypatch, reference):
    _interrupted_run(tmp_path, monkeypatch)
    other = (tmp_path / "ks.toml").read_text().replace("seed = 3", "seed = 4").replace("dt = 0.25", "dt = 0.125")
    (tmp_path / "ks.toml").write_text(other)
    with pytest.raises(io.CheckpointError, match="different run: its method, y0 differ"):
        io.run_config(tmp_path / "ks.toml", progress=False)
    summary = io.run_config(tmp_path / "ks.toml", progress=False, overwrite=True)
    assert summary.resumed_at is None and summary.chunks_run == summary.n_chunks


def test_store_removed_behind_the_checkpoint_is_an_error(tmp_path, monkeypatch):
    config = _interrupted_run(tmp_path, monkeypatch)
    shutil.rmtree(tmp_path / "ks.zarr")
    with pytest.raises(io.CheckpointError, match="records 9 output times, but .* is missing"):
        io.run_config(config, progress=False)


def test_leftover_temporaries_are_cleaned(tmp_path, monkeypatch, reference):
    config = _interrupted_run(tmp_path, monkeypatch)
    stray = tmp_path / "ks.zarr.checkpoint.abc123.tmp"
    stray.write_bytes(b"half a checkpoint")
    partial = next((tmp_path / "ks.zarr" / "u" / "c").iterdir()).with_suffix(".deadbeef.partial")
    partial.write_bytes(b"half a chunk")
    io.run_config(config, progress=False)
    assert not stray.exists() and not partial.exists()
    assert_bitwise_equal(tmp_path / "ks.zarr", reference)


def test_store_damaged_before_the_checkpoint_is_detected(tmp_path, monkeypatch):
    config = _interrupted_run(tmp_path, monkeypatch)
    import zarr

    u = zarr.open_array(str(tmp_path / "ks.zarr" / "u"), mode="r+")
    u[8, 0] = u[8, 0] + 1.0  # row 8 is the checkpointed state's row
    with pytest.raises(io.CheckpointError, match="does not match the checkpoint's state.*'u' differs"):
        io.run_config(config, progress=False)
