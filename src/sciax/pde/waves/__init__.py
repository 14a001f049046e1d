"""Wave equations and their time stepping (`sciax.pde.waves`).

`AcousticWave` (2-D/3-D pressure–velocity acoustics on a staggered grid, `CPML` or
`Sponge` absorbing layers, `ricker` sources, receivers), stepped by `Leapfrog(dt)`
(CFL-checked); `AbstractWaveModel` is the interface `Leapfrog` steps. All are
re-exported by `sciax.pde`.
"""

from ._acoustic import AcousticWave, ricker
from ._leapfrog import AbstractWaveModel, Leapfrog

__all__ = ["AcousticWave", "ricker", "AbstractWaveModel", "Leapfrog"]
