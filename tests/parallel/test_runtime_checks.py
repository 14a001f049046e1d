"""Run-time checks on a sharded grid raise their error (`_runtime_checks.py`, 2 CPU devices in a subprocess).

A traced bad input on one block only (a velocity <= 0, a step above the CFL limit, NaN in y0, a state
that turns NaN) once aborted the whole process after XLA:CPU's 40 s rendezvous timeout; now every block
fails the check together and `simulate` raises the check's own message.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

EXPECTED = {
    "acoustic_c": 'params["c"] must be > 0 everywhere',
    "acoustic_rho": 'params["rho"] must be > 0 everywhere',
    "acoustic_cfl": "dt exceeds the CFL limit",
    "acoustic_y0": "contains NaN or inf",
    "acoustic_nonfinite": "the state became NaN or inf under Leapfrog",
    "wide_c": 'params["c"] must be > 0 everywhere',
    "wide_cfl": "Leapfrog dt exceeds the CFL limit",
    "heat_d": 'params["D"] must be > 0 everywhere',
    "heat_cfl": "dt exceeds the CFL limit",
    "elastic_bulk": "the bulk modulus is not positive",
    "elastic_rho": 'params["rho"] must be > 0 everywhere',
    "fv_density": "needs density > 0 and pressure > 0",
    "spectral_y0": "contains NaN or inf",
}
GOOD = ["acoustic_ok", "wide_ok", "heat_ok", "elastic_ok", "fv_ok", "spectral_ok"]


@pytest.fixture(scope="module")
def lines():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT / "src") + os.pathsep + str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "tests.parallel._runtime_checks"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = {}
    for line in proc.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        name, sep, value = rest.partition(": ")
        if sep:
            out[name] = (kind, value)
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_on_one_block_raises_its_error(lines, name):
    kind, message = lines[name]
    assert kind == "raised" and EXPECTED[name] in message, (kind, message)


@pytest.mark.parametrize("name", GOOD)
def test_good_input_runs(lines, name):
    assert lines[name] == ("returned", "finite")
