"""IMEX additive Runge–Kutta methods (Kennedy & Carpenter 2003, 2019), over diffrax.

They need the model's split `f = explicit + implicit` (`ODE(explicit=..., implicit=...)`):
the non-stiff part is treated explicitly and the stiff part implicitly.
"""

from __future__ import annotations

from typing import ClassVar

import diffrax

from .._model import AbstractModel
from ._diffrax_method import AbstractDiffraxMethod
from ._implicit import _root_finder


class _AbstractKenCarp(AbstractDiffraxMethod):
    adaptive_capable: ClassVar[bool] = True

    def terms(self, model: AbstractModel) -> diffrax.AbstractTerm:
        split = model.imex_split()
        if split is None:
            raise ValueError(
                f"simulate: {type(self).__name__} is an IMEX method and needs the model's "
                "explicit/implicit split: build it as sciax.ode.ODE(explicit=f_nonstiff, implicit=f_stiff)"
            )
        explicit, implicit = split
        return diffrax.MultiTerm(diffrax.ODETerm(explicit), diffrax.ODETerm(implicit))


class KenCarp3(_AbstractKenCarp):
    """ARK3(2)4L[2]SA (Kennedy & Carpenter 2003): order 3, L-stable implicit part."""

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.KenCarp3(**_root_finder(rtol, atol, adaptive))


class KenCarp4(_AbstractKenCarp):
    """ARK4(3)6L[2]SA (Kennedy & Carpenter 2003): order 4, L-stable implicit part."""

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.KenCarp4(**_root_finder(rtol, atol, adaptive))


class KenCarp5(_AbstractKenCarp):
    """ARK5(4)8L[2]SA (Kennedy & Carpenter 2003): order 5, L-stable implicit part."""

    def diffrax_solver(self, rtol, atol, adaptive):
        return diffrax.KenCarp5(**_root_finder(rtol, atol, adaptive))
