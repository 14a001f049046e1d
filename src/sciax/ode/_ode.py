"""`ODE`: an ordinary differential equation `dy/dt = f(t, y, params)`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import equinox as eqx
import jax
import numpy as np
from jaxtyping import Array, ArrayLike, PyTree, Real

from .._labels import Labels
from .._method import AbstractMethod
from .._model import AbstractModel
from .._param_spec import ParamSpec
from ._mass import MassMatrix


class ODE(AbstractModel):
    """An ODE `dy/dt = vector_field(t, y, params)` with `y` any pytree of arrays.

    **Arguments:**

    - `vector_field`: `f(t, y, params) -> dy/dt`, same structure and shapes as `y`.
      May be omitted when `explicit` and `implicit` are given (it is then their sum).
    - `explicit`, `implicit`: an optional split `f = explicit + implicit` for IMEX
      methods (`KenCarp3/4/5`): the stiff part goes in `implicit`.
    - `names`: names of the state components (last axis of an array state), e.g.
      `("prey", "predator")`; each becomes a data variable in `to_xarray`.
    - `units`, `long_names`: `{name: text}` attributes per component.
    - `time_units`: units of time, e.g. `"year"`.
    - `param_shapes`: the params `vector_field` expects, checked by `sciax.simulate`
      before the first evaluation: `{"alpha": (), "k": (3,)}` for a dict of a scalar
      and a 3-vector (`None` in a shape for any length), `(n,)` for one array, `{}` for
      no params (`None` or `{}` must then be passed). Missing or unexpected keys and
      wrong shapes raise an error naming them. Default `None`: nothing is checked.
    - `mass_matrix`: a constant `M` for `M dy/dt = f(t, y, params)`, an `(n, n)` array
      over the flattened state, its diagonal (shape `(n,)`) or a scipy sparse matrix
      (kept sparse). Singular `M` makes a differential-algebraic system (DAE) of
      index 1: a zero row is an algebraic equation `0 = f_i`, a zero column an
      algebraic variable. Solved by the Rosenbrock methods (`Rodas5P`, `Rodas4`,
      `Ros3P`, `Ros34PW2`) and by `BDF` (dense or sparse Jacobians); other methods
      refuse such a model. See `sciax.ode.consistent_initial_state`.
    - `consistent_init`: for a DAE, `True` (default) solves the algebraic variables
      of `y0` from the algebraic equations before integrating (Newton, optimistix;
      differentiable); `False` only checks them and raises, naming the violated rows.

    Functions are static configuration; everything to be differentiated or
    batched over belongs in `params`. The default method is `Tsit5()`.
    """

    vector_field: Callable = eqx.field(static=True)
    explicit: Callable | None = eqx.field(static=True)
    implicit: Callable | None = eqx.field(static=True)
    _labels: Labels = eqx.field(static=True)
    param_spec: ParamSpec | None = eqx.field(static=True)
    mass: MassMatrix | None = eqx.field(static=True)
    consistent_init: bool = eqx.field(static=True)

    def __init__(
        self,
        vector_field: Callable | None = None,
        *,
        explicit: Callable | None = None,
        implicit: Callable | None = None,
        names: Sequence[str] | None = None,
        units: Mapping[str, str] | None = None,
        long_names: Mapping[str, str] | None = None,
        time_units: str | None = None,
        param_shapes: Mapping[str, tuple] | tuple | None = None,
        mass_matrix: ArrayLike | None = None,
        consistent_init: bool = True,
    ):
        if (explicit is None) != (implicit is None):
            raise ValueError("ODE: give both explicit= and implicit= (an IMEX split) or neither")
        for name, fn in (("vector_field", vector_field), ("explicit", explicit), ("implicit", implicit)):
            if fn is not None and not callable(fn):
                raise TypeError(f"ODE: {name} must be callable f(t, y, params), got {type(fn).__name__}")
        if vector_field is None:
            if explicit is None:
                raise TypeError("ODE: missing vector_field (or an explicit=/implicit= split)")
            vector_field = _Sum(explicit, implicit)
        self.vector_field = vector_field
        self.explicit = explicit
        self.implicit = implicit
        self._labels = Labels.build(names=names, units=units, long_names=long_names, time_units=time_units)
        self.param_spec = ParamSpec.build(param_shapes, "ODE")
        # Sparse and hashable by content: constant configuration, like the functions.
        self.mass = None if mass_matrix is None else MassMatrix(mass_matrix)
        if not isinstance(consistent_init, bool):
            raise TypeError(f"ODE: consistent_init must be True or False, got {consistent_init!r}")
        self.consistent_init = consistent_init
        if mass_matrix is not None and explicit is not None:
            raise ValueError("ODE: a mass matrix with an IMEX split is not supported; give vector_field=")

    def rhs(self, t: Real[Array, ""], y: PyTree[Array], params: PyTree) -> PyTree[Array]:
        return self.vector_field(t, y, params)

    def default_method(self) -> AbstractMethod:
        from ._explicit import Tsit5

        return Tsit5()

    def imex_split(self) -> tuple[Callable, Callable] | None:
        if self.explicit is None:
            return None
        return self.explicit, self.implicit

    def labels(self) -> Labels:
        return self._labels

    @property
    def mass_matrix(self) -> np.ndarray | None:
        """The constant mass matrix `M` (`(n, n)`, over the flattened state), or `None` for `dy/dt = f`."""
        return None if self.mass is None else np.asarray(self.mass)

    def check_params(self, params: PyTree) -> None:
        if self.param_spec is not None:
            self.param_spec.check(params)


class _Sum(eqx.Module):
    """`explicit + implicit`, hashable so it can be a static field."""

    explicit: Callable = eqx.field(static=True)
    implicit: Callable = eqx.field(static=True)

    def __call__(self, t, y, params):
        return jax.tree_util.tree_map(lambda a, b: a + b, self.explicit(t, y, params), self.implicit(t, y, params))
