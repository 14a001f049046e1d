"""`AbstractMethod`: the base of every time-integration method."""

import abc
from typing import TYPE_CHECKING, Any

import equinox as eqx
from jaxtyping import Array, PyTree, Real

if TYPE_CHECKING:
    from ._model import AbstractModel
    from ._solution import Solution


class AbstractMethod(eqx.Module):
    """How to advance an `AbstractModel` in time.

    Concrete methods implement `solve` and declare `options`: the names of the
    keyword options `solve` accepts, in the order error messages list them.
    `sciax.simulate` checks every option against `options` before the solve, so a
    misspelt option is an error naming it rather than silently ignored, and
    wrappers that forward `**options` to another method declare that method's
    names instead of restating its signature. Base classes declare the set their
    subclasses share (`sciax.ode.AbstractDiffraxMethod`,
    `sciax.pde.AbstractFixedStep`, ...); a subclass that adds an option extends it.
    """

    # Not under `from __future__ import annotations`: equinox reads this annotation as a
    # class-level declaration only when it is not a string.
    options: eqx.AbstractClassVar[tuple[str, ...]]

    @abc.abstractmethod
    def solve(
        self,
        model: "AbstractModel",
        y0: PyTree[Array],
        ts: Real[Array, " T"],
        params: PyTree,
        **options: Any,
    ) -> "Solution":
        """Integrate `model` from `ts[0]` and return the state at every time in `ts`."""

    def compiler_options(self, model: "AbstractModel") -> dict[str, Any]:
        """The XLA options `solve` compiles its run of `model` with (`jax.jit(..., compiler_options=...)`).
        XLA takes them from the outermost compiled function only: `sciax.compiler_options` gives them to
        code that jits around `simulate`. Default: none."""
        return {}
