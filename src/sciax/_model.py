"""`AbstractModel`: the base of every simulated system (ODE, PDE, user subclass)."""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import equinox as eqx
from jaxtyping import Array, PyTree, Real

from ._labels import Labels

if TYPE_CHECKING:
    from ._method import AbstractMethod
    from ._solution import Solution


class AbstractModel(eqx.Module):
    """A dynamical system `dy/dt = rhs(t, y, params)`.

    Subclasses define `rhs` and `default_method`. Structure that a specialised
    method can exploit is exposed through optional hooks, each with a neutral
    default: `imex_split` (explicit and implicit parts, for IMEX methods),
    `jacobian_sparsity` (for sparse stiff solves), `spectral_radius` (stable
    explicit steps) and `check_state`. `labels` names the state for
    `Solution.to_xarray`; `initial_state` and `observed` relate a state with hidden
    parts to the field that data measure (both the identity by default).

    A model holds its configuration (functions, grids, names) as static fields;
    anything to be differentiated or batched over goes in `params`.
    """

    # Whether `integrate` checks a traced `y0` for NaN/inf itself, `simulate` then checking only concrete
    # values (`sciax.parallel.shard`: on each block of the grid, where all blocks fail the check together).
    checks_traced_y0: ClassVar[bool] = False

    @abc.abstractmethod
    def rhs(self, t: Real[Array, ""], y: PyTree[Array], params: PyTree) -> PyTree[Array]:
        """The time derivative of `y`; same pytree structure, shapes and dtypes as `y`."""

    @abc.abstractmethod
    def default_method(self) -> AbstractMethod:
        """The method `sciax.simulate` uses when none is given."""

    def imex_split(self) -> tuple[Callable, Callable] | None:
        """`(explicit, implicit)` right-hand sides summing to `rhs`, or `None`."""
        return None

    def jacobian_sparsity(self, y0: PyTree[Array]):
        """The structural nonzeros of `∂rhs/∂y` over the flattened state, or `None` if unknown.

        A scipy sparse matrix (or anything `sciax.linalg.SparsityPattern` takes) of
        shape `(n, n)`, `n` the size of `ravel_pytree(y0)`. Stiff methods asked for
        `jacobian="sparse"` use it to build the Jacobian from a few `jvp`s and
        factorise it sparsely; finite-difference models know it from their stencil.
        """
        del y0
        return None

    def labels(self) -> Labels:
        """Names, units and coordinates of the state, for `Solution.to_xarray`."""
        return Labels()

    def check_state(self, y: PyTree[Array], what: str = "the state") -> None:
        """Raise `TypeError`/`ValueError` if `y` is not a state of this model (default: accept
        anything). Fixed-step methods call it on `y0` at trace time."""
        del y, what

    def initial_state(self, y0: PyTree[Array], **hidden) -> PyTree[Array]:
        """The state to start from given its observed part `y0` (see `observed`) and, as keywords,
        any hidden parts (e.g. `lag=` of `sciax.pde.learned.ForcedBurgers(memory=...)`). Default:
        `y0` itself; `ValueError` if hidden parts are given to a model without them."""
        if hidden:
            raise ValueError(f"{type(self).__name__} has no hidden state, but {sorted(hidden)} were given")
        return y0

    def observed(self, y: PyTree[Array]) -> PyTree[Array]:
        """The part of a state (or of a batch or trajectory of states) that data measure, which
        losses and errors compare. Default: the state itself; a model with hidden state (lagged
        fields, say) returns its observed field."""
        return y

    def spectral_radius(self, params: PyTree) -> tuple[Array, Array] | None:
        """Upper bounds `(diffusive, oscillatory)` on the real and imaginary parts of the
        eigenvalues of `rhs`'s Jacobian (1/time), or `None` if unknown: explicit fixed-step
        methods (`sciax.pde.RK4`) check their step against them."""
        del params
        return None

    def check_params(self, params: PyTree) -> None:
        """Raise `TypeError`/`ValueError` if `params` is not what `rhs` expects.

        `sciax.simulate` calls it at trace time, before the first evaluation of
        `rhs`, so that a missing key or a wrongly shaped value is reported by name
        rather than as a `KeyError` or a broadcasting error from inside `rhs`.
        The default accepts anything; `sciax.ode.ODE(..., param_shapes=...)`,
        `sciax.pde.SemilinearPDE(..., param_shapes=...)` and the catalogue models
        declare their params.
        """
        del params

    def integrate(self, method: AbstractMethod, y0: PyTree[Array], ts: Array, params: PyTree, **options) -> Solution:
        """Run `method` on this model: `method.solve(self, y0, ts, params, **options)`.

        `sciax.simulate` calls this after validating its arguments. Models that
        change *where* a solve runs rather than *what* it computes (e.g. the
        device-sharded models of `sciax.parallel.shard`) override it.
        """
        return method.solve(self, y0, ts, params, **options)
