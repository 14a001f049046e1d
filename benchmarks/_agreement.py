"""The check that sciax and the code it is timed against ran the same scheme: their last fields agree."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

import numpy as np


def steps_before_edge(steps: int, n: int, spacing: float, speed: float, dt: float) -> int:
    """`steps`, or fewer: as many as the fastest wave (`speed`) takes to cover 80 % of the way from the centre of
    an `n`-point axis to its edge, where the two codes differ (their ghost points hold different values)."""
    return min(steps, int(0.8 * (n // 2) * spacing / (speed * dt)))


def max_rel_diff(save_ours: Callable[[str], object], save_theirs: Callable[[str], object]) -> float:
    """Each `save_*(path)` writes its side's last field to the .npy file `path`; the largest difference between
    the two over the largest value of theirs."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"{side}.npy") for side in ("ours", "theirs")]
        save_ours(paths[0])
        save_theirs(paths[1])
        ours, theirs = (np.load(path).astype(np.float64) for path in paths)
    return float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
