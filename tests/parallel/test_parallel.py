"""`sciax.parallel`: multi-device checks run in subprocesses, so this session keeps its single device.

`_eight_devices.py` runs every 8-device check in one subprocess (one JAX start-up);
`_two_processes.py` is started twice for a `jax.distributed` run on 127.0.0.1.
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import parallel, pde

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-12  # relative, float64

EQUAL = [
    "heat2d_Dirichlet_o8_8",
    "heat2d_Dirichlet_o8_8_grad",
    "heat3d_Periodic_o2_4x2",
    "heat2d_tsit5",
    "sponge2d_o4_8",
    "sponge2d_o4_8_grad",
    "sponge2d_o4_4x2",
    "wave2d_o8",
    "wave2d_o8_fwi_grad",
    "wave3d_o4",
    "wave2d_harmonic_o2",
    "wave2d_harmonic_o2_grad",
    "padded2d_o8_8",
    "padded2d_o8_8_grad",
    "padded3d_o8_4x2",
    "placed8_o4_p",
    "placed8_o4_seismogram",
    "placed8_o4_grad",
    "placed4x2_o2_p",
    "placed4x2_o2_seismogram",
    "placed4x2_o2_grad",
    "wideplaced8_o4_k2_p",
    "wideplaced8_o4_k2_seismogram",
    "wideplaced8_o4_k2_grad",
    "elastic_Dirichlet_o8_8",
    "elastic_Dirichlet_o8_8_grad",
    "elastic_CPML_o4_4x2",
    "elastic_vmap_shots",
    "elastic_Periodic_o2_4x2",
    "elastic_Dirichlet_o8_4x2_rk4",
    "wide2d_Neumann_o2_k4",
    "wide2d_Neumann_o2_k4_grad",
    "wide2d_Periodic_o4_k2",
    "wide3d_Dirichlet_o2_k2",
    "widerk4_Dirichlet_o2_k4",
    "widerk4_Dirichlet_o2_k4_grad",
    "widerk4_Neumann_o4_k2",
    "widerk4_Neumann_o4_k2_grad",
    "widerk4_Sponge_o2_k2",
    "fv_euler2d_4x2",
    "ns2d_slab",
    "ns2d_grad",
    "ks_slab",
    "ks_corrected_slab",
    "ks_corrected_slab_grad",
    "fft3d_pencil",
    "ensemble",
    "ensemble_grad",
    "seismic_shots_4x2",
    "seismic_shots_4x2_grad",
]
BAD_INPUT = [
    "not_divisible",
    "halo_wider_than_shard",
    "unknown_mesh_axis",
    "fft_sharded_last_axis",
    "fft_1d_not_square_divisible",
    "ensemble_not_divisible",
    "wide_halo_wider_than_shard",
    "wide_halo_interval_not_multiple",
    "wide_halo_rk4_wider_than_shard",
    "wide_halo_adaptive_method",
    "fv_halo_wider_than_shard",
    "seismic_shots_not_divisible",
    "elastic_wide_halo",
]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT))
    return env


def _parse(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        name, sep, value = rest.partition(": ")
        if kind in ("error", "raises", "gathers", "route") and sep:
            out[f"{kind} {name}"] = value
    return out


@pytest.fixture(scope="module")
def eight():
    proc = subprocess.run(
        [sys.executable, "-m", "tests.parallel._eight_devices"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0 and "done" in proc.stdout.splitlines(), proc.stdout[-3000:] + proc.stderr[-5000:]
    return _parse(proc.stdout)


@pytest.mark.parametrize("name", EQUAL)
def test_eight_devices_equal_single_device(eight, name):
    assert float(eight[f"error {name}"]) <= TOL, (name, eight[f"error {name}"])


def test_distributed_fft_gathers_nothing(eight):
    assert eight["gathers ns2d"] == "False"


def test_sharded_wave_holds_no_whole_field(eight):
    # The run-time checks of traced inputs (equinox.error_if) once made XLA gather whole fields onto one device.
    assert eight["gathers wave2d_o8_fields"] == "False"
    assert eight["gathers elastic_fields"] == "False"


def test_acoustic_blocks_take_the_padded_step(eight):
    assert eight["route padded2d_o8_8"] == "True" and eight["route padded3d_o8_4x2"] == "True"


@pytest.mark.parametrize("name", BAD_INPUT)
def test_bad_input_raises_clearly(eight, name):
    message = eight[f"raises {name}"]
    assert message.startswith(("ValueError", "TypeError")), message


def test_two_processes_equal_single_process():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "tests.parallel._two_processes"]
    procs = [
        subprocess.Popen(
            cmd + [str(i), str(port)], cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for i in range(2)
    ]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=240)
            outs.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for code, out, err in outs:
        assert code == 0, out[-2000:] + err[-4000:]
        assert float(_parse(out)["error two_processes"]) <= TOL


# ---- in this process: one device --------------------------------------------------------------


def test_this_session_keeps_one_device():
    assert len(jax.devices()) == 1


def test_one_device_mesh_equals_plain_path():
    mesh = parallel.make_mesh("slab")
    grid = pde.Grid((16, 8), 1.0)
    model = pde.fd.heat(grid, bc=pde.Neumann(), order=4)
    u0 = jnp.asarray(np.cos(np.pi * grid.meshgrid()[0]))
    ts = np.linspace(0.0, 1e-4, 3)
    run = lambda m: sciax.simulate(m, u0, ts, {"D": 1.0}, method=pde.RK4(1e-5)).ys  # noqa: E731
    np.testing.assert_allclose(run(parallel.shard(model, mesh)), run(model), rtol=1e-13, atol=0)
    spectral = pde.spectral.kuramoto_sivashinsky(pde.Grid(64, 8 * np.pi))
    v0 = jnp.asarray(np.cos(spectral.grid.coords()[0] / 4))
    run1 = lambda m: sciax.simulate(m, v0, ts * 1e3, None, method=pde.ETDRK4(dt=0.05)).ys  # noqa: E731
    np.testing.assert_allclose(run1(parallel.shard(spectral, mesh)), run1(spectral), rtol=1e-12, atol=1e-14)


def test_make_mesh_and_shard_bad_input():
    with pytest.raises(ValueError, match="decomposition"):
        parallel.make_mesh("cubes")
    with pytest.raises(ValueError, match="needs 4 devices"):
        parallel.make_mesh((2, 2))
    mesh = parallel.make_mesh((1,), names=("members",))
    heat = pde.fd.heat(pde.Grid((8, 8), 1.0), bc=pde.Neumann())
    with pytest.raises(ValueError, match="not grid dimensions"):
        parallel.shard(heat, mesh)
    with pytest.raises(ValueError, match="does not exist"):
        parallel.shard(heat, mesh, axes=("x", None))
    with pytest.raises(TypeError, match="mesh must be"):
        parallel.shard(heat, "mesh")
    with pytest.raises(TypeError, match="already sharded"):
        parallel.shard(parallel.shard(heat, mesh, axes=("members", None)), mesh)
    with pytest.raises(TypeError, match="finite-difference model"):
        parallel.shard(sciax.ode.ODE(lambda t, y, p: -y), mesh)


def test_rhs_reach_sets_the_wide_halo_of_rk4():
    grid = pde.Grid((16, 8), 1.0)
    assert [pde.fd.heat(grid, bc=pde.Neumann(), order=o).rhs_reach for o in (2, 4, 8)] == [1, 3, 7]
    assert pde.fd.advection_diffusion(grid, bc=pde.Neumann(), scheme="weno5").rhs_reach == 3  # WENO5 reads 3 points
    assert pde.fd.burgers(pde.Grid(16, 1.0), bc=pde.Periodic(), order=8).rhs_reach == 7
    assert pde.AcousticWave(grid, f0=1.0, bc=pde.Neumann(), order=4).rhs_reach == 3
    nested = pde.FDModel(grid, lambda t, u, p, m: u, bc=pde.Neumann(), reach=4)
    assert nested.rhs_reach == 4
    with pytest.raises(ValueError, match="reach must be"):
        pde.FDModel(grid, lambda t, u, p, m: u, bc=pde.Neumann(), reach=0)


def test_initialize_bad_input():
    with pytest.raises(ValueError, match="host:port"):
        parallel.initialize("localhost", 2, 0)
    with pytest.raises(ValueError, match="process_id"):
        parallel.initialize("127.0.0.1:1234", 2, 5)
    with pytest.raises(ValueError, match="num_processes"):
        parallel.initialize("127.0.0.1:1234", 0, 0)
