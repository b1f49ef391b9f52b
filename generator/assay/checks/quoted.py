"""What the user wrote, as assay reads and quotes it: a refusal quotes text in single quotes and
anything else bare or by its shape, never a Python repr (the declared checks' and the thresholds'
messages); a number a limit states is read as the exact decimal text the user wrote."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping


def is_int(value: Any) -> bool:
    """An integer, and not a boolean (YAML's true is no count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def shown(value: Any) -> str:
    """A user's value as a message quotes it: text in single quotes, anything else bare."""
    if isinstance(value, str):
        return "'" + value + "'"
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return str(value)


def type_phrase(value: Any) -> str:
    """What a value is, as a sentence names it: `text`, `a number`, `a list`..."""
    if value is None:
        return "empty"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def count(n: int, noun: str) -> str:
    """`1 column`, `2 columns`."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def decimal_text(value: Any):
    """The exact decimal text of a number written as a string or a YAML number, or None when it is
    not one (booleans, nothing, NaN, infinities, lists...). A YAML float is read by its shortest
    spelling (``0.05`` is ``0.05``), never by its binary value; the caller checks the shape."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return format(Decimal(repr(value)), "f")
    if isinstance(value, str):
        return value.strip()
    return None
