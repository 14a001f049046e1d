"""`shard`: the one entry point that puts a model on a device mesh."""

from __future__ import annotations

from collections.abc import Sequence

from jax.sharding import Mesh

from .._model import AbstractModel
from ..pde import AbstractFDModel, AbstractSemilinearPDE
from ..pde.fv import AbstractFVModel
from ._sharded_model import ShardedModel


def shard(
    model: AbstractModel, mesh: Mesh, axes: Sequence[str | None] | None = None, *, halo_every: int = 1
) -> ShardedModel:
    """The same model, run with its grid cut into blocks over the devices of `mesh`.

    `sciax.simulate(shard(model, mesh), y0, ts, params, method=...)` returns the
    unsharded result (to round-off); grid-shaped outputs are global `jax.Array`s
    in the same blocks. Going from 1 to 8 devices or to 64 hosts changes only `mesh`.

    **Arguments:**

    - `model`: a finite-difference model (`sciax.pde.FDModel`, the `sciax.pde.fd`
      catalogue, `sciax.pde.AcousticWave`, `sciax.pde.ElasticWave`), a finite-volume model (`sciax.pde.fv`, run with
      `SSPRK2`/`SSPRK3`: halos of `rhs_reach` cells exchanged at every stage, the CFL step
      reduced over the blocks) or a spectral `sciax.pde.SemilinearPDE` (any `AbstractSemilinearPDE`,
      `sciax.pde.learned.SpectralCorrected` included).
    - `mesh`: a `jax.sharding.Mesh`, e.g. `sciax.parallel.make_mesh("slab")`.
    - `axes`: one mesh axis name (or `None`) per grid axis; default: the mesh axes
      named like grid dimensions (`"x"`, `"y"`, `"z"`) shard those.
    - `halo_every`: exchange halos once every `k` steps instead of every step (wide halos,
      `k * reach` points, as in JAX's TPU wave-equation example): fewer, larger messages for
      some redundant work near block edges; the same result. `reach` is how far one step
      reads: `leapfrog_reach` under `sciax.pde.Leapfrog` (wave models, e.g. `AcousticWave`),
      `4 * rhs_reach` under `sciax.pde.RK4` (any finite-difference model; see
      `AbstractFDModel.rhs_reach`). Other methods are refused; every output interval must
      be a multiple of `k` steps. Sponge/CPML layers, sources and receivers work with it.

    **Returns:** a `ShardedModel`. For an FD model its blocks exchange halos with
    `lax.ppermute` (boundary conditions only at the outer edges); for a
    `SemilinearPDE` its FFTs are the distributed FFT of a `ShardedGrid`
    (`lax.all_to_all` transposes, no gathering).

    `Sponge` and `CPML` layers, `AcousticWave` and `ElasticWave` sources and receivers work
    along sharded axes: each block takes its slice of the whole grid's layer profiles.

    **Raises** `ValueError` for a grid not divisible by the mesh (no padding is
    done), a halo wider than a shard (with `halo_every=k`: `k * reach` points; at
    `simulate` for the method given), `halo_every > 1` with a method other than
    `RK4`/`Leapfrog` (at `simulate`), mesh
    axis names that do not exist, or a decomposition the distributed FFT cannot
    handle; `TypeError` for other models.
    """
    if isinstance(model, ShardedModel):
        raise TypeError("shard: the model is already sharded; shard the unsharded model (sharded.model) instead")
    if isinstance(model, (AbstractSemilinearPDE, AbstractFDModel, AbstractFVModel)):
        return ShardedModel(model, mesh, axes, halo_every)
    raise TypeError(
        "shard: expected a sciax.pde finite-difference model, finite-volume model or sciax.pde.SemilinearPDE, "
        f"got {type(model).__name__}; "
        "for ensembles of any model use sciax.parallel.ensemble"
    )
