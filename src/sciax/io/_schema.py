"""Validation of run configs: typed access to TOML tables, every error naming the key.

Nothing here evaluates or imports anything a config names: values are checked
against fixed types and looked up in fixed registries.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from typing import Any

_MISSING = object()


class ConfigError(ValueError):
    """A run config is invalid; the message names the key, what was expected and what was given."""


def _given(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )
    return f"{value!r:.80} ({kind})"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def unknown_key_error(where: str, key: str, allowed: Iterable[str], *, what: str = "key") -> ConfigError:
    allowed = sorted(allowed)
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    listing = ", ".join(allowed) if allowed else "none"
    return ConfigError(f"{where}: unknown {what} {key!r}{hint}; allowed: {listing}")


class Table:
    """One TOML table of a config: unknown keys are rejected up front, values checked as they are read.

    `where` is how errors name the table, e.g. `"run.toml [method]"`. `allowed=None`
    skips the check, for reading a key that decides which others are allowed.
    """

    def __init__(self, data: Any, where: str, allowed: Iterable[str] | None):
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a table (a [section] of key = value lines), got {_given(data)}")
        self.data, self.where = data, where
        self.allowed = tuple(data) if allowed is None else tuple(allowed)
        for key in data:
            if key not in self.allowed:
                raise unknown_key_error(where, key, self.allowed)

    def _get(self, key: str, default: Any, expected: str) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise ConfigError(f"{self.where}: missing key {key!r}; expected {expected}")
        return default

    def _fail(self, key: str, expected: str, value: Any) -> ConfigError:
        return ConfigError(f"{self.where} {key}: expected {expected}, got {_given(value)}")

    def string(self, key: str, default: Any = _MISSING, *, choices: Iterable[str] | None = None) -> Any:
        value = self._get(key, default, "a string" if choices is None else "one of " + ", ".join(map(repr, choices)))
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, str):
            raise self._fail(key, "a string", value)
        if choices is not None and value not in choices:
            raise unknown_key_error(f"{self.where} {key}", value, choices, what="value")
        return value

    def number(self, key: str, default: Any = _MISSING, *, positive: bool = False) -> Any:
        expected = "a number > 0" if positive else "a number"
        value = self._get(key, default, expected)
        if value is default and default is not _MISSING:
            return value
        if not _is_number(value):
            raise self._fail(key, expected, value)
        if not math.isfinite(value):
            raise self._fail(key, "a finite number", value)
        if positive and not value > 0:
            raise self._fail(key, expected, value)
        return float(value)

    def integer(self, key: str, default: Any = _MISSING, *, minimum: int | None = None) -> Any:
        expected = "an integer" if minimum is None else f"an integer >= {minimum}"
        value = self._get(key, default, expected)
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
            raise self._fail(key, expected, value)
        return value

    def numbers(
        self,
        key: str,
        default: Any = _MISSING,
        *,
        length: int | None = None,
        positive: bool = False,
        integer: bool = False,
        scalar_ok: bool = False,
    ) -> Any:
        """An array of numbers (or, with `scalar_ok`, one number meaning that value everywhere)."""
        kind = "integers" if integer else "numbers"
        expected = f"an array of {'' if length is None else str(length) + ' '}{kind}{' > 0' if positive else ''}"
        if scalar_ok:
            expected += f" (or a single {kind[:-1]})"
        value = self._get(key, default, expected)
        if value is default and default is not _MISSING:
            return value
        items = [value] if scalar_ok and not isinstance(value, list) else value
        ok_item: Callable[[Any], bool] = (
            (lambda v: isinstance(v, int) and not isinstance(v, bool))
            if integer
            else (lambda v: _is_number(v) and math.isfinite(v))
        )
        if (
            not isinstance(items, list)
            or not items
            or not all(ok_item(v) for v in items)
            or (positive and not all(v > 0 for v in items))
        ):
            raise self._fail(key, expected, value)
        if length is not None and not (scalar_ok and not isinstance(value, list)) and len(items) != length:
            raise self._fail(key, expected, value)
        return [v if integer else float(v) for v in items]

    def table(self, key: str, default: Any = _MISSING) -> Any:
        value = self._get(key, default, "a table")
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, dict):
            raise self._fail(key, "a table", value)
        return value
