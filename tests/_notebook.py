"""Execute a notebook in a fresh kernel of *this* interpreter, at small size.

The kernel inherits the environment: notebooks read `SCIAX_NOTEBOOK_SMALL=1` to pick
small problem sizes. `PATH` is prefixed with this interpreter's folder because the
ipykernel kernelspec launches plain `python`, which must be the venv's one.
"""

import os
import pathlib
import re
import sys

import nbclient
import nbformat

from tests._xla_flags import fast_compile_flags

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"


def run_notebook(name: str, monkeypatch, workdir: pathlib.Path, *, optimize: bool = False, **env: str):
    """Run `notebooks/<name>` in `workdir`; return the executed notebook. Fails on any cell error.

    `optimize=True` runs the kernel with XLA's full optimisation instead of the suite's cheap code
    generation (`tests/_xla_flags.py`): for notebooks whose time goes into running programs (sampling,
    inversion) rather than compiling them."""
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("SCIAX_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if optimize:
        flags = set(fast_compile_flags())
        kept = [flag for flag in os.environ.get("XLA_FLAGS", "").split() if flag not in flags]
        monkeypatch.setenv("XLA_FLAGS", " ".join(kept))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()
    return notebook


def text_outputs(notebook) -> str:
    """All stream/text outputs of the executed notebook, concatenated."""
    parts = []
    for cell in notebook.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            parts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def printed_number(text: str, label: str) -> float:
    """The number the notebook printed right after `label`; fails if it printed none."""
    match = re.search(re.escape(label) + r"\s*([-+0-9.eE]+)", text)
    assert match, f"{label!r} not printed by the notebook"
    return float(match.group(1))
