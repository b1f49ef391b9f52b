"""The detail sentences of declared checks and the two shapes of a result (document 000).

Every function here is pure: it takes what the checks' query measured and returns the
verdict and the exact sentence 000 prescribes, so the sentences are written in one place and
tested against the document's own examples.

Pass and fail sentences (``…`` marks measured values)::

    key (station, observed_at) is distinct across all 6132 rows, as expected
    key (station, observed_at) repeats on 4 of 6132 rows, first at ('NYC', '2026-03-01T00:51:00Z'), where 0 repeats were expected
    column 'air_temp_c' is 3099 ppm null (19 of 6132 rows), at or below the declared ceiling of 20000 ppm
    column 'relative_humidity_pct' lies within [0, 100] across 6113 non-null values of 6132 rows
    column 'relative_humidity_pct' holds '104.5', above the declared maximum of 100
    column 'observed_at' never gaps by more than 3600 across 6132 distinct values, the widest between '…' and '…', at or below the declared ceiling of 7200, measured in seconds between timestamps
    column 'observed_at' gaps from '…' to '…' by 18000, above the declared ceiling of 7200, measured in seconds between timestamps
    row count 6132 satisfies the declared bounds [24, 1000000]
    row count 11 is below the declared minimum of 24

Decisions this module implements (docs/decisions/0100 to 0107):

- the ppm of a ``null_ceiling`` is ``ceil(null_rows * 1_000_000 / rows)``, computed in
  integers, so the printed ppm is at or below the ceiling exactly when the check passes;
- values: text, dates and timestamps are quoted (``'NYC'``, ``'2026-03-01T00:51:00Z'``, a
  quote inside doubled), numbers are bare inside a key tuple, NULL is ``NULL``; the offending
  value of ``value_range`` and the endpoints of ``continuity`` are always quoted; declared
  bounds are printed as the exact decimal text the spec wrote;
- counts pluralise (``1 row``, ``2 rows``);
- continuity names its domain: ``measured in seconds between timestamps`` (or ``between
  dates``) over a temporal column, ``measured in the column's own units between numbers`` over
  a numeric one;
- a run-record ``reason`` longer than 1024 characters is cut to 1023 and ends with ``…``.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

from ..privacy import HIDDEN

__all__ = [
    "Verdict",
    "CheckResult",
    "NOT_EVALUATED_PREFIX",
    "SCAN_BUDGET_BYTES",
    "TIME_BUDGET_SECONDS",
    "REASON_MAX_CHARS",
    "render_value",
    "render_key",
    "key_tuple",
    "key_repeats_sentence",
    "value_range_outside_sentence",
    "continuity_gap_sentence",
    "continuity_unmeasurable_detail",
    "null_ppm",
    "key_uniqueness_detail",
    "null_ceiling_detail",
    "value_range_detail",
    "value_range_unorderable_detail",
    "continuity_detail",
    "row_expectation_detail",
    "rate_detail",
    "rate_text",
    "not_evaluated_detail",
    "scan_budget_exceeded_detail",
    "time_budget_exceeded_detail",
    "unreadable_detail",
    "check_failed_detail",
    "status_of",
    "wire_result",
    "run_record",
    "truncate_reason",
]

NOT_EVALUATED_PREFIX = "not_evaluated: "
#: The byte budget of the pass over the stored rows (64 GiB).
SCAN_BUDGET_BYTES = 64 * 1024**3
#: The time budget of the pass over the stored rows.
TIME_BUDGET_SECONDS = 900
#: The longest ``reason`` of a run record.
REASON_MAX_CHARS = 1024

Number = Union[int, Decimal, Fraction, float]


class Verdict(NamedTuple):
    """What one check concluded: whether it held, and the sentence that says what was measured."""

    passed: bool
    detail: str


# --------------------------------------------------------------------------- values


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _timestamp_text(value: _dt.datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += ("." + f"{value.microsecond:06d}").rstrip("0")
    return text + "Z"


def _number_text(value: Number) -> str:
    """A number exactly, never in exponent form (``Decimal('1E+2')`` is ``100``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        value = Decimal(value.numerator) / Decimal(value.denominator)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        value = Decimal(repr(value))
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _plain_text(value: Any) -> str:
    """A value as text, before any quoting."""
    if isinstance(value, _dt.datetime):
        return _timestamp_text(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _dt.time):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal, Fraction)):
        return _number_text(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def render_value(value: Any, *, quote_numbers: bool = True) -> str:
    """A measured value as a detail sentence shows it.

    ``None`` is ``NULL``. Text, dates and timestamps are quoted (``'NYC'``,
    ``'2026-03-01T00:51:00Z'``: a timestamp is shown in UTC with a ``Z``, fractional seconds
    only when present). Numbers are quoted too (``'104.5'``, as 000 shows the offending value of
    a range) unless ``quote_numbers`` is false, which is how a key tuple shows them.
    """
    if value is None:
        return "NULL"
    if value == HIDDEN:
        return HIDDEN  # a pii field's value, never measured (decision 0937): the marker, unquoted
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal, Fraction)) and not quote_numbers:
        return _number_text(value)
    return _quote(_plain_text(value))


