"""Which `equinox` while loop a method with its own integration loop runs, from its `adjoint=` option."""

from __future__ import annotations

import diffrax


def loop_kind(method: str, adjoint) -> str:
    """`"checkpointed"` for reverse mode (`None` or `RecursiveCheckpointAdjoint()`, the default),
    `"lax"` for `ForwardMode()` (`jax.jvp`/`jax.jacfwd`); anything else is refused by name."""
    if adjoint is None or isinstance(adjoint, diffrax.RecursiveCheckpointAdjoint):
        return "checkpointed"
    if isinstance(adjoint, diffrax.ForwardMode):
        return "lax"
    raise ValueError(
        f"{method}: adjoint must be None or diffrax.RecursiveCheckpointAdjoint() (reverse mode, the default) "
        f"or diffrax.ForwardMode() (jax.jvp / jax.jacfwd), got {type(adjoint).__name__}"
    )


__all__ = ["loop_kind"]
