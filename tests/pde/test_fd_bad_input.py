"""Bad input to the finite-difference models: refused when the model is built, naming the argument."""

from __future__ import annotations

import pytest

import sciax


def test_sponge_wider_than_the_grid_is_refused():
    grid = sciax.pde.Grid(16, 1.0)
    with pytest.raises(ValueError, match=r"Sponge: width 40 does not fit grid axis 0 .* of 16 points"):
        sciax.pde.fd.heat(grid, bc=sciax.pde.Sponge(40, 1.0))
    # Two layers of 8 leave no undamped point on 16; 7 + 7 fit.
    with pytest.raises(ValueError, match=r"\(8 \+ 8 points\) must leave at least one point undamped; use width <= 7"):
        sciax.pde.fd.heat(grid, bc=sciax.pde.Sponge(8, 1.0))
    sciax.pde.fd.heat(grid, bc=sciax.pde.Sponge(7, 1.0))
