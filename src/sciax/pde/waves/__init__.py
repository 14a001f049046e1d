"""Wave equations and their time stepping (`sciax.pde.waves`).

`AcousticWave` (2-D/3-D pressure–velocity acoustics on a staggered grid, `CPML` or
`Sponge` absorbing layers, `ricker` sources, receivers), stepped by `Leapfrog(dt)`
(CFL-checked); `AbstractWaveModel` is the interface `Leapfrog` steps. `ElasticWave` (2-D
velocity–stress P-SV waves, Virieux's staggered grid, CPML) is stepped by `StaggeredLeapfrog(dt)`,
the interface being `AbstractStaggeredModel`. All are
re-exported by `sciax.pde`.
"""

from ._acoustic import AcousticWave, ricker
from ._elastic import ElasticWave
from ._leapfrog import AbstractWaveModel, Leapfrog
from ._staggered import AbstractStaggeredModel, StaggeredLeapfrog

__all__ = [
    "AcousticWave",
    "ricker",
    "AbstractWaveModel",
    "Leapfrog",
    "ElasticWave",
    "AbstractStaggeredModel",
    "StaggeredLeapfrog",
]
