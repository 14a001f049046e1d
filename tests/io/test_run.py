"""`sciax.io.run`: chunked runs match `simulate`, stream 10^5 steps, stop cleanly on a failed chunk."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import sciax
from sciax import io


def _decay(t, y, p):
    return {"a": -p["k"] * y["a"], "b": p["k"] * y["a"]}


DECAY = sciax.ode.ODE(_decay, units={"a": "mol", "b": "mol"})


def test_chunked_run_matches_one_simulate_call(tmp_path):
    y0, ts, params = {"a": jnp.array(1.0), "b": jnp.array(0.0)}, np.linspace(0.0, 3.0, 31), {"k": 0.7}
    summary = io.run(
        DECAY,
        y0,
        ts,
        params,
        output=tmp_path / "decay.zarr",
        chunk=6,
        progress=False,
        netcdf=tmp_path / "decay.nc",
        rtol=1e-9,
        atol=1e-9,
        attrs={"title": "decay"},
    )
    assert summary.n_chunks == 5 and summary.n_times == 31 and summary.num_steps > 0
    ds = summary.open()
    np.testing.assert_allclose(ds["a"].values, np.exp(-0.7 * ts), rtol=1e-7)
    np.testing.assert_allclose(ds["a"].values + ds["b"].values, 1.0, rtol=1e-9)
    assert ds["a"].attrs["units"] == "mol" and ds.attrs["title"] == "decay" and ds.attrs["n_chunks"] == 5
    assert ds.sizes["chunk"] == 5 and ds["chunk_success"].values.all()
    np.testing.assert_allclose(ds["chunk_end_time"].values, ts[[6, 12, 18, 24, 30]])
    copy = xr.open_dataset(summary.netcdf, engine="h5netcdf")
    np.testing.assert_array_equal(copy["b"].values, ds["b"].values)
    checkpoint = io.read_checkpoint(summary.checkpoint)
    assert checkpoint.done and checkpoint.rows_written == 31 and checkpoint.time == 3.0
    np.testing.assert_array_equal(checkpoint.state[0], ds["a"].values[-1])  # leaves in pytree order: a, b


def test_100k_steps_stream_through_small_chunks(tmp_path):
    """Heat equation, ETDRK1 (exact for a linear equation): 10^5 steps, one chunk in memory at a time."""
    grid = sciax.pde.Grid(16, 2 * np.pi)
    (x,) = grid.coords()
    ts = np.arange(0.0, 1001.0, 10.0)
    summary = io.run(
        sciax.pde.spectral.heat(grid),
        jnp.asarray(np.sin(x)),
        ts,
        {"nu": 1e-3},
        method=sciax.pde.ETDRK1(dt=0.01),
        output=tmp_path / "heat.zarr",
        chunk=25,
        progress=False,
    )
    assert summary.num_steps == 100_000 and summary.n_chunks == 4
    u = summary.open()["u"]
    assert u.dims == ("time", "x") and u.sizes["time"] == 101
    np.testing.assert_allclose(u.values, np.exp(-1e-3 * ts)[:, None] * np.sin(x), atol=1e-10)


def test_failed_chunk_stops_the_run_and_keeps_what_came_before(tmp_path):
    blow_up = sciax.ode.ODE(lambda t, y, p: y**2)  # y = 1 / (1.25 - t): infinite at t = 1.25
    ts = np.linspace(0.0, 2.0, 21)
    with pytest.raises(io.RunFailed, match=r"chunk 3 of 4 \(t = 1 to 1.5\) failed.*complete and checkpointed"):
        io.run(blow_up, jnp.array([0.8]), ts, output=tmp_path / "b.zarr", chunk=5, progress=False, max_steps=500)
    ds = xr.open_zarr(tmp_path / "b.zarr", consolidated=False)
    assert ds["chunk_success"].values.tolist() == [True, True, False]
    np.testing.assert_allclose(ds["y"].values[:11, 0], 1 / (1.25 - ts[:11]), rtol=1e-5)
    assert io.read_checkpoint(tmp_path / "b.zarr.checkpoint").chunks_done == 2


def test_bad_arguments_are_named(tmp_path):
    y0, ts = {"a": jnp.array(1.0), "b": jnp.array(0.0)}, np.linspace(0.0, 1.0, 5)
    run = lambda **kw: io.run(DECAY, y0, ts, {"k": 1.0}, progress=False, **kw)  # noqa: E731
    with pytest.raises(ValueError, match=r"output must be a zarr store, a path ending in .zarr; got '.*out.nc'"):
        run(output=tmp_path / "out.nc")
    with pytest.raises(ValueError, match="chunk must be an integer >= 1.*got 0"):
        run(output=tmp_path / "out.zarr", chunk=0)
    with pytest.raises(ValueError, match="netcdf must be a netCDF file"):
        run(output=tmp_path / "out.zarr", netcdf=tmp_path / "copy.zarr")
    with pytest.raises(TypeError, match="checkpoint must be True, False or a path"):
        run(output=tmp_path / "out.zarr", checkpoint=3)
    with pytest.raises(TypeError, match="model must be a sciax.AbstractModel"):
        io.run(_decay, y0, ts, output=tmp_path / "out.zarr")
    assert not (tmp_path / "out.zarr").exists()
    run(output=tmp_path / "out.zarr", checkpoint=False)
    assert not (tmp_path / "out.zarr.checkpoint").exists()
    with pytest.raises(FileExistsError, match="already exists and there is no checkpoint.*checkpointing is off"):
        run(output=tmp_path / "out.zarr", checkpoint=False)
    (tmp_path / "notes.zarr").mkdir()
    with pytest.raises(FileExistsError, match="is not a zarr store; refusing to delete it"):
        run(output=tmp_path / "notes.zarr", overwrite=True)