def render_key(values: Sequence[Any]) -> str:
    """A key tuple: ``('NYC', '2026-03-01T00:51:00Z')``; numbers bare, one value ``('NYC')``."""
    return key_tuple([render_value(v, quote_numbers=False) for v in values])


def key_tuple(shown: Sequence[str]) -> str:
    """A key tuple of values already shown as a key shows them (``render_value`` with numbers bare)."""
    return "(" + ", ".join(shown) + ")"


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _values(n: int, adjective: str) -> str:
    return f"{n} {adjective} value" if n == 1 else f"{n} {adjective} values"


# --------------------------------------------------------------------------- the five kinds


def key_uniqueness_detail(
    columns: Sequence[str],
    *,
    rows: int,
    repeating_rows: int,
    first_repeat: Optional[Sequence[Any]] = None,
) -> Verdict:
    """``key_uniqueness``: ``repeating_rows`` counts the rows whose key value occurs on more
    than one row (two rows sharing a key are 2); ``first_repeat`` is the first repeating key
    in the key's own order."""
    if repeating_rows == 0:
        key = "(" + ", ".join(columns) + ")"
        return Verdict(True, f"key {key} is distinct across all {_rows(rows)}, as expected")
    first = render_key(first_repeat) if first_repeat is not None else None
    return Verdict(False, key_repeats_sentence(columns, repeating_rows, rows, first))


def key_repeats_sentence(columns: Sequence[str], repeating_rows: Union[int, str], rows: Union[int, str],
                         first: Optional[str]) -> str:
    """The failure sentence of ``key_uniqueness``: ``first`` the first repeating key as
    ``key_tuple`` shows it. The counts may be texts standing for counts (a frame's slots,
    checks/frames.py): a repeat is two rows or more, so ``rows`` reads as a plural."""
    key = "(" + ", ".join(columns) + ")"
    at = f", first at {first}" if first is not None else ""
    return f"key {key} repeats on {repeating_rows} of {_rows(rows)}{at}, where 0 repeats were expected"


