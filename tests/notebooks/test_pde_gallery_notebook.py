"""notebooks/pde_gallery.ipynb at small size: KS, 2-D Navier-Stokes and Gray-Scott from the
spectral catalogue, with their conservation laws and budgets checked."""

import re

from tests._notebook import printed_number as _number
from tests._notebook import run_notebook, text_outputs


def test_pde_gallery_notebook(monkeypatch, tmp_path):
    text = text_outputs(run_notebook("pde_gallery.ipynb", monkeypatch, tmp_path))
    # KS conserves the mean of u; dt = 1/4 agrees with dt = 1/32 before chaos sets in.
    assert _number(text, "KS mean drift:") < 1e-10
    assert _number(text, "KS step error:") < 1e-3
    # Decaying 2-D turbulence: dE/dt = -2 nu Z.
    assert _number(text, "NS energy budget error:") < 0.02
    # Gray-Scott: the pattern grows from the seed over the box, concentrations stay in range.
    coverage = [float(c) for c in re.search(r"Gray-Scott coverage: ([0-9., ]+)", text).group(1).split(",")]
    assert len(coverage) == 3 and min(coverage) > 0.05
    low, high = map(float, re.search(r"Gray-Scott range: min ([-+0-9.eE]+), max ([-+0-9.eE]+)", text).groups())
    assert low > -0.1 and high < 1.1
