"""Bad output paths: refused before anything runs, with a message naming the path and the problem."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import sciax
from sciax import cli, io

from ._helpers import write_ks_config


def _decay(t, y, p):
    return -y


def test_output_below_a_file_is_refused_naming_the_path(tmp_path):
    (tmp_path / "afile").write_text("")
    output = tmp_path / "afile" / "out.zarr"
    with pytest.raises(NotADirectoryError, match=r"output '.*afile/out\.zarr' cannot be created: '.*afile' is a file"):
        io.run(sciax.ode.ODE(_decay), jnp.array(1.0), np.linspace(0.0, 1.0, 3), output=output, progress=False)
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]  # refused before writing anything


def test_cli_unwritable_output_is_one_line_and_exit_code_1(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    config = write_ks_config(tmp_path, end=1.0, chunk=2)
    config.write_text(config.read_text().replace('path = "ks.zarr"', 'path = "afile/ks.zarr"'))
    assert cli.main(["run", str(config), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "output" in err and "afile/ks.zarr" in err and "is a file, not a folder" in err
