"""Parameter bounds of a sensitivity analysis: validated names, lower and upper limits."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def check_bounds(bounds: Mapping[str, tuple[float, float]], who: str) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """`{name: (lower, upper)}` -> `(names, lower, upper)`; raise naming the first bad entry.

    Each parameter varies uniformly over `[lower, upper]` with finite `lower < upper`.
    """
    if not isinstance(bounds, Mapping) or not bounds:
        raise TypeError(f"{who}: bounds must be a non-empty dict {{name: (lower, upper)}}, got {bounds!r:.80}")
    names, lower, upper = [], [], []
    for name, pair in bounds.items():
        if not isinstance(name, str):
            raise TypeError(f"{who}: bounds keys must be parameter names (str), got {name!r}")
        try:
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise TypeError(f"{who}: bounds[{name!r}] must be a pair (lower, upper) of numbers, got {pair!r}") from None
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"{who}: bounds[{name!r}] = {pair!r} must be finite")
        if lo >= hi:
            raise ValueError(f"{who}: bounds[{name!r}] has lower {lo} >= upper {hi}; expected lower < upper")
        names.append(name)
        lower.append(lo)
        upper.append(hi)
    return tuple(names), np.asarray(lower), np.asarray(upper)
