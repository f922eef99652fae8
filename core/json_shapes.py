"""Checks that JSON read from disk (a paper JSON, a cache entry, a model manifest) has the shape the code
uses, so a wrong value is refused where it is read rather than crashing later (no Qt).

Each check returns the value with its type narrowed, or raises :class:`ShapeError` (a ``ValueError``)
whose message names the field in words: ``sentence 3: 'text' must be a string, not a number``.
"""

from __future__ import annotations

import json
import math
from typing import Any

MISSING: Any = object()  # a field with no default: its absence is an error


class ShapeError(ValueError):
    """JSON of the wrong shape; the message names the field and what it should be, in words."""


def kind_of(value: object) -> str:
    """What a JSON value is, in words ("a number", "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def loads(text: str | bytes) -> Any:
    """``json.loads`` that says "nested too deeply" in a :class:`ShapeError` instead of raising
    ``RecursionError`` (a ``json.JSONDecodeError``, a ``ValueError`` too, for bad syntax)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ShapeError("JSON nested too deeply") from None


def entry(data: dict[str, Any], key: str, where: str, default: Any = MISSING) -> Any:
    """``data[key]``, or ``default`` when it is absent (an error when there is none)."""
    if key in data:
        return data[key]
    if default is MISSING:
        raise ShapeError(f"{where}: '{key}' is missing")
    return default


def _refuse(value: object, where: str, wanted: str) -> ShapeError:
    return ShapeError(f"{where} must be {wanted}, not {kind_of(value)}")


def as_object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _refuse(value, where, "an object")
    return value


def as_list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _refuse(value, where, "a list")
    return value


def as_string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _refuse(value, where, "a string")
    return value


def as_bool(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise _refuse(value, where, "true or false")
    return value


def as_int(value: object, where: str, minimum: int | None = None) -> int:
    """A whole number (not true/false), at least ``minimum`` when given."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise _refuse(value, where, "a whole number")
    if minimum is not None and value < minimum:
        raise ShapeError(f"{where} must be at least {minimum}, not {value}")
    return value


def as_number(value: object, where: str) -> float:
    """A finite number (not true/false, not NaN or infinity)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _refuse(value, where, "a number")
    if not math.isfinite(value):
        raise ShapeError(f"{where} must be a finite number, not {value}")
    return float(value)


def as_strings(value: object, where: str) -> list[str]:
    items = as_list(value, where)
    return [as_string(item, f"{where} item {i}") for i, item in enumerate(items)]


def as_numbers(value: object, where: str, count: int) -> tuple[float, ...]:
    """A list of exactly ``count`` finite numbers."""
    items = as_list(value, where)
    if len(items) != count:
        raise ShapeError(f"{where} must hold {count} numbers, not {len(items)}")
    return tuple(as_number(item, f"{where} item {i}") for i, item in enumerate(items))


def as_index(value: object, where: str, size: int, what: str, *, lowest: int = 0) -> int:
    """A whole number in ``[lowest, size)``: a position among ``size`` ``what`` ("sections of the
    paper")."""
    index = as_int(value, where)
    if not lowest <= index < size:
        raise ShapeError(f"{where} is {index}, outside the {size} {what}")
    return index


__all__ = ["MISSING", "ShapeError", "as_bool", "as_index", "as_int", "as_list", "as_number", "as_numbers",
           "as_object", "as_string", "as_strings", "entry", "kind_of", "loads"]
