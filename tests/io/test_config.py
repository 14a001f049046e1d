"""Run configs: a valid one runs and matches `sciax.simulate`; each kind of bad config names its key."""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import sciax
from sciax import cli, io

LV = """\
[model]
name = "lotka_volterra"

[params]
alpha = 0.55
beta = 0.028
gamma = 0.8
delta = 0.024

[initial]
generator = "constant"
values = [30.0, 4.0]

[method]
name = "Tsit5"
rtol = 1e-8
atol = 1e-8

[time]
end = 10.0
save_every = 0.5

[output]
path = "lv.zarr"
chunk = 6
"""

GRAY_SCOTT = """\
[model]
name = "gray_scott"
[grid]
shape = [16, 16]
lengths = 2.5
[params]
Du = 2e-5
Dv = 1e-5
F = 0.04
kappa = 0.06
[initial.u]
generator = "constant"
value = 1.0
[initial.v]
generator = "gaussian"
amplitude = 0.5
width = 0.1
[method]
name = "ETDRK4"
dt = 1.0
[time]
end = 20.0
save_every = 5.0
[output]
path = "gs.zarr"
"""


def _parse(text: str, **edits):
    """`parse_config` of `text` after edits given as `section__key=value` (`None` deletes)."""
    data = copy.deepcopy(tomllib.loads(text))
    for target, value in edits.items():
        section, _, key = target.partition("__")
        table = data.setdefault(section, {}) if key else data
        key = key or section
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    return io.parse_config(data, source="cfg.toml")


def test_lotka_volterra_config_runs_like_simulate(tmp_path):
    (tmp_path / "lv.toml").write_text(LV)
    summary = io.run_config(tmp_path / "lv.toml", progress=False)
    assert summary.output == tmp_path / "lv.zarr" and summary.n_chunks == 4 and summary.n_times == 21
    ds = summary.open()
    assert ds.attrs["model"] == "lotka_volterra" and ds.attrs["method"] == "Tsit5"
    assert ds["prey"].attrs["long_name"] == "prey population"
    assert ds["chunk_success"].values.all() and (ds["chunk_num_steps"].values > 0).all()
    params = {"alpha": 0.55, "beta": 0.028, "gamma": 0.8, "delta": 0.024}
    sol = sciax.simulate(
        sciax.ode.lotka_volterra(), np.array([30.0, 4.0]), np.linspace(0, 10, 21), params, rtol=1e-8, atol=1e-8
    )
    np.testing.assert_allclose(ds["prey"].values, np.asarray(sol.ys[:, 0]), rtol=1e-5)
    np.testing.assert_allclose(ds["time"].values, np.linspace(0, 10, 21))


def test_multi_field_config_builds_each_field():
    config = _parse(GRAY_SCOTT)
    assert config.y0.shape == (2, 16, 16) and config.chunk == 100
    np.testing.assert_array_equal(config.y0[0], 1.0)
    assert config.y0[1].max() == pytest.approx(0.5, rel=0.05) and config.ts.tolist() == [0, 5, 10, 15, 20]
    assert isinstance(config.method, sciax.pde.ETDRK4) and config.method.dt == 1.0


def test_generators_are_deterministic():
    a = _parse(
        GRAY_SCOTT, initial={"u": {"generator": "random", "seed": 7}, "v": {"generator": "sine", "modes": [2, 0]}}
    )
    b = _parse(
        GRAY_SCOTT, initial={"u": {"generator": "random", "seed": 7}, "v": {"generator": "sine", "modes": [2, 0]}}
    )
    np.testing.assert_array_equal(a.y0, b.y0)
    np.testing.assert_allclose(a.y0[1][:, 0], np.sin(2 * np.pi * 2 * np.arange(16) / 16), atol=1e-12)


