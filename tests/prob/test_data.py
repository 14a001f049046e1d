"""The shipped lynx-hare table."""

import numpy as np

import sciax


def test_lynx_hare_table():
    ds = sciax.prob.load_lynx_hare()
    np.testing.assert_array_equal(ds["year"].values, np.arange(1900, 1921))
    assert ds["hare"].values[[0, 3, 20]].tolist() == [30.0, 77.4, 24.7]
    assert ds["lynx"].values[[0, 4, 20]].tolist() == [4.0, 59.4, 8.6]
    np.testing.assert_allclose(ds["hare"].sum().item(), 715.7)
    assert ds["lynx"].attrs["units"] == "thousands of pelts"
