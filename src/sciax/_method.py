"""`AbstractMethod`: the base of every time-integration method."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

import equinox as eqx
from jaxtyping import Array, PyTree, Real

if TYPE_CHECKING:
    from ._model import AbstractModel
    from ._solution import Solution


class AbstractMethod(eqx.Module):
    """How to advance an `AbstractModel` in time.

    Concrete methods implement `solve`, whose keyword-only arguments are the
    options `sciax.simulate` accepts for this method (checked by name, so a
    misspelt option is an error rather than silently ignored).
    """

    @abc.abstractmethod
    def solve(
        self,
        model: AbstractModel,
        y0: PyTree[Array],
        ts: Real[Array, " T"],
        params: PyTree,
        **options: Any,
    ) -> Solution:
        """Integrate `model` from `ts[0]` and return the state at every time in `ts`."""
