"""notebooks/universal_differential_equation.ipynb at small size: an MLP inside the
Lotka-Volterra right-hand side, trained through sciax.simulate, learns the missing terms."""

import re

from tests._notebook import run_notebook, text_outputs


def test_universal_differential_equation_notebook(monkeypatch, tmp_path):
    notebook = run_notebook("universal_differential_equation.ipynb", monkeypatch, tmp_path, JAX_ENABLE_X64="0")
    text = text_outputs(notebook)
    initial, final = map(float, re.search(r"loss: ([-+0-9.eE]+) -> ([-+0-9.eE]+)", text).groups())
    assert final < 0.01 * initial  # the loss clearly falls
    noise = float(re.search(r"noise level ([-+0-9.eE]+)", text).group(1))
    assert final < 5 * noise  # and gets near the noise level of the data
    # The learned terms match -beta*x*y and delta*x*y along the data (to within the fit).
    assert float(re.search(r"learned-term relative error: ([-+0-9.eE]+)", text).group(1)) < 0.5
    # Sparse regression on the network recovers beta = 0.9 and delta = 1.8 ...
    beta, delta = map(float, re.search(r"recovered beta ([-+0-9.eE]+), delta ([-+0-9.eE]+)", text).groups())
    assert abs(beta - 0.9) < 0.15 * 0.9 and abs(delta - 1.8) < 0.15 * 1.8
    # ... and the recovered equation extrapolates far beyond the training window.
    equation = re.search(r"extrapolation RMS error: UDE [-+0-9.eEna]+, equation ([-+0-9.eE]+)", text).group(1)
    assert float(equation) < 0.3
