"""One spelling of the values of a kept row, whatever engine kept it (decision 0952).

A failing check's rows are kept as each engine's JSON of the row (decision 0532), which keeps every
digit but not one spelling: DuckDB writes a decimal(12,2) 20000.00 as `20000.0` where PostgreSQL's
numeric and Spark write `20000.00`; PostgreSQL writes timestamps with a `T` and an offset, Spark
with an offset, where DuckDB writes neither; PostgreSQL's jsonb orders a row's and a document's keys
by length. `assay check rows` spells every value by its column's assay type
instead, exactly as the sentences of `assay checks` spell a value (checks/detail.py), so that a
row and the sentence about it agree:

- ``decimal(p,s)``: the number with every significant digit and no trailing zero (``20000``,
  ``0.1``, ``104.5``), as a JSON number;
- ``timestamp``: ISO 8601 in UTC, ``2026-03-01T10:00:00Z``, the fraction of a second without
  trailing zeros (an engine that wrote an offset wrote the instant in its session zone);
- ``variant``: the JSON document itself (an engine whose variant is text wrote it as a string),
  object keys in name order at every depth;
- ``string``, ``int``, ``bool``, ``date``: as every engine writes them; an ``int``, ``bool`` or
  ``decimal`` an engine wrote as text (Spark's rows kept through a map of strings, before session
  45) is read as its type.

A row's keys come in its table's column order where the types are known, then the others in name
order. A value whose column has no known type, or that does not read as its type (a row kept
before a spec changed the column's type), is shown as the engine wrote it.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Callable, Mapping, Optional

from .. import exactjson
from ..engine_types import TYPE_NAMES
from .detail import _number_text, _timestamp_text

#: The engine types a variant is kept in that hold JSON itself (engine_types.TYPE_NAMES); any
#: other (text) holds the document's text, which the row's JSON carries as a string.
JSON_TYPES = ("JSON", "JSONB", "SUPER", "VARIANT")


def shown_rows(kept: list[dict[str, Any]], types_of: Optional[Callable[[str, str], Mapping[str, str]]],
               dialect: Optional[str]) -> list[dict[str, Any]]:
    """The kept rows of one run's check as `assay check rows` shows them: each ``row`` spelled by
    ``types_of(table, check_id)`` (None: no types known), ordered per table by its text as shown
    and numbered from 1 in that order (each engine ordered the JSON text it wrote, decision 0532)."""
    types: dict[tuple[str, str], Mapping[str, str]] = {}
    shown = []
    for item in kept:
        key = (item["table"], item["check_id"])
        if key not in types:
            types[key] = types_of(*key) if types_of is not None else {}
        shown.append({**item, "row": spell_row(item["row"], types[key], dialect)})
    shown.sort(key=lambda i: (i["table"], exactjson.dumps(i["row"])))
    numbers: dict[str, int] = {}
    for item in shown:
        numbers[item["table"]] = item["row_number"] = numbers.get(item["table"], 0) + 1
    return shown


def spell_row(row: Mapping[str, Any], types: Mapping[str, str], dialect: Optional[str]) -> dict[str, Any]:
    """``row`` (a kept row read back with exactjson) with each value spelled by its type in
    ``types`` ({column: assay type}, table order), keys in table order then by name; ``dialect``
    is the engine's (sqlglot's name) that kept it."""
    order = {name: n for n, name in enumerate(types)}
    keys = sorted(row, key=lambda k: (0, order[k], "") if k in order else (1, 0, k))
    return {k: spell_value(row[k], types[k], dialect) if k in types else row[k] for k in keys}


def spell_value(value: Any, assay_type: str, dialect: Optional[str] = None) -> Any:
    """One kept value, spelled by its assay type (see the module's docstring)."""
    if value is None:
        return None
    if isinstance(value, str) and (assay_type in _TEXT_READS or assay_type.startswith("decimal")):
        # a value an engine wrote as text (Spark's rows kept through a map of strings before
        # session 45): read as its type, when it is one
        read = _TEXT_READS.get(assay_type, _decimal_text)(value.strip())
        if read is None:
            return value
        value = read
    if assay_type.startswith("decimal") and isinstance(value, Decimal):
        return Decimal(_number_text(value)) if value.is_finite() else value
    if assay_type == "timestamp" and isinstance(value, str):
        try:
            return _timestamp_text(dt.datetime.fromisoformat(value.strip()))
        except (ValueError, OverflowError):  # not a timestamp's text, or out of range in UTC
            return value
    if assay_type == "variant":
        return _variant(value, dialect)
    return value


def _decimal_text(text: str) -> Optional[Decimal]:
    try:
        value = Decimal(text)
    except ArithmeticError:
        return None
    return value if value.is_finite() else None


def _int_text(text: str) -> Optional[int]:
    return int(text) if text.lstrip("-").isdigit() and text.isascii() else None


_TEXT_READS: dict[str, Callable[[str], Any]] = {"int": _int_text, "bool": {"true": True, "false": False}.get}


def _variant(value: Any, dialect: Optional[str]) -> Any:
    if isinstance(value, str) and TYPE_NAMES.get(dialect or "default", TYPE_NAMES["default"])["variant"] not in JSON_TYPES:
        try:
            value = exactjson.loads(value)
        except ValueError:
            return value
    return _sorted(value)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value
