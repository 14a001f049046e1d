"""notebooks/ensembles.ipynb at small size: vmapped ODE and PDE ensembles give the known science."""

from tests._notebook import printed_number as _number
from tests._notebook import run_notebook, text_outputs


def test_ensembles_notebook(monkeypatch, tmp_path):
    text = text_outputs(run_notebook("ensembles.ipynb", monkeypatch, tmp_path))
    # Lorenz-63: spread growth of a 1e-8 perturbation gives the largest Lyapunov exponent (0.906).
    assert 0.6 < _number(text, "Lyapunov exponent estimate:") < 1.2
    # rho-ensemble: stable convective fixed points z* = rho - 1 for 1 < rho < 20.
    assert _number(text, "fixed point error:") < 1e-2
    # Members spread over a device mesh equal the plain vmap.
    assert _number(text, "parallel difference:") < 1e-8
    # KS: 1e-6 perturbations grow by orders of magnitude and saturate near the climatological spread.
    assert _number(text, "KS growth factor:") > 1e4
    assert 0.5 < _number(text, "final spread / climate std:") < 1.5
    # Burgers viscosity ensemble against the exact Cole-Hopf solution.
    assert _number(text, "Burgers max error:") < 1e-4
