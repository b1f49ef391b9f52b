"""The bounds of a declared check (document 000): which each kind reads and what values they take.

`check_bounds` validates the bounds one check states and returns the valid ones; every problem
goes to the caller's collector (assay.checks.declared), with the code ``DECLARED_CHECK_INVALID``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Mapping, Optional

from .quoted import is_int, shown, type_phrase

CHECK_INVALID = "DECLARED_CHECK_INVALID"
MAX_ROWS = 10_000_000
MAX_NULL_PPM = 1_000_000
#: The widest continuity ceiling: the largest BIGINT, so every engine can hold it.
MAX_GAP_SECONDS = 2**63 - 1
DECIMAL_BOUND_RE = re.compile(r"-?(?:0|[1-9][0-9]{0,38})(?:\.[0-9]{1,18})?")


def is_decimal_bound(text: object) -> bool:
    """Whether ``text`` is a ``value_range`` bound: a string matching
    ``^-?(?:0|[1-9][0-9]{0,38})(?:\\.[0-9]{1,18})?$`` (no exponent, no ``+``, no spaces)."""
    return isinstance(text, str) and DECIMAL_BOUND_RE.fullmatch(text) is not None


def check_bounds(
    kind: str,
    label: str,
    item: Mapping,
    named: Optional[list[str]],
    index: int,
    out: Any,
) -> dict[str, Any]:
    """Validate the bounds ``kind`` reads; return the valid ones."""
    column = f"column {named[0]}" if named and len(named) == 1 else "its column"
    here = (index,)
    values: dict[str, Any] = {}

    if kind == "null_ceiling":
        ppm = item.get("max_null_ppm")
        if ppm is None:
            out.add(
                CHECK_INVALID,
                f"{label} caps the nulls of {column} and states no max_null_ppm; an unstated "
                "ceiling is not an unlimited one",
                here,
            )
        elif not is_int(ppm) or not 0 <= ppm <= MAX_NULL_PPM:
            out.add(
                CHECK_INVALID,
                f"{label} states max_null_ppm {shown(ppm)}, which is not an integer between 0 "
                "and 1,000,000; the ceiling is in whole parts per million of the table's rows "
                "(20000 allows two per cent), and a fraction has no spelling here",
                (index, "max_null_ppm"),
            )
        else:
            values["max_null_ppm"] = ppm

    elif kind == "value_range":
        for bound in ("min_value", "max_value"):
            v = item.get(bound)
            if v is None:
                out.add(
                    CHECK_INVALID,
                    f"{label} bounds the values of {column} and states no {bound}; an unstated "
                    "bound is not an open one",
                    here,
                )
            elif isinstance(v, str):
                if is_decimal_bound(v):
                    values[bound] = v
                else:
                    out.add(
                        CHECK_INVALID,
                        f"{label} states {bound} {shown(v)}, which is not a decimal string "
                        "of the form -?digits[.digits] (at most 39 digits before the point and "
                        "18 after it, no leading zeros, no exponent, no +); write e.g. "
                        "'-12.5'",
                        (index, bound),
                    )
            else:
                suggestion = ""
                if is_int(v) or isinstance(v, (float, Decimal)):
                    suggestion = f", e.g. {bound}: \"{v}\""
                out.add(
                    CHECK_INVALID,
                    f"{label} states {bound} as {type_phrase(v)} {shown(v)}; bounds are "
                    "decimal strings, compared exactly and never through a float, so quote "
                    f"it{suggestion}",
                    (index, bound),
                )
        lo, hi = values.get("min_value"), values.get("max_value")
        if lo is not None and hi is not None and Decimal(lo) > Decimal(hi):
            out.add(
                CHECK_INVALID,
                f"{label} states min_value {lo} above its max_value {hi}; no value lies in that "
                "range, so swap them",
                (index, "min_value"),
            )

    elif kind == "continuity":
        gap = item.get("max_gap_seconds")
        if gap is None:
            out.add(
                CHECK_INVALID,
                f"{label} bounds the gaps of {column} and states no max_gap_seconds; an "
                "unstated ceiling is not an unlimited one",
                here,
            )
        elif not is_int(gap) or not 1 <= gap <= MAX_GAP_SECONDS:
            out.add(
                CHECK_INVALID,
                f"{label} states max_gap_seconds {shown(gap)}, which is not a positive "
                "integer; write the widest gap allowed between two consecutive distinct "
                "values, e.g. 7200 for two hours",
                (index, "max_gap_seconds"),
            )
        else:
            values["max_gap_seconds"] = gap

    elif kind == "row_expectation":
        lo, hi = item.get("min_rows"), item.get("max_rows")
        if lo is None and hi is None:
            out.add(
                CHECK_INVALID,
                f"{label} is a row_expectation check and states neither min_rows nor max_rows; "
                "state at least one",
                here,
            )
        if lo is not None:
            if not is_int(lo) or not 0 <= lo <= MAX_ROWS:
                out.add(
                    CHECK_INVALID,
                    f"{label} states min_rows {shown(lo)}; min_rows is a whole number of rows "
                    "from 0 to 10,000,000, the most one run may write",
                    (index, "min_rows"),
                )
            else:
                values["min_rows"] = lo
        if hi is not None:
            if not is_int(hi) or not 1 <= hi <= MAX_ROWS:
                out.add(
                    CHECK_INVALID,
                    f"{label} states max_rows {shown(hi)}; max_rows is a whole number of rows "
                    "from 1 to 10,000,000, the most one run may write",
                    (index, "max_rows"),
                )
            else:
                values["max_rows"] = hi
        if "min_rows" in values and "max_rows" in values and values["min_rows"] > values["max_rows"]:
            out.add(
                CHECK_INVALID,
                f"{label} states min_rows {values['min_rows']} over its max_rows "
                f"{values['max_rows']}; no row count satisfies a floor over its ceiling, so "
                "lower the floor or raise the ceiling",
                (index, "min_rows"),
            )
    return values
