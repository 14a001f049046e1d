"""Fingerprints: a stable hash of what defines a run, so a checkpoint is never resumed into another run.

`describe` turns models, methods, params and arrays into plain JSON data that is
the same in every process (no memory addresses, no pickling); `fingerprint`
hashes each part separately so that a mismatch can say *what* changed.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import re
import types
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_MAX_DEPTH = 64


def describe(obj: Any, _depth: int = 0) -> Any:
    """A JSON-serialisable description of `obj` that is identical across processes.

    Arrays are described by dtype, shape and a sha256 of their bytes; equinox
    Modules and dataclasses by type and fields; functions by qualified name and
    byte code (so editing a right-hand side changes the description).
    """
    if _depth > _MAX_DEPTH:
        return "<too deep>"
    d = _depth + 1
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int) and not isinstance(obj, enum.Enum):
        return obj
    if isinstance(obj, float):
        return {"float": repr(obj)}  # repr round-trips exactly
    if isinstance(obj, (np.ndarray, np.generic, jax.Array)):
        a = np.asarray(obj)
        return {"dtype": str(a.dtype), "shape": list(a.shape), "sha256": hashlib.sha256(a.tobytes()).hexdigest()}
    if isinstance(obj, Mapping):
        return {"mapping": sorted(([str(k), describe(v, d)] for k, v in obj.items()), key=lambda kv: kv[0])}
    if isinstance(obj, (list, tuple)):
        return [describe(v, d) for v in obj]
    if isinstance(obj, enum.Enum):
        return {"enum": f"{type(obj).__qualname__}.{obj.name}"}
    if isinstance(obj, type):
        return {"type": f"{obj.__module__}.{obj.__qualname__}"}
    if isinstance(obj, functools.partial):
        return {"partial": describe(obj.func, d), "args": describe(obj.args, d), "keywords": describe(obj.keywords, d)}
    if isinstance(obj, types.MethodType):
        return {"method": describe(obj.__func__, d), "self": describe(obj.__self__, d)}
    if isinstance(obj, types.FunctionType):
        return {"function": f"{obj.__module__}.{obj.__qualname__}", "code": _describe_code(obj.__code__, d)}
    if dataclasses.is_dataclass(obj):  # includes every equinox Module
        fields = {f.name: describe(getattr(obj, f.name, None), d) for f in dataclasses.fields(obj)}
        return {"object": f"{type(obj).__module__}.{type(obj).__qualname__}", "fields": fields}
    if callable(obj) and hasattr(obj, "__qualname__"):
        return {"callable": f"{getattr(obj, '__module__', '?')}.{obj.__qualname__}"}
    return {"object": f"{type(obj).__module__}.{type(obj).__qualname__}", "repr": _ADDRESS.sub("", repr(obj))}


def _describe_code(code: types.CodeType, depth: int) -> Any:
    consts = [
        _describe_code(c, depth + 1) if isinstance(c, types.CodeType) else describe(c, depth + 1)
        for c in code.co_consts
    ]
    return {"bytes": hashlib.sha256(code.co_code).hexdigest(), "consts": consts, "names": list(code.co_names)}


def digest(obj: Any) -> str:
    """sha256 (hex) of `describe(obj)`."""
    text = json.dumps(describe(obj), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(**parts: Any) -> dict[str, str]:
    """One digest per named part, e.g. `fingerprint(model=..., params=..., ts=...)`."""
    return {name: digest(value) for name, value in sorted(parts.items())}