@pytest.mark.parametrize(
    "edits, message",
    [
        ({"model__name": "lorenz"}, r"\[model\] name: unknown value 'lorenz'.*allowed: .*lotka_volterra"),
        ({"model__name": "lotka_voltera"}, r"did you mean 'lotka_volterra'"),
        ({"params__delta": None}, r"\[params\]: missing key 'delta'; expected a number"),
        ({"time__end": None}, r"\[time\]: missing key 'end'"),
        ({"output": None}, r"missing section \[output\]"),
        ({"params__alpha": "0.55"}, r"\[params\] alpha: expected a number, got '0.55' \(string\)"),
        ({"output__chunk": 2.5}, r"\[output\] chunk: expected an integer >= 1, got 2.5 \(number\)"),
        ({"initial__values": [30.0]}, r"\[initial\] values: expected an array of 2 numbers"),
        ({"method__atol": -1e-6}, r"\[method\] atol: expected a number > 0, got -1e-06"),
        ({"time__save_every": 0.0}, r"\[time\] save_every: expected a number > 0"),
        ({"time__end": -1.0}, r"\[time\] end: expected a number > start \(0\)"),
        ({"time__save_every": 0.3}, r"\[time\] save_every: expected a value dividing"),
        ({"params__epsilon": 1.0}, r"\[params\]: unknown key 'epsilon'; allowed: alpha, beta, delta, gamma"),
        ({"method__dtt": 0.1}, r"\[method\]: unknown key 'dtt' .*; allowed: atol, dt0, max_steps, name, rtol"),
        ({"solver": {"name": "x"}}, r"cfg.toml: unknown section 'solver'; allowed: grid, .*time"),
        ({"grid": {"shape": 8, "lengths": 1.0}}, r"\[grid\]: 'lotka_volterra' is an ODE model and takes no grid"),
        ({"method__name": "ETDRK4"}, r"\[method\] name: unknown value 'ETDRK4'.*allowed: Dopri5"),
        ({"initial__generator": "random"}, r"\[initial\] generator: unknown value 'random'.*allowed: constant"),
    ],
)
def test_bad_ode_config_names_the_key(edits, message):
    with pytest.raises(io.ConfigError, match=message):
        _parse(LV, **edits)


@pytest.mark.parametrize(
    "edits, message",
    [
        ({"method__dt": -0.5}, r"\[method\] dt: expected a number > 0, got -0.5 \(number\)"),
        ({"method__dt": 0.0}, r"\[method\] dt: expected a number > 0"),
        ({"method__dt": None}, r"\[method\]: missing key 'dt'; expected a number > 0"),
        ({"method__dt": 2.0}, r"\[method\] dt: .* divide \[time\] save_every = 5"),
        ({"method__rtol": 1e-6}, r"\[method\]: unknown key 'rtol'; allowed: dt, name"),
        ({"grid": None}, r"\[grid\]: missing section; 'gray_scott' is a PDE"),
        ({"grid__shape": [16, 1]}, r"\[grid\] shape: 'gray_scott' needs 1 or 2 or 3 dimension"),
        ({"grid__lengths": [1.0, 2.0, 3.0]}, r"\[grid\] lengths: expected one number or 2"),
        ({"grid__lengths": -2.5}, r"\[grid\] lengths: expected an array of numbers > 0"),
        ({"grid__spacing": 0.1}, r"\[grid\]: unknown key 'spacing'; allowed: lengths, origin, shape"),
        ({"initial": {"u": {"generator": "constant", "value": 1.0}}}, r"missing table \[initial.v\]"),
        (
            {"initial": {"u": {"generator": "constant", "value": 1.0}, "v": {"generator": "gaussian"}}},
            r"\[initial.v\]: missing key 'width'",
        ),
        (
            {"initial": {"u": {"generator": "constant", "value": 1.0}, "v": {"generator": "random", "seed": -1}}},
            r"\[initial.v\] seed: expected an integer >= 0",
        ),
        (
            {"initial": {"u": {"generator": "constant", "value": 1.0}, "v": {"generator": "constant", "vaule": 0}}},
            r"\[initial.v\]: unknown key 'vaule' \(did you mean 'value'\?\)",
        ),
        ({"initial": {"u": {"generator": "pickle"}, "v": {}}}, r"\[initial.u\] generator: unknown value 'pickle'"),
        ({"initial__w": {"generator": "constant", "value": 0.0}}, r"\[initial\]: unknown key 'w'; allowed: u, v"),
        ({"model__dtype": "float16"}, r"\[model\] dtype: unknown value 'float16'.*allowed: float32, float64"),
        ({"output__path": "gs.nc"}, r"\[output\] path: expected a path ending in .zarr"),
        ({"output__checkpoint": 3}, r"\[output\] checkpoint: expected true, false or a path"),
    ],
)
def test_bad_pde_config_names_the_key(edits, message):
    with pytest.raises(io.ConfigError, match=message):
        _parse(GRAY_SCOTT, **edits)


