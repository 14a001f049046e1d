"""notebooks/shocks_and_finite_volumes.ipynb at small size: Sod against the exact Riemann solution
and Shu-Osher against a fine reference for four reconstructions, a dam break over a bump against
Stoker's solution, and a 2-D four-quadrant Riemann problem that keeps its diagonal symmetry."""

from tests._notebook import printed_number as _number
from tests._notebook import run_notebook, text_outputs

SCHEMES = ("piecewise constant", "MUSCL minmod", "MUSCL MC", "WENO5-Z")


def test_shocks_and_finite_volumes_notebook(monkeypatch, tmp_path):
    text = text_outputs(run_notebook("shocks_and_finite_volumes.ipynb", monkeypatch, tmp_path))
    # Sod on 200 cells of [-5, 5] (x10 Sod's [0, 1]): the L1 density error against the exact
    # solution falls from first order through the two limiters to WENO5-Z.
    sod = [_number(text, f"Sod L1 error {name}:") for name in SCHEMES]
    assert sod == sorted(sod, reverse=True), sod
    assert sod[-1] < 0.025 and sod[0] < 0.15
    # Shu-Osher against WENO5-Z on a 4x finer grid: the same ranking.
    shu = [_number(text, f"Shu-Osher L1 error {name}:") for name in SCHEMES]
    assert shu == sorted(shu, reverse=True), shu
    assert shu[-1] < 0.6
    # Dam break: Stoker's surface before the bore reaches the bump; walls conserve the volume.
    assert _number(text, "dam break L1 error vs Stoker at t = 0.4:") < 0.07
    assert _number(text, "dam break volume drift:") < 1e-12
    assert _number(text, "dam break min depth:") > 0
    # 2-D Riemann problem: symmetric under swapping the axes, density and pressure positive.
    assert _number(text, "2-D symmetry error:") < 1e-12
    assert _number(text, "2-D min density:") > 0
    assert _number(text, "min pressure:") > 0
