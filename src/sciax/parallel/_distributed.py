"""Multi-process start-up over `jax.distributed`, and gathering results on every process.

Launch recipe (one process per host, or per GPU; the same script everywhere):

- SLURM / Open MPI / Kubernetes / Cloud TPU: `srun python run.py` (or `mpirun ...`);
  `sciax.parallel.initialize()` with no arguments lets JAX detect the cluster.
- Anything else: start every process with `JAX_COORDINATOR_ADDRESS=host0:1234
  JAX_NUM_PROCESSES=N JAX_PROCESS_ID=i python run.py` (or pass the three values).

In `run.py`, call `sciax.parallel.initialize()` before any other JAX call, then
`mesh = sciax.parallel.make_mesh("slab")` spans the devices of all processes and
`sciax.simulate(sciax.parallel.shard(model, mesh), ...)` runs over all of them.
Every process must run the same program with the same inputs; results are global
arrays of which each process holds its blocks (`sciax.parallel.gather` for all).
On CPU the processes talk through JAX's CPU collectives (gloo).
"""

from __future__ import annotations

import os

import jax
import numpy as np
from jax.experimental import multihost_utils
from jaxtyping import PyTree


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"initialize: environment variable {name} must be an integer, got {value!r}") from None


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    local_device_ids: int | list[int] | None = None,
    cpu_collectives: str | None = "gloo",
    timeout: int = 300,
) -> tuple[int, int]:
    """Join this process to a multi-process JAX run; returns `(process_index, process_count)`.

    Arguments not given are read from `JAX_COORDINATOR_ADDRESS` (`"host:port"` of
    process 0), `JAX_NUM_PROCESSES` and `JAX_PROCESS_ID`; if those are unset too,
    JAX detects SLURM, Open MPI, Kubernetes or Cloud TPU. `cpu_collectives`: the
    CPU cross-process implementation (`"gloo"`, `"mpi"`, or `None` to keep JAX's
    setting). `timeout`: seconds to wait for all processes to join.

    Call it first, before any JAX computation. Calling it again after a
    successful start does nothing. A run with one process needs no call.
    """
    if jax.distributed.is_initialized():
        return jax.process_index(), jax.process_count()
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS") or None
    num_processes = _env_int("JAX_NUM_PROCESSES") if num_processes is None else num_processes
    process_id = _env_int("JAX_PROCESS_ID") if process_id is None else process_id
    if coordinator_address is not None and (not isinstance(coordinator_address, str) or ":" not in coordinator_address):
        raise ValueError(f'initialize: coordinator_address must be "host:port", got {coordinator_address!r}')
    if num_processes is not None and (
        isinstance(num_processes, bool) or not isinstance(num_processes, int) or num_processes < 1
    ):
        raise ValueError(f"initialize: num_processes must be an integer >= 1, got {num_processes!r}")
    if process_id is not None and (
        isinstance(process_id, bool)
        or not isinstance(process_id, int)
        or not 0 <= process_id < (num_processes or 1 << 30)
    ):
        raise ValueError(
            f"initialize: process_id must be an integer in [0, num_processes={num_processes}), got {process_id!r}"
        )
    if cpu_collectives is not None:
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    jax.distributed.initialize(
        coordinator_address,
        num_processes,
        process_id,
        local_device_ids=local_device_ids,
        initialization_timeout=timeout,
    )
    return jax.process_index(), jax.process_count()


def gather(tree: PyTree) -> PyTree:
    """Every array of `tree` as a full NumPy array on every process (a global array is
    collected from the processes holding its blocks; anything else is converted as is)."""

    def one(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(x)

    return jax.tree_util.tree_map(one, tree)
