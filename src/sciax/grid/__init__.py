"""The discretisation floor (`sciax.grid`): grids, boundary conditions, stencils, Fourier operators.

Everything here is geometry and spatial operators; nothing steps in time, and
nothing imports `sciax.pde`, `sciax.linalg` or `sciax.parallel`, which all build
on it. Users meet these names through `sciax.pde` (`Grid`, the boundary
conditions), `sciax.pde.fd` (stencil operators) and `sciax.pde.spectral`
(Fourier operators); new equations, solvers and the device layer import them
from here.

- Geometry: `Grid` (points, spacing, `walls`, `integrate`).
- Boundary conditions, per side of each axis: `Periodic`, `Dirichlet`, `Neumann`,
  `ZeroPadding` (Devito's zero halos), `Outflow`, `Reflective` (finite volumes),
  and the absorbing layers `Sponge`, `CPML` (`AbstractBoundary`,
  `AbstractAbsorbing`); `normalise_boundaries` turns a user's `bc=` into `Sides`,
  and `check_layers_fit` refuses layers wider than the grid. `layer_depth` gives
  the depth profile of an absorbing layer.
- Halos (how a stencil's ghost points are filled): `AbstractHalo`, `BoundaryHalo`
  (from boundary conditions, `as_halo`), `edges_only`. `sciax.parallel` supplies
  halos filled from neighbouring devices instead.
- Regions: `split_evaluate` (interior plus edge strips, no padded copy), `fits`,
  `inner`, `take`, `fold`; `materialize` (an intermediate field stored once, not
  recomputed inside each shifted read of it).
- Operators: `stencils` (finite differences, orders 2–8) and `fourier`
  (pseudo-spectral, real-FFT layout), two namespaces because their operators share
  names (`derivative`, `laplacian`, ...).
"""

from . import fourier, stencils
from ._boundary import (
    CPML,
    AbstractAbsorbing,
    AbstractBoundary,
    AbstractHalo,
    BoundaryHalo,
    Dirichlet,
    Neumann,
    Outflow,
    Periodic,
    Reflective,
    Sides,
    Sponge,
    ZeroPadding,
    as_halo,
    check_layers_fit,
    edges_only,
    layer_depth,
    normalise_boundaries,
)
from ._grid import POINTS, Grid
from ._materialize import materialize
from ._regions import fits, fold, inner, split_evaluate, take

__all__ = [
    "Grid",
    "POINTS",
    "AbstractBoundary",
    "Periodic",
    "Dirichlet",
    "Neumann",
    "Outflow",
    "Reflective",
    "AbstractAbsorbing",
    "Sponge",
    "ZeroPadding",
    "CPML",
    "Sides",
    "normalise_boundaries",
    "check_layers_fit",
    "layer_depth",
    "AbstractHalo",
    "BoundaryHalo",
    "as_halo",
    "edges_only",
    "split_evaluate",
    "materialize",
    "fits",
    "inner",
    "take",
    "fold",
    "stencils",
    "fourier",
]
