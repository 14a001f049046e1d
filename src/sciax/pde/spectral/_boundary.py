"""The boundary check of every Fourier spectral model: periodic on every axis, or a clear error."""

from __future__ import annotations

from ...grid import Grid, Periodic, normalise_boundaries


def check_periodic(bc, grid: Grid, where: str) -> None:
    """Accept `bc` only if it is periodic on every axis of `grid`; raise otherwise.

    Accepted: `None` or `"periodic"` (the default of every spectral model), a
    `sciax.pde.Periodic()`, or a per-axis sequence of them (as the
    finite-difference models take it). Anything else raises `ValueError`
    (or `TypeError` for a malformed value) pointing to `sciax.pde.fd`, because a
    Fourier basis cannot represent a non-periodic boundary.
    """
    if bc is None:
        return
    if isinstance(bc, str):
        if bc == "periodic":
            return
        raise ValueError(
            f"{where}: bc={bc!r} is not supported: a Fourier spectral model is periodic on every axis "
            "(bc='periodic' or sciax.pde.Periodic()). For other boundary conditions use the "
            "finite-difference models in sciax.pde.fd"
        )
    sides = normalise_boundaries(bc, grid.ndim, f"{where}: bc")
    for axis, pair in enumerate(sides):
        bad = [type(b).__name__ for b in pair if not isinstance(b, Periodic)]
        if bad:
            raise ValueError(
                f"{where}: a Fourier spectral model needs periodic boundaries on every axis, but axis {axis} "
                f"({grid.dims[axis]!r}) has {' and '.join(bad)}. For non-periodic boundary conditions use the "
                "finite-difference models in sciax.pde.fd"
            )
