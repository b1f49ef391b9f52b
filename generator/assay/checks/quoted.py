"""How a refusal quotes what the user wrote (the declared checks' and the thresholds' messages):
text in single quotes, anything else bare or by its shape, never a Python repr."""

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
