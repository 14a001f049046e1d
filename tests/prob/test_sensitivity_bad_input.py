"""Bad input to the sensitivity analyses: errors that name the offending parameter."""

from __future__ import annotations

import pytest

import sciax


def test_sobol_bounds_missing_a_parameter_names_it():
    with pytest.raises(KeyError, match=r"bounds has no parameter 'b' \(it gives \['a'\]\)"):
        sciax.prob.sobol_indices(lambda p: p["a"] + p["b"], {"a": (0.0, 1.0)}, 8)
    # A KeyError for a key that bounds has comes from the function itself and is left alone.
    with pytest.raises(KeyError, match=r"^'a'"):
        sciax.prob.sobol_indices(lambda p: {"b": 1.0}["a"] + p["a"], {"a": (0.0, 1.0)}, 8)


def test_morris_bounds_missing_a_parameter_names_it():
    with pytest.raises(KeyError, match=r"morris: the function raised KeyError\('b'\) and bounds has no parameter 'b'"):
        sciax.prob.morris(lambda p: p["a"] + p["b"], {"a": (0.0, 1.0)}, num_trajectories=4)
