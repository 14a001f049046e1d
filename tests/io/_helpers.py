"""Small configs and comparisons shared by the io tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

KS_CONFIG = """\
[model]
name = "kuramoto_sivashinsky"
dtype = "float64"

[grid]
shape = 64
lengths = 100.0

[initial]
generator = "random"
seed = 3
amplitude = 0.1

[method]
name = "ETDRK4"
dt = 0.25

[time]
end = {end}
save_every = 0.5

[output]
path = "{output}"
chunk = {chunk}
"""


def write_ks_config(folder: Path, name: str = "ks", *, end: float = 20.0, chunk: int = 4) -> Path:
    """A Kuramoto–Sivashinsky run config in `folder` writing `<name>.zarr`; returns its path."""
    path = folder / f"{name}.toml"
    path.write_text(KS_CONFIG.format(end=end, output=f"{name}.zarr", chunk=chunk))
    return path


def assert_bitwise_equal(a: Path, b: Path) -> None:
    """Every variable and coordinate of the two zarr stores: same names, dtypes and bits."""
    da, db = xr.open_zarr(a, consolidated=False).load(), xr.open_zarr(b, consolidated=False).load()
    assert sorted(da.variables) == sorted(db.variables)
    for name in da.variables:
        x, y = da[name].values, db[name].values
        assert x.dtype == y.dtype, (name, x.dtype, y.dtype)
        assert x.shape == y.shape, (name, x.shape, y.shape)
        assert np.array_equal(x, y), f"{name} differs"
