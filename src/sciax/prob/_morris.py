"""`morris`: Morris's elementary-effects screening (cheap global sensitivity)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from ._bounds import check_bounds
from ._evaluate import evaluate_samples
from ._output import output_coords as _coords
from ._output import output_dims as _output_dims


def morris(
    fn: Callable[[dict], Any],
    bounds: Mapping[str, tuple[float, float]],
    num_trajectories: int = 64,
    *,
    num_levels: int = 4,
    seed: int = 0,
    chunk_size: int = 8192,
    output_dims: Sequence[str] | None = None,
    output_coords: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """Elementary effects of each parameter (Morris 1991; `mu_star` of Campolongo et al. 2007).

    Each of `num_trajectories` trajectories starts at a random point of a
    `num_levels`-level grid over the unit hypercube and moves one parameter at a
    time, in random order and direction, by `delta = num_levels / (2 (num_levels - 1))`;
    `fn` runs `num_trajectories (D + 1)` times. An elementary effect is
    `(f(x + delta e_i) - f(x)) / delta`, with `x` in units of each parameter's range
    (so effects of parameters with different units compare directly).

    **Returns:** an `xarray.Dataset` with `mu` (mean effect), `mu_star` (mean
    absolute effect: the importance ranking), `sigma` (standard deviation:
    non-linearity or interactions), dims `(parameter, *output dims)`. Other
    arguments as in `sobol_indices`.
    """
    names, lower, upper = check_bounds(bounds, "morris")
    if not isinstance(num_levels, (int, np.integer)) or num_levels < 2 or num_levels % 2:
        raise ValueError(f"morris: num_levels must be an even integer >= 2, got {num_levels!r}")
    if not isinstance(num_trajectories, (int, np.integer)) or num_trajectories < 2:
        raise ValueError(f"morris: num_trajectories must be an integer >= 2, got {num_trajectories!r}")
    d, r = len(names), int(num_trajectories)
    delta = num_levels / (2 * (num_levels - 1))
    rng = np.random.default_rng(seed)
    # Start on the levels from which a step of +delta stays inside [0, 1].
    start = rng.integers(0, num_levels // 2, size=(r, d)) / (num_levels - 1)
    signs = rng.choice([-1.0, 1.0], size=(r, d))
    order = np.argsort(rng.random((r, d)), axis=1)
    points = np.empty((r, d + 1, d))
    points[:, 0] = start + delta * (signs < 0)
    for k in range(d):
        points[:, k + 1] = points[:, k]
        j = order[:, k]
        points[np.arange(r), k + 1, j] += signs[np.arange(r), j] * delta
    rows = lower + points.reshape(r * (d + 1), d) * (upper - lower)

    out = evaluate_samples(fn, rows, names, chunk_size=chunk_size, who="morris")
    out_shape = out.shape[1:]
    f = out.reshape(r, d + 1, -1).astype(np.float64)
    effects = np.empty((r, d, f.shape[-1]))
    for k in range(d):
        j = order[:, k]
        step = (signs[np.arange(r), j] * delta)[:, None]
        effects[np.arange(r), j] = (f[:, k + 1] - f[:, k]) / step

    dims = _output_dims(out_shape, output_dims)
    shape = (d,) + out_shape

    def var(x):
        return (("parameter",) + dims, x.reshape(shape))

    return xr.Dataset(
        {
            "mu": var(effects.mean(axis=0)),
            "mu_star": var(np.abs(effects).mean(axis=0)),
            "sigma": var(effects.std(axis=0, ddof=1)),
        },
        coords={"parameter": list(names), **_coords(dims, out_shape, output_coords)},
        attrs={
            "method": "Morris elementary effects",
            "num_trajectories": r,
            "num_levels": num_levels,
            "delta": delta,
            "num_evaluations": r * (d + 1),
        },
    )
