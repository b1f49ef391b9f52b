"""A key as the reject table records it (`key_values`, JSON) against a key as an operator types it.

`assay explain` reads the reject rows of a key whose deliveries bronze has dropped from the reject
table itself: no staged row names their `_source_row_id` any more. A reject row records its key as
JSON text written by the engine (`{"emp_id":"E3"}`, numbers as JSON numbers, dates and instants in
ISO form), so the match is made in Python, part by part, as values of the key column's type: `10.50`
finds `10.5`, `2026-12-05T01:00:00Z` finds `2026-12-05T01:00:00`. The query is narrowed first by
the parts whose text a JSON writer spells as it is (plain ASCII words and numbers), so a large reject
table is not read whole for an ordinary key.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal
from typing import Any, Optional

from .ir.model import Entity
from .replay import key_text

__all__ = ["comparable", "key_values_narrowing", "key_values_hold", "typed_key_text"]

#: Text a JSON writer never escapes, so it appears as it is inside `key_values`.
_PLAIN = re.compile(r"^[A-Za-z0-9 ._:@-]+$")


def _type_of(entity: Entity, part: str) -> str:
    column = entity.column(part)
    return column.type if column is not None else "string"


def comparable(value: Any, assay_type: str) -> Optional[str]:
    """One key part, from `key_values` or typed by an operator, as text that is equal exactly when
    the two are the same value of the column's type; NULL stays None. Parsed by `typed_key_text`,
    the reading explain gives a key typed on the command line, then spelled by replay's `key_text`."""
    if value is None:
        return None
    if assay_type == "string" or isinstance(value, bool):
        return key_text(value)
    if assay_type == "bool" and str(value).strip().lower() in ("true", "false"):
        return str(value).strip().lower()
    typed_as = "decimal" if assay_type == "int" else assay_type  # an integer is the number it is
    text = str(value).strip()
    typed = typed_key_text(text[:10] if typed_as == "date" else text, typed_as)
    if typed is None:
        return key_text(value)
    return key_text(Decimal(typed)) if typed_as.startswith("decimal") else key_text(typed)


def key_values_narrowing(entity: Entity, key: dict[str, str]) -> tuple[str, tuple]:
    """A condition on the reject table that every row of `key` meets (and few others): each string
    or integer part whose text is plain must appear in `key_values`. `1 = 1` when no part is."""
    parts, params = [], []
    for name in entity.key:
        assay_type = _type_of(entity, name)
        if assay_type not in ("string", "int"):
            continue
        text = comparable(key.get(name), assay_type)
        if text is None or not _PLAIN.match(text):
            continue
        parts.append("cast(key_values as varchar) like ? escape '!'")
        params.append("%" + text.replace("!", "!!").replace("_", "!_").replace("%", "!%") + "%")
    return (" and ".join(parts) or "1 = 1"), tuple(params)


def key_values_hold(entity: Entity, key_values: Any, key: dict[str, str]) -> bool:
    """Whether a reject row's `key_values` is `key`, part by part as values of each column's type."""
    if not key_values:
        return False
    try:
        # JSON text on every engine assay writes; a driver that parses a json column hands a dict
        values = key_values if isinstance(key_values, dict) else json.loads(key_values, parse_float=Decimal)
    except (TypeError, ValueError):
        return False
    if not isinstance(values, dict):
        return False
    for name in entity.key:
        assay_type = _type_of(entity, name)
        found, given = comparable(values.get(name), assay_type), comparable(key.get(name), assay_type)
        if found is None or found != given:
            return False
    return True


def typed_key_text(given: str, assay_type: str) -> Optional[str]:
    """A key part as typed on the command line (or shown by the report: `2026-12-05T01:00:00Z`,
    `104.5`), as the text a cast to the key column's type reads the same on every engine; None
    when it is no value of that type (then it is compared as text, and finds nothing)."""
    text = given.strip()
    try:
        if assay_type == "timestamp":
            value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            if value.tzinfo is not None:  # timestamps are kept in UTC without a zone (decision 0011)
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return value.isoformat(sep=" ")
        if assay_type == "date":
            return dt.date.fromisoformat(text).isoformat()
        if assay_type.startswith("decimal"):
            number = Decimal(text)
            return format(number, "f") if number.is_finite() else None
    except (ValueError, ArithmeticError):
        return None
    return None
