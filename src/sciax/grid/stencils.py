"""Finite-difference stencils on a `Grid` (`sciax.grid.stencils`).

Central stencils of orders `ORDERS` = 2, 4, 6, 8 (`derivative`,
`second_derivative`, `gradient`, `divergence`, `laplacian`, `diffusion`) and
staggered ones (`staggered_derivative`, `staggered_valid`), each padding its input
through an `AbstractHalo` (boundary conditions or, under `sciax.parallel`, halo
exchange). The building blocks are public for new operators: `central` and
`staggered` weights, `shift`/`apply` on a padded block, `symbol_radius` (the
largest `|symbol| dx^k` of a stencil, for stable-step estimates), and the argument
checks `check_order`, `check_field`, `check_axis`. Users meet the operators as
`sciax.pde.fd.*`.
"""

from ._stencils import (
    ORDERS,
    apply,
    central,
    check_axis,
    check_field,
    check_order,
    derivative,
    diffusion,
    divergence,
    gradient,
    laplacian,
    second_derivative,
    shift,
    staggered,
    staggered_derivative,
    staggered_valid,
    symbol_radius,
)

__all__ = [
    "ORDERS",
    "derivative",
    "second_derivative",
    "gradient",
    "divergence",
    "laplacian",
    "diffusion",
    "staggered_derivative",
    "staggered_valid",
    "central",
    "staggered",
    "shift",
    "apply",
    "symbol_radius",
    "check_order",
    "check_field",
    "check_axis",
]
