"""`ParamSpec`: the params a model expects, checked by `simulate` at trace time.

Without a declaration a missing key surfaces deep inside the right-hand side as a
bare `KeyError: 'delta'`, `params=None` as `'NoneType' object is not subscriptable`
and a wrongly shaped value as a broadcasting error from `jnp.stack`. A model that
declares its params gets one message naming the model, the expected keys and
shapes, and what was given instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import jax
import numpy as np

Shape = tuple[int | None, ...]


def _shape(shape, where: str) -> Shape:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, str):
        raise TypeError(f"{where} must be a shape such as () or (3,), got {shape!r}")
    for n in shape:
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
            raise TypeError(f"{where} must be a shape of non-negative integers (None for any length), got {shape!r}")
    return tuple(None if n is None else int(n) for n in shape)


def _show(shape: Shape) -> str:
    text = "(" + ", ".join("any" if n is None else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
    return text + " (a scalar)" if shape == () else text


def _matches(actual: tuple[int, ...], expected: Shape) -> bool:
    return len(actual) == len(expected) and all(e is None or a == e for a, e in zip(actual, expected))


def _given(params) -> str:
    if isinstance(params, Mapping):
        return "{" + ", ".join(f"{k!r}: shape {np.shape(v)}" for k, v in params.items()) + "}"
    if params is None:
        return "None"
    return f"{type(params).__name__} {params!r:.80}"


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """What `params` a model takes (hashable: it lives in a static field).

    - `kind`: `"dict"` (a dict with the keys of `keys`), `"array"` (one array of
      shape `shape`) or `"none"` (no params: `None` or an empty dict).
    - `keys`: `((name, shape), ...)` for `"dict"`; `optional` names the keys that
      may be left out.
    - `model`: how error messages name the model, e.g. `"sciax.ode.lotka_volterra()"`.

    Shapes are tuples of ints, `None` standing for any length; `()` is a scalar.
    Under `jax.vmap` the check sees one member's shapes, as the model does.
    """

    kind: str
    keys: tuple[tuple[str, Shape], ...] = ()
    optional: frozenset[str] = frozenset()
    shape: Shape = ()
    model: str = "the model"

    @classmethod
    def build(cls, declared, model: str, *, optional: Sequence[str] = ()) -> ParamSpec | None:
        """A spec from a declaration: `None` (undeclared: nothing is checked), `{}` (no
        params), `{name: shape, ...}` (a dict of arrays) or a shape tuple (one array).
        A `ParamSpec` is returned unchanged."""
        if declared is None or isinstance(declared, ParamSpec):
            return declared
        where = f"{model}: param_shapes"
        if isinstance(declared, Mapping):
            if not declared:
                return cls("none", model=model)
            for key in declared:
                if not isinstance(key, str):
                    raise TypeError(f"{where} must map parameter names (str) to shapes, got key {key!r}")
            keys = tuple((key, _shape(shape, f"{where}[{key!r}]")) for key, shape in declared.items())
            unknown = sorted(set(optional) - set(declared))
            if unknown:
                raise ValueError(f"{where}: optional names {unknown} are not among the declared keys")
            return cls("dict", keys=keys, optional=frozenset(optional), model=model)
        return cls("array", shape=_shape(declared, where), model=model)

    def expected(self) -> str:
        """The expectation in words, for error messages."""
        if self.kind == "none":
            return "no params (pass params=None)"
        if self.kind == "array":
            return f"params = one array of shape {_show(self.shape)}"
        optional = f" (optional: {', '.join(map(repr, sorted(self.optional)))})" if self.optional else ""
        if all(shape == () for _, shape in self.keys):
            return "params = a dict of scalars " + ", ".join(repr(name) for name, _ in self.keys) + optional
        entries = ", ".join(f"{name!r}: shape {_show(shape)}" for name, shape in self.keys)
        return "params = a dict {" + entries + "}" + optional

    def check(self, params) -> None:
        """Raise `TypeError` (wrong kind of object) or `ValueError` (missing or unexpected
        keys, wrong shapes) naming the model, the expectation and what was given."""
        head = f"simulate: {self.model} expects {self.expected()}"
        if self.kind == "none":
            if params is None or (isinstance(params, (Mapping, list, tuple)) and not jax.tree_util.tree_leaves(params)):
                return
            raise TypeError(f"simulate: {self.model} takes no params (pass params=None), got {_given(params)}")
        if self.kind == "array":
            if params is None or isinstance(params, (Mapping, list, tuple)):
                raise TypeError(f"{head}, got {_given(params)}")
            if not _matches(np.shape(params), self.shape):
                raise ValueError(f"{head}, got shape {np.shape(params)}")
            return
        if not isinstance(params, Mapping):
            raise TypeError(f"{head}, got {_given(params)}")
        names = [name for name, _ in self.keys]
        missing = [n for n in names if n not in params and n not in self.optional]
        extra = [k for k in params if k not in names]
        problems = []
        if missing:
            problems.append("params is missing " + ", ".join(map(repr, missing)))
        if extra:
            problems.append("params has unexpected " + ", ".join(map(repr, extra)) + ", which the model would ignore")
        for name, shape in self.keys:
            if name in params:
                problems.extend(self._shape_problem(name, params[name], shape))
        if problems:
            raise ValueError(
                f"simulate: {self.model}: " + "; ".join(problems) + f" (it expects {self.expected()}; "
                f"got {_given(params)})"
            )

    @staticmethod
    def _shape_problem(name: str, value, shape: Shape) -> list[str]:
        leaves = jax.tree_util.tree_leaves(value)
        if len(leaves) != 1 or isinstance(value, (Mapping, list, tuple)):
            return [f"params[{name!r}] is not an array but a {type(value).__name__}"]
        actual = np.shape(value)
        if not _matches(actual, shape):
            return [f"params[{name!r}] has shape {actual}, expected {_show(shape)}"]
        return []


__all__ = ["ParamSpec"]
