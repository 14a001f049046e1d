"""`sobol_indices`: variance-based global sensitivity (first-order and total Sobol indices)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from ._bounds import check_bounds
from ._evaluate import evaluate_samples
from ._output import output_coords as _coords
from ._output import output_dims as _output_dims
from ._saltelli import saltelli_design

_RESAMPLE_BATCH = 16  # bootstrap resamples per matrix product: bounds memory at 16 x N counts


def sobol_indices(
    fn: Callable[[dict], Any],
    bounds: Mapping[str, tuple[float, float]],
    num_samples: int = 2**12,
    *,
    estimator: Literal["jansen", "saltelli"] = "jansen",
    num_resamples: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
    chunk_size: int = 8192,
    output_dims: Sequence[str] | None = None,
    output_coords: Mapping[str, Any] | None = None,
) -> xr.Dataset:
    """First-order and total Sobol indices of `fn` over independent uniform parameters.

    **Arguments:**

    - `fn`: `fn(params) -> output`, with `params` a dict `{name: scalar}`; the output
      is a scalar or an array of any fixed shape (e.g. a trajectory `sol.ys[:, 0]`,
      giving time-resolved indices). Must be traceable by JAX: it is vmapped.
    - `bounds`: `{name: (lower, upper)}`; each parameter is uniform on its interval. A
      parameter that `fn` reads but `bounds` lacks raises a `KeyError` naming it.
    - `num_samples`: base sample size `N`, a power of 2. The model runs
      `N (D + 2)` times for `D` parameters, in vmapped chunks of `chunk_size`.
    - `estimator`: `"jansen"` (Jansen 1999 first-order and total; robust default) or
      `"saltelli"` (first-order of Saltelli et al. 2010 with Jansen's total, the
      pair that paper recommends).
    - `num_resamples`, `confidence`: bootstrap over the `N` base rows for
      percentile confidence intervals.
    - `output_dims`, `output_coords`: names (and coordinates) of the output's axes
      in the result, e.g. `("time",)` and `{"time": ts}`.

    **Returns:** an `xarray.Dataset` with `S1` and `ST` (dims `(parameter, *output
    dims)`), their interval ends `S1_lower`, `S1_upper`, `ST_lower`, `ST_upper`, and
    `variance` (the output's variance). Where the output does not vary (variance
    0, e.g. at `t = 0` of a trajectory with fixed initial state) the indices are NaN.

    Sampling is Saltelli's design on a scrambled Sobol sequence (see
    `saltelli_design`). Estimators with `A`, `B`, `AB_i` as in Saltelli et al. (2010),
    "Variance based sensitivity analysis of model output", Comput. Phys. Commun. 181:
    `S1_i = mean(f(B) (f(AB_i) - f(A))) / V` (saltelli) or
    `1 - mean((f(B) - f(AB_i))^2) / 2V` (jansen); `ST_i = mean((f(A) - f(AB_i))^2) / 2V`.
    """
    names, lower, upper = check_bounds(bounds, "sobol_indices")
    if estimator not in ("jansen", "saltelli"):
        raise ValueError(f"sobol_indices: estimator must be 'jansen' or 'saltelli', got {estimator!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"sobol_indices: confidence must be in (0, 1), got {confidence!r}")
    if not isinstance(num_resamples, (int, np.integer)) or num_resamples < 1:
        raise ValueError(f"sobol_indices: num_resamples must be a positive integer, got {num_resamples!r}")
    try:
        rows = saltelli_design(num_samples, lower, upper, seed)
    except ValueError as err:
        raise ValueError(f"sobol_indices: {err}") from None
    d, n = len(names), num_samples
    out = evaluate_samples(fn, rows, names, chunk_size=chunk_size, who="sobol_indices")
    out_shape = out.shape[1:]
    f = out.reshape(d + 2, n, -1).astype(np.float64)
    terms = _terms(f[0], f[1], f[2:])

    point = _indices(terms, np.ones((1, n)), estimator)
    rng = np.random.default_rng(seed + 1)
    draws = []
    for start in range(0, num_resamples, _RESAMPLE_BATCH):
        size = min(_RESAMPLE_BATCH, num_resamples - start)
        counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(size)]).astype(np.float64)
        draws.append(_indices(terms, counts, estimator))
    tail = 100 * (1 - confidence) / 2
    with np.errstate(invalid="ignore"):
        s1_lo, s1_hi = np.nanpercentile(np.concatenate([s["S1"] for s in draws]), [tail, 100 - tail], axis=0)
        st_lo, st_hi = np.nanpercentile(np.concatenate([s["ST"] for s in draws]), [tail, 100 - tail], axis=0)

    dims = _output_dims(out_shape, output_dims)
    shape = (d,) + out_shape

    def var(x):
        return (("parameter",) + dims, np.reshape(x, shape))

    coords = {"parameter": list(names), **_coords(dims, out_shape, output_coords)}
    return xr.Dataset(
        {
            "S1": var(point["S1"][0]),
            "ST": var(point["ST"][0]),
            "S1_lower": var(s1_lo),
            "S1_upper": var(s1_hi),
            "ST_lower": var(st_lo),
            "ST_upper": var(st_hi),
            "variance": (dims, point["V"][0].reshape(out_shape)),
        },
        coords=coords,
        attrs={
            "method": "Sobol indices, Saltelli design on a scrambled Sobol sequence",
            "estimator": estimator,
            "num_samples": n,
            "num_evaluations": n * (d + 2),
            "num_resamples": num_resamples,
            "confidence": confidence,
        },
    )


def _terms(fa, fb, fab):
    """Per-row summands of every estimator; the indices are ratios of their (weighted) means."""
    return {
        "fa": fa,
        "fb": fb,
        "fa2": fa**2,
        "fb2": fb**2,
        "saltelli_first": fb[None] * (fab - fa[None]),
        "jansen_first": (fb[None] - fab) ** 2 / 2,
        "jansen_total": (fa[None] - fab) ** 2 / 2,
    }


def _indices(terms, counts, estimator):
    """Indices for each row of `counts` (R, N): how often each base row is drawn (all ones = the data)."""
    n = counts.shape[1]

    def mean(x):  # x: (N, Q) or (D, N, Q) -> (R, Q) or (R, D, Q)
        if x.ndim == 2:
            return counts @ x / n
        return np.einsum("rn,dnq->rdq", counts, x) / n

    m = (mean(terms["fa"]) + mean(terms["fb"])) / 2
    variance = (mean(terms["fa2"]) + mean(terms["fb2"])) / 2 - m**2
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.where(variance > 0, variance, np.nan)[:, None]
        if estimator == "saltelli":
            s1 = mean(terms["saltelli_first"]) / v
        else:
            s1 = 1 - mean(terms["jansen_first"]) / v
        st = mean(terms["jansen_total"]) / v
    return {"S1": s1, "ST": st, "V": variance}