def test_cli_reports_a_bad_config_in_one_line(tmp_path, capsys):
    (tmp_path / "bad.toml").write_text(LV.replace('name = "Tsit5"', 'name = "Tsit5"\ndt = -0.1'))
    assert cli.main(["run", str(tmp_path / "bad.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sciax run: invalid config:") and "[method]: unknown key 'dt'" in err
    (tmp_path / "broken.toml").write_text("[model\nname = 1")
    assert cli.main(["run", str(tmp_path / "broken.toml")]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert cli.main(["run", str(tmp_path / "missing.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_run_prints_a_summary_and_refuses_to_clobber(tmp_path, capsys):
    (tmp_path / "lv.toml").write_text(LV)
    assert cli.main(["run", str(tmp_path / "lv.toml"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "lotka_volterra with Tsit5" in out and "times stored:  21 on [0, 10]" in out and "fresh start" in out
    (tmp_path / "lv.zarr.checkpoint").unlink()
    assert cli.main(["run", str(tmp_path / "lv.toml"), "--no-progress"]) == 1
    assert "already exists and there is no checkpoint" in capsys.readouterr().err
    assert cli.main(["run", str(tmp_path / "lv.toml"), "--no-progress", "--overwrite"]) == 0
    assert xr.open_zarr(tmp_path / "lv.zarr").sizes["time"] == 21


def test_example_config_in_the_docs_is_valid():
    docs = (Path(__file__).parents[2] / "docs" / "io.md").read_text()
    example = re.search(r"### Example\s+```toml\n(.*?)```", docs, re.S).group(1)
    config = io.parse_config(tomllib.loads(example), source="docs/io.md", base="/data")
    assert config.model_name == "kuramoto_sivashinsky" and config.ts[-1] == 1000.0 and len(config.ts) == 2001
    assert config.output == Path("/data/ks.zarr") and config.netcdf == Path("/data/ks.nc") and config.chunk == 200


# ---- finite-difference catalogue -------------------------------------------------------------------------

FD_HEAT = """\
[model]
name = "fd_heat"
dtype = "float64"
order = 4
[grid]
shape = 64
lengths = 1.0
bc = "periodic"
[params]
D = 0.01
[initial]
generator = "sine"
modes = 2
[method]
name = "RK4"
dt = 0.01
[time]
end = 1.0
save_every = 0.25
[output]
path = "heat.zarr"
chunk = 2
"""

FD_GRAY_SCOTT = """\
[model]
name = "fd_gray_scott"
[grid]
shape = [12, 12]
lengths = 1.0
bc = ["periodic", "neumann"]
[params]
Du = 2e-5
Dv = 1e-5
F = 0.04
k = 0.06
[initial.u]
generator = "constant"
value = 1.0
[initial.v]
generator = "gaussian"
amplitude = 0.5
width = 0.1
[method]
name = "RK4"
dt = 1.0
[time]
end = 6.0
save_every = 2.0
[output]
path = "gs.zarr"
chunk = 1
"""


@pytest.mark.parametrize(
    "method",
    [{"name": "RK4", "dt": 0.01}, {"name": "CrankNicolson", "dt": 0.05}, {"name": "Tsit5", "rtol": 1e-9, "atol": 1e-9}],
)
def test_fd_heat_config_decays_like_the_exact_solution(tmp_path, method):
    config = _parse(FD_HEAT, method=method)
    assert isinstance(config.method, getattr(sciax.pde if method["name"] != "Tsit5" else sciax.ode, method["name"]))
    assert config.model.order == 4
    config = dataclasses_replace(config, output=tmp_path / "heat.zarr")
    ds = io.run_config(config, progress=False).open()
    x, t = ds["x"].values, ds["time"].values
    # A sine of mode 2 on a periodic domain of length 1 decays as exp(-D (4 pi)^2 t).
    exact = np.sin(4 * np.pi * x)[None, :] * np.exp(-0.01 * (4 * np.pi) ** 2 * t)[:, None]
    # Order-4 stencil at 32 points per wavelength: ~5e-6; Crank–Nicolson adds its O(dt^2) error.
    tol = 2e-3 if method["name"] == "CrankNicolson" else 2e-5
    np.testing.assert_allclose(ds["u"].values, exact, atol=tol)


def test_fd_advection_diffusion_takes_a_velocity_per_axis(tmp_path):
    text = FD_HEAT.replace('"fd_heat"', '"fd_advection_diffusion"\nscheme = "weno5"').replace(
        "D = 0.01", "D = 0.001\nvelocity = [0.5]"
    )
    config = dataclasses_replace(_parse(text), output=tmp_path / "ad.zarr")
    assert config.params["velocity"] == (0.5,)
    ds = io.run_config(config, progress=False).open()
    x, t = ds["x"].values, ds["time"].values
    exact = np.sin(4 * np.pi * (x[None, :] - 0.5 * t[:, None])) * np.exp(-0.001 * (4 * np.pi) ** 2 * t)[:, None]
    np.testing.assert_allclose(ds["u"].values, exact, atol=2e-3)  # WENO5 at 32 points per wavelength


def test_fd_multi_field_state_is_a_dict_and_resumes_bitwise(tmp_path, monkeypatch):
    from sciax.io import _run

    config = _parse(FD_GRAY_SCOTT)
    assert set(config.y0) == {"u", "v"} and config.y0["v"].shape == (12, 12)
    assert len(config.model.halo.sides) == 2
    reference = io.run_config(dataclasses_replace(config, output=tmp_path / "ref.zarr"), progress=False)
    real, calls = _run.write_checkpoint, []

    def flaky(path, checkpoint):  # a kill after the first chunk's append, before its checkpoint
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt("simulated kill")
        return real(path, checkpoint)

    interrupted = dataclasses_replace(config, output=tmp_path / "gs.zarr")
    monkeypatch.setattr(_run, "write_checkpoint", flaky)
    with pytest.raises(KeyboardInterrupt):
        io.run_config(interrupted, progress=False)
    monkeypatch.undo()
    resumed = io.run_config(interrupted, progress=False)
    assert resumed.resumed_at == 1
    a, b = reference.open().load(), resumed.open().load()
    for name in ("u", "v"):
        assert a[name].dims == ("time", "x", "y")
        np.testing.assert_array_equal(a[name].values, b[name].values)


def dataclasses_replace(config, **changes):
    import dataclasses

    return dataclasses.replace(config, **changes)


@pytest.mark.parametrize(
    "edits, message",
    [
        ({"grid__bc": None}, r"\[grid\]: missing key 'bc'; finite-difference models need boundary conditions"),
        ({"grid__bc": "reflecting"}, r"\[grid\] bc: unknown value 'reflecting'; allowed: dirichlet, neumann, periodic"),
        ({"grid__bc": ["periodic", "periodic", "periodic"]}, r"\[grid\] bc: expected .* an array of 1 of them"),
        ({"grid__bc": 0}, r"\[grid\] bc: expected one of 'periodic'"),
        ({"grid__bc_value": 1.0}, r"\[grid\] bc_value: periodic boundaries take no value"),
        ({"grid__bc_value": "1"}, r"\[grid\] bc_value: expected a number, got '1' \(string\)"),
        ({"model__order": 3}, r"\[model\] order: expected one of 2, 4, 6, 8, got 3"),
        ({"model__order": 4.0}, r"\[model\] order: expected an integer, got 4.0"),
        ({"model__scheme": "weno5"}, r"\[model\]: unknown key 'scheme'; allowed: dtype, name, order"),
        ({"params__D": -0.01}, r"\[params\] D: expected a number > 0, got -0.01"),
        ({"params__D": "hot"}, r"\[params\] D: expected a number > 0, got 'hot' \(string\)"),
        ({"method__dt": -0.01}, r"\[method\] dt: expected a number > 0, got -0.01"),
        (
            {"method__dt": 0.05},
            r"\[method\] dt: RK4 is unstable .* above dt = 0.01\d+ \(CFL condition\); got dt = 0.05",
        ),
        ({"method__name": "Leapfrog"}, r"\[method\] name: unknown value 'Leapfrog'.*allowed: .*BackwardEuler.*RK4"),
        ({"method__name": "ETDRK4"}, r"\[method\] name: unknown value 'ETDRK4'"),
        ({"initial__field": "u"}, r"\[initial\]: unknown key 'field'"),
        ({"grid__shape": [8, 8, 8, 8]}, r"\[grid\] shape: 'fd_heat' needs 1 or 2 or 3 dimension"),
    ],
)
def test_bad_fd_config_names_the_key(edits, message):
    with pytest.raises(io.ConfigError, match=message):
        _parse(FD_HEAT, **edits)


def test_bad_fd_config_specifics():
    with pytest.raises(io.ConfigError, match=r"\[params\] velocity: expected an array of 1 numbers"):
        _parse(
            FD_HEAT.replace('"fd_heat"', '"fd_advection_diffusion"').replace(
                "D = 0.01", "D = 0.01\nvelocity = [1.0, 2.0]"
            )
        )
    with pytest.raises(io.ConfigError, match=r"\[params\]: missing key 'velocity'"):
        _parse(FD_HEAT.replace('"fd_heat"', '"fd_advection_diffusion"'))
    with pytest.raises(io.ConfigError, match=r"\[model\] scheme: unknown value 'upwnd' \(did you mean 'upwind'\?\)"):
        _parse(
            FD_HEAT.replace('"fd_heat"', '"fd_advection_diffusion"\nscheme = "upwnd"').replace(
                "D = 0.01", "D = 0.01\nvelocity = 1.0"
            )
        )
    with pytest.raises(io.ConfigError, match=r"\[grid\] shape: 'fd_burgers' needs 1 dimension"):
        _parse(FD_GRAY_SCOTT.replace('"fd_gray_scott"', '"fd_burgers"'))
    with pytest.raises(io.ConfigError, match=r"\[grid\]: unknown key 'bc'; 'gray_scott' is a spectral model, periodic"):
        _parse(GRAY_SCOTT.replace("lengths = 2.5", 'lengths = 2.5\nbc = "periodic"'))
    with pytest.raises(io.ConfigError, match=r"missing table \[initial.v\]"):
        _parse(FD_GRAY_SCOTT, initial={"u": {"generator": "constant", "value": 1.0}})


def test_every_toml_example_in_the_docs_is_valid():
    docs = (Path(__file__).parents[2] / "docs" / "io.md").read_text()
    examples = re.findall(r"```toml\n(.*?)```", docs, re.S)
    assert len(examples) >= 3
    fd = [tomllib.loads(text) for text in examples if '"fd_heat"' in text]
    assert len(fd) == 1
    config = io.parse_config(fd[0], source="docs/io.md", base="/data")
    assert isinstance(config.method, sciax.pde.CrankNicolson) and config.model.order == 4
    low, high = config.model.halo.sides[0]
    assert isinstance(low, sciax.pde.Dirichlet) and isinstance(config.model.halo.sides[1][1], sciax.pde.Neumann)
