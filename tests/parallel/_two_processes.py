"""One of two processes of a `jax.distributed` run on 127.0.0.1 (CPU collectives: gloo), started by
`test_parallel.py`: `python -m tests.parallel._two_processes PROCESS_ID PORT`.

Each process has 2 CPU devices; a heat equation sharded over the 4 devices of
both processes must equal the single-process, single-device run. Prints
`error two_processes: ...` on every process.
"""

import sys

from tests._xla_flags import add_to_environment

add_to_environment("--xla_force_host_platform_device_count=2")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import sciax  # noqa: E402
from sciax import parallel, pde  # noqa: E402


def main(process_id: int, port: int) -> None:
    index, count = parallel.initialize(f"127.0.0.1:{port}", 2, process_id, timeout=60)
    assert (index, count) == (process_id, 2) and len(jax.devices()) == 4, (index, count, jax.devices())
    grid = pde.Grid((32, 16), 1.0)
    x, y = grid.meshgrid()
    u0 = np.exp(-((x - 0.4) ** 2 + (y - 0.5) ** 2) / 0.02)
    model = pde.fd.heat(grid, bc=pde.Dirichlet(0.25), order=4)
    ts = np.linspace(0.0, 4e-5, 3)
    sharded = sciax.simulate(
        parallel.shard(model, parallel.make_mesh("slab")), u0, ts, {"D": 1.0}, method=pde.RK4(2e-6)
    )
    ys = parallel.gather(sharded.ys)
    with jax.default_device(jax.local_devices()[0]):  # the single-device reference, on this process alone
        ref = np.asarray(sciax.simulate(model, u0, ts, {"D": 1.0}, method=pde.RK4(2e-6)).ys)
    print(f"error two_processes: {np.max(np.abs(ys - ref)) / np.max(np.abs(ref)):.3e}", flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
