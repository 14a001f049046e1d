"""Data sets shipped with sciax.prob."""

from __future__ import annotations

import io
from importlib import resources

import numpy as np
import xarray as xr


def load_lynx_hare() -> xr.Dataset:
    """The Hudson's Bay Company lynx and snowshoe hare pelt records, 1900-1920.

    Returns an `xarray.Dataset` with dim `year` (1900..1920, 21 values) and data
    variables `hare` and `lynx`: pelts traded per year, in thousands. The classic
    predator-prey data set (Hewitt 1921; used by Carpenter's Stan case study
    "Predator-Prey Population Dynamics: the Lotka-Volterra model in Stan", 2018).
    For `sciax.ode.lotka_volterra()` the hare is the prey and the lynx the predator.
    """
    text = resources.files(__package__).joinpath("data", "lynx_hare.csv").read_text(encoding="utf-8")
    table = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=3)
    year = table[:, 0].astype(int)
    attrs = {"units": "thousands of pelts"}
    return xr.Dataset(
        {
            "hare": ("year", table[:, 1], {**attrs, "long_name": "snowshoe hare pelts"}),
            "lynx": ("year", table[:, 2], {**attrs, "long_name": "Canada lynx pelts"}),
        },
        coords={"year": ("year", year, {"long_name": "year"})},
        attrs={
            "title": "Hudson's Bay Company lynx-hare pelt records, 1900-1920",
            "source": "Hewitt (1921), The Conservation of the Wild Life of Canada; as tabulated by Carpenter (2018)",
        },
    )
