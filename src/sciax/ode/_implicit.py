"""Implicit (stiff) methods: thin modules over diffrax's ESDIRK solvers."""

from __future__ import annotations

from typing import ClassVar

import diffrax
import optimistix as optx

from ._chord import adaptive_root_finder
from ._diffrax_method import AbstractDiffraxMethod


def _root_finder(rtol, atol, adaptive):
    # Adaptive: diffrax's chord iteration takes its tolerances from the step-size
    # controller, and a failed iteration just rejects the step (`RoundoffChord`: one
    # that stops at round-off instead of calling it divergence). Fixed step: nothing
    # can be rejected, so use full Newton (robust at large steps) with the simulate
    # tolerances.
    if adaptive:
        return {"root_finder": adaptive_root_finder()}
    return {"root_finder": optx.Newton(rtol=rtol, atol=atol)}


class ImplicitEuler(AbstractDiffraxMethod):
    """Backward Euler: order 1, L-stable. Adaptive (embedded estimate) or fixed step."""

    adaptive_capable: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.ImplicitEuler(**_root_finder(rtol, atol, adaptive))


class Kvaerno3(AbstractDiffraxMethod):
    """Kværnø's 3(2) ESDIRK method (Kværnø 2004): order 3, L-stable, stiffly accurate."""

    adaptive_capable: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Kvaerno3(**_root_finder(rtol, atol, adaptive))


class Kvaerno4(AbstractDiffraxMethod):
    """Kværnø's 4(3) ESDIRK method (Kværnø 2004): order 4, L-stable, stiffly accurate."""

    adaptive_capable: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Kvaerno4(**_root_finder(rtol, atol, adaptive))


class Kvaerno5(AbstractDiffraxMethod):
    """Kværnø's 5(4) ESDIRK method (Kværnø 2004): order 5, L-stable; the stiff default."""

    adaptive_capable: ClassVar[bool] = True

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.Kvaerno5(**_root_finder(rtol, atol, adaptive))
