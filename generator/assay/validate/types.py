"""Logical column types and the literals that may be compared with them."""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Optional

SIMPLE_TYPES = ("string", "int", "bool", "date", "timestamp", "variant")
# The sentence that says what a field's `type:` may be; the grammar (a number written there) and
# validation (a text that is no type) both end with it.
TYPE_ADVICE = "Write one of string, int, bool, date, timestamp, variant or decimal(p,s) with 1 <= p <= 38 and 0 <= s <= p."
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


def normalize_type(text: str) -> Optional[str]:
    """The canonical spelling of a field type, or None when it is not one."""
    t = text.strip().lower()
    if t in SIMPLE_TYPES:
        return t
    m = _DECIMAL.match(t)
    if m:
        p, s = int(m.group(1)), int(m.group(2))
        if 1 <= p <= 38 and 0 <= s <= p:
            return f"decimal({p},{s})"
    return None


def is_numeric(t: str) -> bool:
    return t == "int" or t.startswith("decimal")


def is_temporal(t: str) -> bool:
    return t in ("date", "timestamp")


def parse_bound(value: Any, column_type: str) -> tuple[Optional[str], Optional[str]]:
    """A range bound as exact text for the column's type: (text, problem)."""
    if is_numeric(column_type):
        if isinstance(value, bool):
            return None, "a boolean is not a number"
        if isinstance(value, float):
            # YAML floats lose exactness; repr keeps the digits the author wrote in most cases.
            value = repr(value)
        try:
            d = Decimal(str(value).strip())
        except InvalidOperation:
            return None, f"{value!r} is not a number; write a number or an exact decimal string such as \"0.01\""
        if not d.is_finite():
            return None, f"{value!r} is not a finite number; write a number or an exact decimal string such as \"0.01\""
        if d and not -38 <= d.adjusted() < 38:  # 38 digits: the widest decimal (and int) a column holds
            return None, f"{value!r} is beyond the 38 digits any number column holds; write a bound within the column's range"
        return format(d.normalize(), "f") if d != d.to_integral_value() else str(int(d)), None
    if column_type == "date":
        try:
            return date.fromisoformat(str(value)).isoformat(), None
        except ValueError:
            return None, f"{value!r} is not an ISO date; write YYYY-MM-DD"
    if column_type == "timestamp":
        text = str(value).replace("Z", "+00:00")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None, f"{value!r} is not an ISO timestamp; write YYYY-MM-DDTHH:MM:SS"
        if parsed.tzinfo is not None:
            from datetime import timezone

            parsed = parsed.astimezone(timezone.utc).replace(tzinfo=None)
        return parsed.isoformat(sep=" "), None
    return None, f"a range compares numbers, dates or timestamps, and the column is {column_type}"


def compare_bounds(lo: str, hi: str, column_type: str) -> bool:
    """True when lo <= hi."""
    if is_numeric(column_type):
        return Decimal(lo) <= Decimal(hi)
    return lo <= hi
