"""`sciax.io.save` to zarr (netCDF is covered in tests/test_cli_io.py)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import sciax


def test_save_zarr_round_trip_and_replace(tmp_path):
    model = sciax.ode.ODE(lambda t, y, p: -y, names=("u",), units={"u": "K"})
    sol = sciax.simulate(model, jnp.array([1.0]), jnp.linspace(0.0, 1.0, 5))
    path = sciax.io.save(sol, tmp_path / "run.zarr")
    back = xr.open_zarr(path)
    np.testing.assert_array_equal(back["u"].values, np.asarray(sol.ys[:, 0]))
    assert back["u"].attrs["units"] == "K"
    sciax.io.save(sol.to_xarray().isel(time=slice(0, 2)), path)  # replaces the store whole
    assert xr.open_zarr(path).sizes["time"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.zarr"]  # no temporaries left


def test_save_refuses_to_replace_a_folder_that_is_not_a_store(tmp_path):
    ds = xr.Dataset({"a": ("t", np.arange(3.0))})
    (tmp_path / "mine.zarr").mkdir()
    (tmp_path / "mine.zarr" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="is not a zarr store; refusing to replace it"):
        sciax.io.save(ds, tmp_path / "mine.zarr")
    with pytest.raises(ValueError, match=r"must end in .nc \(netCDF\) or .zarr"):
        sciax.io.save(ds, tmp_path / "run.h5")
    assert (tmp_path / "mine.zarr" / "notes.txt").read_text() == "keep me"
