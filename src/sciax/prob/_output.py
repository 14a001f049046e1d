"""Names and coordinates of the output axes of a sensitivity analysis."""

from __future__ import annotations

import numpy as np


def output_dims(out_shape, output_dims) -> tuple[str, ...]:
    if output_dims is None:
        return tuple(f"output_dim_{i}" for i in range(len(out_shape)))
    output_dims = (output_dims,) if isinstance(output_dims, str) else tuple(output_dims)
    if len(output_dims) != len(out_shape):
        raise ValueError(
            f"output_dims {output_dims} names {len(output_dims)} axes, but the output has shape {out_shape}"
        )
    return output_dims


def output_coords(dims, out_shape, output_coords) -> dict:
    coords = {}
    for dim, values in (output_coords or {}).items():
        if dim not in dims:
            raise ValueError(f"output_coords names {dim!r}, which is not one of output_dims {dims}")
        values = np.asarray(values)
        size = out_shape[dims.index(dim)]
        if values.shape != (size,):
            raise ValueError(f"output_coords[{dim!r}] has shape {values.shape}; expected ({size},)")
        coords[dim] = values
    return coords
