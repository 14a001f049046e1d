"""When `AcousticWave`'s one-pass step stores its face fluxes, and when it computes the two of a 2-D step in one
pass: rules measured on XLA:CPU (float32, this project's 2-core machine, 2 MiB of L2 per core)."""

import jax

from ._leapfrog import _in_place_pays


def _stores_flux(order: int, points: int) -> bool:
    """Whether the one-pass interior stores each axis's face flux once rather than letting XLA fuse it into the
    outer stencil, which recomputes it at each of its `order` offsets: from order 6, and at order 4 on grids
    (blocks) that stay in a core's cache. Measured on XLA:CPU (jax 0.12, one core of 2 MiB L2, float32, harmonic
    rule), stored against fused: order 2, 2000^2 13.6 against 6.8 ms a step, 300^2 x 1,000 0.066-0.070 against
    0.038-0.040 s; order 4, 200^2 x 2,000 0.078 against 0.090 s, 300^2 x 1,000 0.093-0.097 against 0.098-0.102 s,
    but 400^2 x 600 0.132 against 0.105-0.114 s and 1000^2 x 300 0.49 against 0.31 s."""
    return order >= 6 or (order == 4 and points <= 2**17)


def _joint_flux_pays(order: int, points: int, threads: int) -> bool:
    """Whether a 2-D one-pass step on a grid (or block) of `points`, `threads` cores to it, computes its two face
    fluxes in one pass (`AcousticWave._joint_fluxes`): on XLA:CPU from order 6 (where the fluxes are stored), on
    grids of 2^18 points or more, where the step runs in place (`_in_place_pays`: on one thread; out of place
    XLA:CPU splits the two passes over the cores, the joint one badly). Measured (float32, one core, best of 5,
    harmonic rule, 512-bit vectors at order 8), apart against joint: 2000^2 x 100 order 8 1.37-1.44 against
    1.17-1.18 s on jax 0.12.0.1, 1.32-1.39 against 1.19 s on 0.10.2 (arithmetic rule 1.32-1.33 against 1.24-1.33 s),
    order 6 1.20-1.32 against 1.11-1.27 s; 1000^2 x 300 order 8 0.66 against 0.63 s, order 6 0.58 against 0.52 s;
    600^2 x 500 order 8 0.38 against 0.38 s; but 300^2 x 1,000 order 4 (stored in cache) 0.122 against 0.134 s,
    and on both cores (out of place) 2000^2 order 6 0.88 against 1.67 s."""
    return (
        jax.default_backend() == "cpu"
        and order >= 6
        and points >= 2**18
        and _in_place_pays("cpu", order - 1, points, threads)
    )
