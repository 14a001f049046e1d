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


class MissingParameterError(KeyError):
    """A parameter the function reads is not in `bounds`.

    A `KeyError` (what the function raised), printed as plain text rather than as a quoted key.
    """

    def __str__(self) -> str:
        return str(self.args[0])


def missing_parameter_error(err: KeyError, names: tuple[str, ...], who: str) -> KeyError | None:
    """A clear error for `fn(params)` raising `KeyError(key)` for a `key` that `bounds` lacks, else None.

    Only a `str` key absent from `names` is explained (most likely the function asked for a
    parameter the analysis does not vary; the original error stays chained, in case the key
    belongs to some other dict); any other `KeyError` is left as it is.
    """
    key = err.args[0] if len(err.args) == 1 else None
    if not isinstance(key, str) or key in names:
        return None
    return MissingParameterError(
        f"{who}: the function raised KeyError({key!r}) and bounds has no parameter {key!r} (it gives "
        f"{list(names)}); add bounds[{key!r}] = (lower, upper), or fix the value of {key!r} inside the function"
    )
