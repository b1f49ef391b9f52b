"""000's exact detail sentences from a recorded result (a row of ``<meta>.assay_check_results``).

The warehouse records what it measured, as integers and as values cast to text (never a
float): ``measures`` holds the counts and values, ``check_spec`` the check's columns, their
assay types and bounds. This module turns them back into typed values and hands them to
:mod:`assay.checks.detail`, so the sentences are written in one place only.
"""

from __future__ import annotations

import datetime as _dt
import json
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Mapping, Optional, Union

from .anomaly import ANOMALY_KIND, anomaly_detail
from .increases import INCREASE_KINDS, increase_detail
from ..privacy import HIDDEN
from .detail import (
    Verdict,
    continuity_detail,
    continuity_hidden_detail,
    continuity_unmeasurable_detail,
    key_uniqueness_detail,
    null_ceiling_detail,
    rate_detail,
    row_expectation_detail,
    scan_budget_exceeded_detail,
    time_budget_exceeded_detail,
    unreadable_detail,
    value_range_detail,
    value_range_unorderable_detail,
)

__all__ = ["parse_value", "verdict_of", "continuity_unmeasurable_detail"]


def parse_value(text: Optional[str], assay_type: str) -> Any:
    """A value the warehouse cast to text, back as the Python value of its assay type
    (so a timestamp renders as ``'2026-03-01T00:51:00Z'`` and ``104.50`` as ``104.5``)."""
    if text is None:
        return None
    try:
        if assay_type == "int":
            return int(text)
        if assay_type.startswith("decimal"):
            return Decimal(text)
        if assay_type == "date":
            return _dt.date.fromisoformat(text)
        if assay_type == "timestamp":
            return _dt.datetime.fromisoformat(text)
        if assay_type == "bool":
            return {"true": True, "false": False, "t": True, "f": False}.get(text.lower(), text)
    except (ValueError, InvalidOperation):
        # An engine spelling this parser does not know: show the engine's text as it is.
        return text
    return text


def _gap(measures: Mapping[str, Any], spec: Mapping[str, Any]) -> Optional[Union[Fraction, Decimal, int]]:
    text = measures.get("gap")
    if text is None:
        return None
    domain = spec.get("domain")
    if domain == "numeric":
        return Decimal(text)
    # A timestamp gap is recorded in microseconds, a date gap in seconds: both exact integers.
    return Fraction(int(Decimal(text)), int(spec.get("gap_scale") or 1))


def _unmeasured(kind: str, measures: Mapping[str, Any]) -> Optional[Verdict]:
    """A declared check the row pass did not measure: over a budget (not_evaluated, decision
    0530) or with an unreadable candidate (decision 0531); None for a measured one."""
    skipped = measures.get("not_evaluated")
    if skipped:
        if skipped.get("code") == "CHECK_TIME_BUDGET_EXCEEDED":
            return time_budget_exceeded_detail(int(skipped["ceiling_seconds"]))
        return scan_budget_exceeded_detail(int(skipped["estimated_bytes"]), int(skipped["ceiling_bytes"]))
    if kind != "sql" and measures.get("error") is not None:
        return unreadable_detail(str(measures["error"]))
    return None


