"""Executes notebooks/full_waveform_inversion.ipynb at small size (the notebook asserts the velocity error falls)."""

from tests._notebook import run_notebook, text_outputs


def test_fwi_notebook_runs_small(monkeypatch, tmp_path):
    notebook = run_notebook("full_waveform_inversion.ipynb", monkeypatch, tmp_path, optimize=True, JAX_ENABLE_X64="0")
    assert "velocity RMS error" in text_outputs(notebook)
