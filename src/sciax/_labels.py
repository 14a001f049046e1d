"""Static metadata that turns a state pytree into a labelled xarray Dataset."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence


def _freeze_mapping(mapping: Mapping[str, str] | None, what: str) -> tuple:
    if mapping is None:
        return ()
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a mapping from name to string, got {type(mapping).__name__}")
    for key, value in mapping.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"{what} must map str to str, got {key!r}: {value!r}")
    return tuple(sorted(mapping.items()))


@dataclasses.dataclass(frozen=True)
class Labels:
    """Names, units and coordinates of a model's state, used by `Solution.to_xarray`.

    Hashable, so it can live in a static field of `sciax.Solution` and survive
    `jax.jit`/`jax.vmap` untouched.

    **Fields:**

    - `names`: for an array state whose last axis holds distinct quantities
      (e.g. prey and predator), one name per entry of that axis; each becomes its
      own data variable. `None` keeps the array whole, as variable `variable`.
    - `variable`: the data-variable name of an unnamed array state.
    - `dims`: dimension names of one state array without time (e.g. `("x", "y")`
      for a field on a 2-D grid). `None` means `("state",)` for 1-D states,
      `("dim_0", ...)` otherwise.
    - `coords`: `((dim, values), ...)` coordinate values per dimension.
    - `units`, `long_names`: `((name, text), ...)`, CF-style attributes per variable.
    - `time_units`: units of the time coordinate.
    """

    names: tuple[str, ...] | None = None
    variable: str = "y"
    dims: tuple[str, ...] | None = None
    coords: tuple[tuple[str, tuple[float, ...]], ...] = ()
    units: tuple[tuple[str, str], ...] = ()
    long_names: tuple[tuple[str, str], ...] = ()
    time_units: str | None = None

    @classmethod
    def build(
        cls,
        *,
        names: Sequence[str] | None = None,
        variable: str = "y",
        dims: Sequence[str] | None = None,
        coords: Mapping[str, Sequence[float]] | None = None,
        units: Mapping[str, str] | None = None,
        long_names: Mapping[str, str] | None = None,
        time_units: str | None = None,
    ) -> Labels:
        """Validate user-facing arguments and freeze them into a hashable `Labels`."""
        if names is not None:
            if isinstance(names, str) or not all(isinstance(n, str) for n in names):
                raise TypeError(f"names must be a sequence of strings, got {names!r}")
            if len(set(names)) != len(names):
                raise ValueError(f"names must be distinct, got {tuple(names)!r}")
            names = tuple(names)
        if dims is not None:
            if isinstance(dims, str) or not all(isinstance(d, str) for d in dims):
                raise TypeError(f"dims must be a sequence of strings, got {dims!r}")
            dims = tuple(dims)
        frozen_coords = tuple((str(k), tuple(float(v) for v in values)) for k, values in (coords or {}).items())
        if time_units is not None and not isinstance(time_units, str):
            raise TypeError(f"time_units must be a string, got {time_units!r}")
        return cls(
            names=names,
            variable=variable,
            dims=dims,
            coords=frozen_coords,
            units=_freeze_mapping(units, "units"),
            long_names=_freeze_mapping(long_names, "long_names"),
            time_units=time_units,
        )

    def attrs(self, name: str) -> dict[str, str]:
        """CF-style attributes (`units`, `long_name`) of data variable `name`."""
        out = {}
        units = dict(self.units)
        long_names = dict(self.long_names)
        if name in units:
            out["units"] = units[name]
        if name in long_names:
            out["long_name"] = long_names[name]
        return out
