"""Plotting helpers for sciax results (matplotlib, imported only when a helper is called).

- `trajectory_spread(data)`: an ensemble over time (dims `member`, `time`): median,
  quantile bands and a few members per variable.
- `field_snapshots(data)`: a 1-D or 2-D field at a few times, one colour scale.
- `space_time(data)`: a 1-D field over time as one image.
- `shot_gather(data)`: the receiver traces that `sciax.pde.AcousticWave.seismograms`
  builds, as an image or wiggles (also exported as `seismograms`).
- `posterior_pairs(idata, reference=...)`: ArviZ pair plot of a posterior, true values marked.
- `posterior_predictive(idata)`: quantile bands of the predicted observations over time,
  the observed data on top, one panel per observed component.
- `sobol_bars(indices)`: bar chart of Sobol indices (`sciax.prob.plot_sobol` is the same function).

Each takes labelled xarray data as `Solution.to_xarray()` writes it and labels the
axes from its CF attributes (`long_name`, `units`).
"""

from ._pairs import posterior_pairs
from ._posterior_predictive import posterior_predictive
from ._shot_gather import shot_gather
from ._shot_gather import shot_gather as seismograms
from ._snapshots import field_snapshots
from ._sobol import sobol_bars
from ._space_time import space_time
from ._spread import trajectory_spread

__all__ = [
    "trajectory_spread",
    "field_snapshots",
    "space_time",
    "shot_gather",
    "seismograms",
    "posterior_pairs",
    "posterior_predictive",
    "sobol_bars",
]
