"""`replace_static`: a copy of an equinox module with some (static) fields replaced."""

from __future__ import annotations

import copy

import equinox as eqx


def replace_static(module: eqx.Module, **fields) -> eqx.Module:
    """A shallow copy of `module` with some fields replaced, bypassing its `__init__`
    (whose checks and derived fields were done for the original), e.g. a model's grid swapped
    for a sharded grid or a block of it."""
    new = copy.copy(module)
    for name, value in fields.items():
        object.__setattr__(new, name, value)
    return new
