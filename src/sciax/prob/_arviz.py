"""Labelled inference results: NumPyro draws -> ArviZ `InferenceData` (arviz < 1) or `xarray.DataTree` (arviz >= 1).

Both ArviZ lines read a set of named groups of `xarray.Dataset`s with
`(chain, draw, ...)` dims; building those datasets here keeps one code path
for MCMC and SVI and avoids depending on either line's converter signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

_SAMPLE_DIMS = ("chain", "draw")


def arviz_major() -> int:
    import arviz

    return int(arviz.__version__.split(".")[0])


def dataset(
    arrays: Mapping[str, Any],
    dims: Mapping[str, tuple[str, ...]],
    coords: Mapping[str, Any],
    *,
    sample_dims: tuple[str, ...] = _SAMPLE_DIMS,
) -> xr.Dataset:
    """One group: every array has `sample_dims` leading, then the site's own dims."""
    data_vars, used_coords = {}, {}
    for name, value in arrays.items():
        value = np.asarray(value)
        extra = value.ndim - len(sample_dims)
        own = tuple(dims.get(name, ()))
        if len(own) != extra or any(d in coords and len(coords[d]) != n for d, n in zip(own, value.shape[-extra:] if extra else ())):
            own = tuple(f"{name}_dim_{i}" for i in range(extra))
        full = sample_dims + own
        data_vars[name] = (full, value)
        for dim, size in zip(full, value.shape):
            if dim in coords:
                used_coords[dim] = coords[dim]
            elif dim in _SAMPLE_DIMS:
                used_coords[dim] = np.arange(size)
    return xr.Dataset(data_vars, coords=used_coords)


def inference_data(groups: Mapping[str, xr.Dataset], attrs: Mapping[str, Any]):
    """`arviz.InferenceData` on arviz 0.x, `xarray.DataTree` (ArviZ's container) on arviz >= 1."""
    for ds in groups.values():
        ds.attrs.update(attrs)
    if arviz_major() < 1:
        import arviz

        return arviz.InferenceData(**groups)
    return xr.DataTree.from_dict(dict(groups))
