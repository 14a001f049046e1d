"""Saltelli's sampling design for Sobol indices, from a scrambled Sobol sequence."""

from __future__ import annotations

import numpy as np
from scipy.stats import qmc


def saltelli_design(num_samples: int, lower: np.ndarray, upper: np.ndarray, seed: int) -> np.ndarray:
    """Matrices `A`, `B` and `AB_i` stacked as `(N (D + 2), D)` rows, scaled to `[lower, upper]`.

    `A` and `B` are the first and last `D` columns of `N` points of a scrambled
    Sobol sequence in `2D` dimensions (Owen scrambling, so the points are
    randomised yet low-discrepancy); `AB_i` is `A` with column `i` taken from `B`
    (Saltelli 2002; Saltelli et al. 2010). Row order: `A`, `B`, `AB_0`, ..., `AB_{D-1}`.
    `N` must be a power of 2, which keeps the Sobol points balanced.
    """
    if not isinstance(num_samples, (int, np.integer)) or num_samples < 2 or num_samples & (num_samples - 1):
        raise ValueError(f"num_samples must be a power of 2 (>= 2), e.g. 2**12, got {num_samples!r}")
    d = lower.shape[0]
    unit = qmc.Sobol(d=2 * d, scramble=True, rng=np.random.default_rng(seed)).random_base2(int(np.log2(num_samples)))
    a, b = unit[:, :d], unit[:, d:]
    ab = np.repeat(a[None], d, axis=0)
    for i in range(d):
        ab[i, :, i] = b[:, i]
    rows = np.concatenate([a, b, ab.reshape(d * num_samples, d)])
    return lower + rows * (upper - lower)
