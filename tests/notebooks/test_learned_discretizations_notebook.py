"""notebooks/learned_discretizations.ipynb at small size: references coarse grained to 32 cells, a
learned scheme trained through `train` on the time-derivative loss and an unrolled fine-tune, and
its error against the standard schemes on held-out forcings."""

import math

from tests._notebook import printed_number as _number
from tests._notebook import run_notebook, text_outputs


def test_learned_discretizations_notebook(monkeypatch, tmp_path):
    text = text_outputs(run_notebook("learned_discretizations.ipynb", monkeypatch, tmp_path))
    # The time-derivative loss falls well below its start (the linear fifth-order scheme).
    assert _number(text, "derivative loss reduction x16:") > 5
    # On held-out forcings at 32 cells the learned scheme beats WENO5-Z, the best standard scheme.
    learned = _number(text, "MAE x16 learned:")
    assert 0 < learned and _number(text, "learned over WENO5-Z x16:") < 1
    assert _number(text, "best standard:") >= learned
    assert math.isfinite(_number(text, "mean survival time x16 learned:"))