def null_ppm(null_rows: int, rows: int) -> int:
    """The null share in parts per million, rounded up: ``ceil(null_rows * 10**6 / rows)``.

    Computed in integers (never a float). Rounding up means a single null is never shown as
    0 ppm, and ``null_ppm(n, r) <= ceiling`` exactly when ``n * 10**6 <= ceiling * r``, so the
    printed number always agrees with the verdict. ``0`` for an empty table.
    """
    if rows <= 0:
        return 0
    return -((-null_rows * 1_000_000) // rows)


def _null_ceiling_sentence(column: str, ppm: int, null_rows: int, rows: int,
                           max_null_ppm: int, within: bool) -> str:
    where = "at or below" if within else "above"
    return (
        f"column {_quote(column)} is {ppm} ppm null ({null_rows} of {_rows(rows)}), "
        f"{where} the declared ceiling of {max_null_ppm} ppm"
    )


def null_ceiling_detail(column: str, *, null_rows: int, rows: int, max_null_ppm: int) -> Verdict:
    """``null_ceiling``: passes when ``null_rows / rows <= max_null_ppm / 10**6`` exactly."""
    within = null_rows * 1_000_000 <= max_null_ppm * max(rows, 0) or rows <= 0
    ppm = null_ppm(null_rows, rows)
    return Verdict(within, _null_ceiling_sentence(column, ppm, null_rows, rows, max_null_ppm,
                                                  within))


def _as_decimal(value: Any) -> Optional[Decimal]:
    if isinstance(value, bool):
        return None
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if value == value else None
    if isinstance(value, str):
        try:
            return Decimal(value)
        except ArithmeticError:
            return None
    return None


def value_range_detail(
    column: str,
    min_value: str,
    max_value: str,
    *,
    rows: int,
    non_null_values: int,
    offending: Any = None,
    side: Optional[str] = None,
) -> Verdict:
    """``value_range`` over ``[min_value, max_value]`` (the spec's exact decimal text).

    With no ``offending`` value the check passed. Otherwise ``side`` is ``"above"`` or
    ``"below"``; when it is omitted it is derived by comparing the value with the bounds
    exactly (as decimals).
    """
    if offending is None:
        return Verdict(
            True,
            f"column {_quote(column)} lies within [{min_value}, {max_value}] across "
            f"{_values(non_null_values, 'non-null')} of {_rows(rows)}",
        )
    if side is None:
        d = _as_decimal(offending)
        side = "below" if d is not None and d < Decimal(min_value) else "above"
    return Verdict(False, value_range_outside_sentence(column, render_value(offending), side, min_value, max_value))


def value_range_outside_sentence(column: str, shown: str, side: str, min_value: str, max_value: str) -> str:
    """The failure sentence of ``value_range``: ``shown`` the offending value as ``render_value``
    shows it, ``side`` ``"above"`` or ``"below"``."""
    if side == "above":
        return f"column {_quote(column)} holds {shown}, above the declared maximum of {max_value}"
    if side == "below":
        return f"column {_quote(column)} holds {shown}, below the declared minimum of {min_value}"
    raise ValueError(f"side must be 'above' or 'below', not {side!r}")


def value_range_unorderable_detail(column: str, min_value: str, max_value: str) -> Verdict:
    """``value_range`` over a column whose type cannot be ordered against decimal bounds."""
    return Verdict(
        False,
        f"column {_quote(column)} holds values whose type is not orderable against the "
        f"declared range [{min_value}, {max_value}]",
    )


_DOMAINS = {
    "timestamp": "measured in seconds between timestamps",
    "date": "measured in seconds between dates",
    "numeric": "measured in the column's own units between numbers",
}


def continuity_detail(
    column: str,
    max_gap_seconds: int,
    *,
    domain: str,
    distinct_values: int,
    widest_gap: Optional[Number] = None,
    gap_from: Any = None,
    gap_to: Any = None,
) -> Verdict:
    """``continuity``: ``widest_gap`` is the widest distance between two consecutive distinct
    values, from ``gap_from`` to ``gap_to``; ``domain`` is ``"timestamp"``, ``"date"`` (gaps
    in seconds) or ``"numeric"`` (gaps in the column's own units).

    A column with no non-null value, or with one distinct value, passes and says so.
    """
    if domain not in _DOMAINS:
        raise ValueError(f"domain must be one of {sorted(_DOMAINS)}, not {domain!r}")
    measured = _DOMAINS[domain]
    col = _quote(column)
    if distinct_values == 0 or widest_gap is None:
        if distinct_values <= 1:
            what = ("holds no non-null value" if distinct_values == 0
                    else f"holds one distinct value, {render_value(gap_from)}"
                    if gap_from is not None else "holds one distinct value")
            return Verdict(
                True,
                f"column {col} {what}, so no consecutive pair exists for a gap to sit between; "
                f"the declared ceiling of {max_gap_seconds} holds, {measured}",
            )
        raise ValueError("widest_gap is required when there are two or more distinct values")
    gap = _number_text(widest_gap)
    if _as_fraction(widest_gap) <= max_gap_seconds:
        return Verdict(
            True,
            f"column {col} never gaps by more than {gap} across "
            f"{_values(distinct_values, 'distinct')}, the widest between "
            f"{render_value(gap_from)} and {render_value(gap_to)}, at or below the declared "
            f"ceiling of {max_gap_seconds}, {measured}",
        )
    return Verdict(False, continuity_gap_sentence(column, render_value(gap_from), render_value(gap_to), gap,
                                                  max_gap_seconds, domain))


def continuity_gap_sentence(column: str, gap_from: str, gap_to: str, gap: str, max_gap_seconds: int,
                            domain: str) -> str:
    """The failure sentence of ``continuity``: the endpoints as ``render_value`` shows them, the
    gap as an exact number's text."""
    return (f"column {_quote(column)} gaps from {gap_from} to {gap_to} by {gap}, "
            f"above the declared ceiling of {max_gap_seconds}, {_DOMAINS[domain]}")


def continuity_hidden_detail(column: str, max_gap_seconds: int, *, domain: str, distinct_values: int,
                             over: bool) -> Verdict:
    """``continuity`` over a pii column: whether a gap exceeds the ceiling, with neither the gap
    (a difference of two values) nor its ends shown (decision 0937)."""
    if over:
        return Verdict(False, continuity_gap_sentence(column, HIDDEN, HIDDEN, HIDDEN, max_gap_seconds, domain))
    return Verdict(True, f"column {_quote(column)} never gaps by more than the declared ceiling of {max_gap_seconds} "
                         f"across {_values(distinct_values, 'distinct')} (pii: the gaps are not shown), "
                         f"{_DOMAINS[domain]}")


def continuity_unmeasurable_detail(column: str, max_gap_seconds: int) -> Verdict:
    """A continuity check over a column with no distance between values (text, booleans)."""
    return Verdict(
        False,
        f"column '{column}' holds values with no distance between them, so no gap can be "
        f"measured against the declared ceiling of {max_gap_seconds}; continuity reads "
        "timestamps, dates and numbers",
    )


def _as_fraction(value: Number) -> Fraction:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(Decimal(repr(value)))
    return Fraction(value)


def row_expectation_detail(
    row_count: int, *, min_rows: Optional[int] = None, max_rows: Optional[int] = None
) -> Verdict:
    """``row_expectation``: the stored row count against one or both bounds."""
    if min_rows is None and max_rows is None:
        raise ValueError("a row_expectation states at least one of min_rows, max_rows")
    if min_rows is not None and row_count < min_rows:
        return Verdict(False, f"row count {row_count} is below the declared minimum of {min_rows}")
    if max_rows is not None and row_count > max_rows:
        return Verdict(False, f"row count {row_count} is above the declared maximum of {max_rows}")
    if min_rows is not None and max_rows is not None:
        return Verdict(True, f"row count {row_count} satisfies the declared bounds "
                             f"[{min_rows}, {max_rows}]")
    if min_rows is not None:
        return Verdict(True, f"row count {row_count} satisfies the declared minimum of {min_rows}")
    return Verdict(True, f"row count {row_count} satisfies the declared maximum of {max_rows}")


# --------------------------------------------------------------------------- rate thresholds

_RATE_SUBJECTS = {"quarantine_rate": ("quarantined", "the quarantine rate"),
                  "flag_rate": ("flagged", "the flag rate")}


def rate_text(failing: int, evaluated: int, max_rate: str) -> str:
    """``failing / evaluated`` as a decimal, rounded UP to the larger of four places and the
    limit's own, trailing zeros dropped (decision 0980): like 0100's ppm, the printed rate is at or
    below the limit exactly when the rate is."""
    places = max(4, len(max_rate.partition(".")[2]))
    scaled = -((-failing * 10**places) // evaluated)
    return _number_text(Decimal(scaled).scaleb(-places))


def rate_detail(kind: str, *, failing: int, evaluated: int, max_rate: str, min_rows: int = 0,
                rule: Optional[str] = None) -> Verdict:
    """A rate threshold (``quarantine_rate``, ``flag_rate``, ``rule_rate``): ``failing`` of
    ``evaluated`` rows against ``max_rate`` (the spec's exact decimal text).

    Exactly at the limit passes (``failing * 10**s <= digits * evaluated``, integers only).
    With no evaluated row, or fewer than ``min_rows``, the rate is not judged and the check
    passes, saying so."""
    if kind == "rule_rate":
        verb, noun = f"rule {_quote(rule or '')} fired on", f"the rate of rule {_quote(rule or '')}"
    else:
        verb, noun = _RATE_SUBJECTS[kind]
    limit = f"the declared maximum of {max_rate}"
    if evaluated <= 0:
        return Verdict(True, f"no rows were evaluated, so {noun} is not judged against {limit}")
    counts = f"{verb} {failing} of {evaluated} evaluated {'row' if evaluated == 1 else 'rows'}"
    if evaluated < min_rows:
        return Verdict(True, f"{counts}, fewer than the declared min_rows of {min_rows}, so the rate is not "
                             f"judged against {limit}")
    digits, _, frac = max_rate.partition(".")
    within = failing * 10 ** len(frac) <= int(digits + frac) * evaluated
    where = "at or below" if within else "above"
    return Verdict(within, f"{counts}, a rate of {rate_text(failing, evaluated, max_rate)}, {where} {limit}")


# --------------------------------------------------------------------------- not evaluated


def not_evaluated_detail(code: str, reason: str) -> Verdict:
    """A check the pass did not evaluate: ``passed`` is false and the detail carries the
    literal prefix ``not_evaluated: `` (how the third state survives a boolean wire)."""
    return Verdict(False, f"{NOT_EVALUATED_PREFIX}{code}: {reason}")


def scan_budget_exceeded_detail(estimated_bytes: int,
                                ceiling_bytes: int = SCAN_BUDGET_BYTES) -> Verdict:
    """``not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: estimated scan of N bytes exceeds the
    M-byte ceiling``."""
    return not_evaluated_detail(
        "CHECK_SCAN_BUDGET_EXCEEDED",
        f"estimated scan of {estimated_bytes} bytes exceeds the {ceiling_bytes}-byte ceiling",
    )


def time_budget_exceeded_detail(budget_seconds: int = TIME_BUDGET_SECONDS) -> Verdict:
    """``not_evaluated: CHECK_TIME_BUDGET_EXCEEDED: the pass over the stored rows ran past the
    900-second ceiling``."""
    return not_evaluated_detail(
        "CHECK_TIME_BUDGET_EXCEEDED",
        f"the pass over the stored rows ran past the {budget_seconds}-second ceiling",
    )


def unreadable_detail(message: str) -> Verdict:
    """A declared check whose measuring query could not read the candidate (000's
    ``DECLARED_CHECK_UNREADABLE``), with the engine's own message (decision 0531)."""
    return Verdict(False, f"DECLARED_CHECK_UNREADABLE: {message}")


# --------------------------------------------------------------------------- results


def check_failed_detail(check_id: str, detail: Optional[str]) -> str:
    """The ``failure_detail`` of a run ended by a required check: ``CHECK_ID: <detail>``."""
    return f"{check_id}: {detail if detail is not None else ''}".rstrip()


def status_of(passed: bool, detail: Optional[str], worker_status: Optional[str] = None) -> str:
    """The run record's ``status``: the worker's own status where it states one, otherwise
    ``not_evaluated`` for a detail opening ``not_evaluated: ``, else ``passed``/``failed``."""
    if worker_status:
        return worker_status
    if detail is not None and detail.startswith(NOT_EVALUATED_PREFIX):
        return "not_evaluated"
    return "passed" if passed else "failed"


def truncate_reason(detail: Optional[str]) -> Optional[str]:
    """A detail fitted to the run record's 1024-character ``reason``: a longer one keeps its
    first 1023 characters and ends with ``…``."""
    if detail is None or len(detail) <= REASON_MAX_CHARS:
        return detail
    return detail[: REASON_MAX_CHARS - 1] + "…"


@dataclass(frozen=True)
class CheckResult:
    """One result of one check, in the worker's terms (``check_id``, ``passed``, ``detail``)."""

    check_id: str
    passed: bool
    detail: Optional[str]
    scope: Optional[str] = None
    worker_status: Optional[str] = None

    @classmethod
    def of(cls, check_id: str, verdict: Verdict, scope: Optional[str] = None) -> "CheckResult":
        return cls(check_id, verdict.passed, verdict.detail, scope)

    @property
    def status(self) -> str:
        return status_of(self.passed, self.detail, self.worker_status)

    def wire(self) -> dict:
        return wire_result(self.check_id, self.passed, self.detail, scope=self.scope)

    def run_record(self) -> dict:
        return run_record(self.wire(), worker_status=self.worker_status)

    def failure_detail(self) -> str:
        return check_failed_detail(self.check_id, self.detail)


def wire_result(check_id: str, passed: bool, detail: Optional[str],
                *, scope: Optional[str] = None) -> dict:
    """The worker's wire shape, as ``assay checks RUN_ID --json`` prints it:
    ``{"check_id", "passed", "detail"}``, plus ``scope`` only when one is recorded."""
    out: dict[str, Any] = {"check_id": check_id, "passed": bool(passed), "detail": detail}
    if scope is not None:
        out["scope"] = scope
    return out


def run_record(wire: Mapping[str, Any], *, worker_status: Optional[str] = None) -> dict:
    """The run record's ``check_outcome`` for one wire result: ``{"name", "status",
    "reason"}``; it has no ``passed``, and ``reason`` is left out when there is no detail."""
    detail = wire.get("detail")
    out: dict[str, Any] = {
        "name": wire["check_id"],
        "status": status_of(bool(wire.get("passed")), detail, worker_status),
    }
    reason = truncate_reason(detail)
    if reason is not None:
        out["reason"] = reason
    return out
