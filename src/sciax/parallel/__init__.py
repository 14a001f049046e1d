"""Device meshes, sharded grids, halo exchange, distributed FFT, sharded ensembles and multi-process runs.

JAX's own runtime is the engine: `jax.make_mesh`, `jax.shard_map`, `lax.ppermute`,
`lax.all_to_all` and `jax.distributed`. Going from one device to many is one line:

```python
mesh = sciax.parallel.make_mesh("slab")                  # all devices, grid cut along x
sol = sciax.simulate(sciax.parallel.shard(model, mesh), y0, ts, params, method=...)
```

- `make_mesh`: a 1-D (slab) or 2-D (pencil) mesh, or any shape.
- `shard`: a finite-difference model becomes a `ShardedModel` (blocks plus halos
  exchanged by `ppermute` in a `ShardedHalo`, boundary conditions at the outer
  edges only); a spectral `SemilinearPDE` moves to a `ShardedGrid`, whose FFTs are
  the distributed FFT (`all_to_all` transposes).
- `ensemble`: `jax.vmap(sciax.simulate)` with the members spread over devices.
- `initialize`, `gather`: multi-process runs over `jax.distributed` (the launch
  recipe is in docs/parallel.md).

`sciax.pde` never imports this package: it plugs in through the `AbstractHalo`
a stencil is given, the FFT dispatch on the grid type
(`sciax.pde.spectral.forward_transform`), and `AbstractModel.integrate`.
"""

from . import _fft  # noqa: F401  (registers the distributed FFT for ShardedGrid)
from ._distributed import gather, initialize
from ._ensemble import ensemble
from ._halo import ShardedHalo
from ._mesh import make_mesh
from ._shard import shard
from ._sharded_grid import ShardedGrid
from ._sharded_model import ShardedModel

__all__ = [
    "make_mesh",
    "shard",
    "ShardedModel",
    "ShardedGrid",
    "ShardedHalo",
    "ensemble",
    "initialize",
    "gather",
]
