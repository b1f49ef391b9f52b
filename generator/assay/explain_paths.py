"""A JSON path inside a bronze column, as `assay explain` tells it: why a read found nothing to
convert, or the value it read (the engine decided the coercion; this only says it)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Optional


def _kind(value: Any) -> Optional[str]:
    """A JSON value's kind in words where a path read cannot go on through it; None for an object
    or a null (a key read goes on, or finds nothing)."""
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    return "a string" if isinstance(value, str) else "an array"


def unreadable_path(text: str, path: tuple[str, ...]) -> Optional[str]:
    """Why a read of `path` (the bronze column, then the keys) inside `text` found nothing to
    convert, in words: the text is not one strict JSON document (no NaN or Infinity; decision
    1123), or the document, or a value on the way, is no object where a key is read (decision
    1130). None when the path could be followed (a missing key or a null: no failure). The build's
    own engine decided the coercion; this only chooses how to say it, so a document only some
    engine refuses is told as a failed conversion."""
    def refuse(name):
        raise ValueError(name)
    try:
        value = json.loads(text, parse_constant=refuse)
    except ValueError:
        return "is not JSON"
    for depth, key in enumerate(path[1:]):
        kind = _kind(value)
        if kind is not None:
            return f"is {kind}" if depth == 0 else f"holds {kind} at $.{'.'.join(path[:depth + 1])}"
        if value is None:
            return None
        value = value.get(key)
    return None


def text_at_path(text: Any, path: tuple[str, ...]) -> Optional[str]:
    """The text a field's read of `path` (the bronze column, then the keys) took from `text`, as the
    engines' JSON text extraction gives it: a string as itself, any other value as its JSON. None
    when the document is not JSON or the path reaches no value (a redaction removed it: nothing to
    show then)."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    for key in path[1:]:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
