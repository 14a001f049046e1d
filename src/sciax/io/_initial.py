"""Named initial-condition generators for run configs (`[initial] generator = "..."`).

Each generator reads its keys from a `Table` and returns a float64 NumPy array;
the random one draws from NumPy's PCG64 generator with an explicit seed, so a
config always gives the same initial state.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..pde import Grid
from ._registry import FD, ODE, ModelSpec
from ._schema import ConfigError, Table, unknown_key_error


def _constant(t: Table, grid: Grid) -> np.ndarray:
    return np.full(grid.shape, t.number("value"))


def _sine(t: Table, grid: Grid) -> np.ndarray:
    modes = t.numbers("modes", [1] * grid.ndim, length=grid.ndim, integer=True, scalar_ok=True)
    modes = modes * grid.ndim if len(modes) == 1 else modes
    phase = sum(
        2 * np.pi * m * (x - o) / length for m, x, o, length in zip(modes, grid.meshgrid(), grid.origin, grid.lengths)
    )
    return t.number("offset", 0.0) + t.number("amplitude", 1.0) * np.sin(phase)


def _gaussian(t: Table, grid: Grid) -> np.ndarray:
    centre_default = [o + length / 2 for o, length in zip(grid.origin, grid.lengths)]
    centre = t.numbers("center", centre_default, length=grid.ndim)
    width = t.number("width", positive=True)
    r2 = 0.0
    for x, c, length in zip(grid.meshgrid(), centre, grid.lengths):
        d = (x - c + length / 2) % length - length / 2  # nearest periodic image
        r2 = r2 + d**2
    return t.number("offset", 0.0) + t.number("amplitude", 1.0) * np.exp(-r2 / (2 * width**2))


def _random(t: Table, grid: Grid) -> np.ndarray:
    rng = np.random.default_rng(t.integer("seed", minimum=0))
    return t.number("offset", 0.0) + t.number("amplitude", 1.0) * rng.standard_normal(grid.shape)


# generator name -> (function, keys it reads besides "generator")
GENERATORS: dict[str, tuple[Callable[[Table, Grid], np.ndarray], tuple[str, ...]]] = {
    "constant": (_constant, ("value",)),
    "sine": (_sine, ("amplitude", "modes", "offset")),
    "gaussian": (_gaussian, ("amplitude", "width", "center", "offset")),
    "random": (_random, ("seed", "amplitude", "offset")),
}


def initial_state(data: object, source: str, spec: ModelSpec, grid: Grid | None) -> np.ndarray | dict[str, np.ndarray]:
    """The initial state the `[initial]` table `data` of config `source` describes, for `spec` on `grid`.

    Multi-field models get one table per field: spectral models take the fields
    stacked along a leading axis, FD models a dict keyed by field name.
    """
    where = f"{source} [initial]"
    if spec.kind == ODE:
        t = Table(data, where, ("generator", "values"))
        t.string("generator", choices=("constant",))
        return np.asarray(t.numbers("values", length=len(spec.state)))
    if spec.fields is None:
        return _field(data, where, grid)
    t = Table(data, where, spec.fields)
    missing = [f for f in spec.fields if f not in t.data]
    if missing:
        raise ConfigError(
            f"{where}: missing table [initial.{missing[0]}]; this model needs one per field "
            f"({', '.join(spec.fields)}), each with its own generator"
        )
    fields = {f: _field(t.data[f], f"{source} [initial.{f}]", grid) for f in spec.fields}
    return fields if spec.kind == FD else np.stack(list(fields.values()))


def _field(data: object, where: str, grid: Grid) -> np.ndarray:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table with a generator, got {data!r:.80}")
    name = data.get("generator")
    if name is None:
        raise ConfigError(f"{where}: missing key 'generator'; expected one of {', '.join(map(repr, GENERATORS))}")
    if not isinstance(name, str) or name not in GENERATORS:
        raise unknown_key_error(f"{where} generator", str(name), GENERATORS, what="value")
    fn, keys = GENERATORS[name]
    return fn(Table(data, where, ("generator", *keys)), grid)
