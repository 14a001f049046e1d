"""The inference and sensitivity notebooks run end to end (at small sizes)."""

import pytest

from tests._notebook import run_notebook


@pytest.mark.parametrize("name", ["sensitivity_analysis.ipynb", "lotka_volterra_inference.ipynb"])
def test_notebook_executes(name, monkeypatch, tmp_path):
    notebook = run_notebook(name, monkeypatch, tmp_path)
    errors = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"
    ]
    assert not errors
