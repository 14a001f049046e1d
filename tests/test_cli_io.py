"""The `sciax` command and netCDF output."""

import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest
import xarray as xr

import sciax
from sciax import cli


@pytest.mark.slow
def test_demo_writes_netcdf_and_png(tmp_path, capsys):
    import arviz as az
    import matplotlib.image

    assert cli.main(["demo", "--out", str(tmp_path), "--members", "64", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "members:" in out and "run time:" in out and "Gray–Scott" in out and "lynx–hare" in out
    assert "Total:" in out
    ds = xr.open_dataset(tmp_path / "ensemble.nc", engine="h5netcdf")
    assert ds["prey"].dims == ("member", "time") and ds.sizes["member"] == 64
    assert bool(ds.attrs["success"])
    pde = xr.open_dataset(tmp_path / "pde.nc", engine="h5netcdf")
    assert pde["v"].dims == ("time", "x", "y") and pde.sizes["x"] == 32 and bool(pde.attrs["success"])
    assert np.isfinite(pde["v"].values).all() and float(pde["v"].isel(time=-1).std()) > 0
    posterior = az.from_netcdf(tmp_path / "posterior.nc").posterior
    assert {"alpha", "beta", "gamma", "delta"} <= set(posterior.data_vars)
    assert posterior.sizes["chain"] == 2 and posterior.sizes["draw"] == 40
    for name in ("ensemble", "pde", "posterior"):
        png = (tmp_path / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, name
        image = matplotlib.image.imread(tmp_path / f"{name}.png")
        assert image.ndim == 3 and min(image.shape[:2]) > 200, name


def test_python_dash_m_entry_point():
    done = subprocess.run([sys.executable, "-m", "sciax", "--help"], capture_output=True, text=True, check=True)
    assert "demo" in done.stdout


def test_bad_member_count_is_an_error(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--members", "0"])
    assert "--members must be >= 1" in capsys.readouterr().err


def test_save_round_trip(tmp_path):
    model = sciax.ode.ODE(lambda t, y, p: -y, names=("u",), units={"u": "K"})
    sol = sciax.simulate(model, jnp.array([1.0]), jnp.linspace(0.0, 1.0, 5))
    path = sciax.io.save(sol, tmp_path / "out" / "run.nc")
    back = xr.open_dataset(path, engine="h5netcdf")
    np.testing.assert_allclose(back["u"].values, np.asarray(sol.ys[:, 0]))
    assert back["u"].attrs["units"] == "K"
    assert not list(path.parent.glob("*.tmp"))
    with pytest.raises(ValueError, match="must end in .nc"):
        sciax.io.save(sol, tmp_path / "run.txt")


def test_saved_files_get_default_permissions(tmp_path):
    import os
    import stat

    sol = sciax.simulate(sciax.ode.ODE(lambda t, y, p: -y), jnp.array([1.0]), jnp.linspace(0.0, 1.0, 3))
    path = sciax.io.save(sol, tmp_path / "run.nc")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
