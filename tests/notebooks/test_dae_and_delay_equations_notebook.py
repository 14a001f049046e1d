"""notebooks/dae_and_delay_equations.ipynb at small size: a diode-clipper DAE agrees with its
hand-reduced ODE solved by scipy's Radau, and a delayed SEIR model fitted with NUTS recovers
the parameters (rates and the delay) that generated its synthetic data."""

import re

from tests._notebook import printed_number as _number
from tests._notebook import run_notebook, text_outputs


def test_dae_and_delay_equations_notebook(monkeypatch, tmp_path):
    text = text_outputs(run_notebook("dae_and_delay_equations.ipynb", monkeypatch, tmp_path, optimize=True))
    # DAE: Newton on node 2's equation gives the hand-solved junction voltage, and the
    # strict model names the violated algebraic row instead.
    assert _number(text, "algebraic initial value error:") < 1e-12
    assert "consistent_init=False refuses it:" in text and "row 1" in text
    # Rodas5P on the DAE (rtol 1e-8) vs scipy Radau on the reduced ODE (rtol 1e-10), volts of order 1.
    assert _number(text, "max |DAE - reduced ODE| (V):") < 1e-6
    assert _number(text, "max algebraic residual (mA):") < 1e-8
    # grad through the DAE solve vs a central finite difference; vmap member vs a single solve.
    assert _number(text, "grad relative error:") < 1e-5
    assert _number(text, "vmap difference:") < 1e-10
    assert "ripple falls with C2: True" in text
    # DDE: forward-mode derivative in the delay vs a central finite difference.
    assert _number(text, "tau derivative relative error:") < 1e-5
    # The posterior recovers beta = 0.5, gamma = 0.2, tau = 5 days.
    for name, true in (("beta", 0.5), ("gamma", 0.2), ("tau", 5.0)):
        match = re.search(
            rf"{name}: true {true}, posterior mean ([-+0-9.eE]+), 99% interval \[([-+0-9.eE]+), ([-+0-9.eE]+)\]", text
        )
        assert match, f"{name} posterior not printed"
        mean, lo, hi = map(float, match.groups())
        assert lo < true < hi, (name, lo, hi)
        assert abs(mean - true) < 0.05 * true, (name, mean)