def verdict_of(kind: str, spec: Mapping[str, Any], measures: Mapping[str, Any]) -> Verdict:
    """The verdict and exact sentence of one recorded result.

    ``spec`` and ``measures`` are the decoded ``check_spec`` and ``measures`` JSON texts."""
    columns = list(spec.get("columns") or [])
    types = list(spec.get("types") or [])
    bounds = spec.get("bounds") or {}
    rows = int(measures.get("rows") or 0)
    unmeasured = _unmeasured(kind, measures)
    if unmeasured is not None:
        return unmeasured
    if kind == "sql":
        if measures.get("error") is not None:
            # Its query failed in the engine (decision 0511): the engine's own message, as recorded.
            return Verdict(False, f"errored: {measures['error']}")
        # A SQL check file (document 002): its count is the number of rows it returned.
        n = int(measures["failing_rows"])
        outcome = bounds.get("on_failure", "block")
        if n == 0:
            return Verdict(True, "returned no rows, as expected")
        word = "row" if n == 1 else "rows"
        return Verdict(outcome == "warn", f"returned {n} {word}" + (" (warned)" if outcome == "warn" else " (kept)" if outcome == "keep" else ""))
    if kind in ("quarantine_rate", "flag_rate", "rule_rate"):
        # A rate threshold (decision 0980): counts of the entity's staged rows, judged exactly.
        return rate_detail(kind, failing=int(measures.get("failing") or 0), evaluated=int(measures.get("evaluated") or 0),
                           max_rate=str(bounds["max_rate"]), min_rows=int(bounds.get("min_rows") or 0),
                           rule=bounds.get("rule"))
    if kind in INCREASE_KINDS:
        # A change limit (decision 0981): this run's counts against the previous successful runs'.
        return increase_detail(kind, bounds, measures)
    if kind == ANOMALY_KIND:
        # Judged against the band the detector learnt from earlier runs (decision 1030).
        return anomaly_detail(bounds, measures)
    if kind == "row_expectation":
        return row_expectation_detail(rows, min_rows=bounds.get("min_rows"), max_rows=bounds.get("max_rows"))
    if kind == "null_ceiling":
        return null_ceiling_detail(columns[0], null_rows=int(measures["nulls"]), rows=rows,
                                   max_null_ppm=int(bounds["max_null_ppm"]))
    if kind == "value_range":
        lo, hi = bounds["min_value"], bounds["max_value"]
        if not spec.get("orderable"):
            return value_range_unorderable_detail(columns[0], lo, hi)
        if int(measures.get("outside") or 0) == 0:
            return value_range_detail(columns[0], lo, hi, rows=rows, non_null_values=int(measures["values"]))
        # A pii column's value is measured as the HIDDEN marker, with the bound it broke (0937).
        return value_range_detail(columns[0], lo, hi, rows=rows, non_null_values=int(measures["values"]),
                                  offending=parse_value(measures.get("first"), types[0]), side=measures.get("side"))
    if kind == "key_uniqueness":
        repeats = int(measures.get("repeats") or 0)
        key = measures.get("key")
        first = [parse_value(v, t) for v, t in zip(key, types)] if repeats and key is not None else None
        return key_uniqueness_detail(columns, rows=rows, repeating_rows=repeats, first_repeat=first)
    if kind == "continuity":
        ceiling = int(bounds["max_gap_seconds"])
        domain = spec.get("domain")
        if domain is None:
            return continuity_unmeasurable_detail(columns[0], ceiling)
        distinct = int(measures.get("distinct") or 0)
        if distinct > 1 and measures.get("gap") == HIDDEN:  # over a pii column (decision 0937)
            return continuity_hidden_detail(columns[0], ceiling, domain=domain, distinct_values=distinct,
                                            over=bool(int(measures.get("over") or 0)))
        gap = _gap(measures, spec) if distinct > 1 else None
        if gap is None:
            return continuity_detail(columns[0], ceiling, domain=domain, distinct_values=distinct,
                                     gap_from=parse_value(measures.get("only"), types[0]))
        return continuity_detail(columns[0], ceiling, domain=domain, distinct_values=distinct, widest_gap=gap,
                                 gap_from=parse_value(measures.get("from"), types[0]),
                                 gap_to=parse_value(measures.get("to"), types[0]))
    raise ValueError(f"unknown declared check kind {kind!r}")


def verdict_of_row(kind: str, check_spec: str, measures: str) -> Verdict:
    """:func:`verdict_of` over the two JSON texts exactly as the results table holds them."""
    return verdict_of(kind, json.loads(check_spec), json.loads(measures))
