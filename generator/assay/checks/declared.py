"""Declared table checks: the five kinds of document 000 and their registration refusals.

A table (an entity of a ``spec_version: 1`` document, or a table of a ``tables_version: 1``
document) may state ``checks:``, a list of at most 128 mappings::

    checks:
      - check_id: grain_unique          # [a-z][a-z0-9_]{0,62}, reported upper-cased
        kind: key_uniqueness            # one of KINDS
        enforcement: required           # required | advisory, no default
        columns: [station, observed_at] # how many depends on the kind
        description: One row per station and observation time.

:func:`validate_declared_checks` applies every rule of 000 and returns the checks it could
resolve together with every problem it found (never only the first). Each problem carries the
code of 000 (``DECLARED_CHECKS_INVALID``, ``DECLARED_CHECK_INVALID``,
``DECLARED_CHECK_DUPLICATE``, ``DECLARED_CHECK_COLUMN_UNKNOWN``), a message written in 000's
sentences without the code prefix, and the source line.

Which bounds a kind reads:

=================  ==========================  ===================================
kind               columns                     bounds (all others are refused)
=================  ==========================  ===================================
key_uniqueness     1 to 16, or none -> grain   none
null_ceiling       exactly one                 max_null_ppm (required)
value_range        exactly one                 min_value and max_value (required)
continuity         exactly one                 max_gap_seconds (required)
row_expectation    none                        min_rows and/or max_rows (one at least)
=================  ==========================  ===================================

A bound written with a null value (``max_rows:`` with nothing after it) counts as not stated.
``description`` is accepted on every kind; its text never appears in a refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from assay.checks import Problem
from assay.identifiers import IDENTIFIER_RULE, is_identifier

from .declared_bounds import (CHECK_INVALID, DECIMAL_BOUND_RE, MAX_GAP_SECONDS, MAX_NULL_PPM, MAX_ROWS, check_bounds,
                              is_decimal_bound)
from .quoted import count, is_int, shown, type_phrase

__all__ = [
    "DeclaredCheck",
    "validate_declared_checks",
    "KINDS",
    "BOUNDS",
    "ACCEPTED_KEYS",
    "READS",
    "MAX_CHECKS",
    "MAX_KEY_COLUMNS",
    "MAX_ROWS",
    "MAX_NULL_PPM",
    "MAX_GAP_SECONDS",
    "CHECK_ID_RE",
    "DECIMAL_BOUND_RE",
    "is_decimal_bound",
    "CHECKS_INVALID",
    "CHECK_INVALID",
    "CHECK_DUPLICATE",
    "CHECK_COLUMN_UNKNOWN",
]

CHECKS_INVALID = "DECLARED_CHECKS_INVALID"
CHECK_DUPLICATE = "DECLARED_CHECK_DUPLICATE"
CHECK_COLUMN_UNKNOWN = "DECLARED_CHECK_COLUMN_UNKNOWN"

KINDS = ("key_uniqueness", "null_ceiling", "value_range", "continuity", "row_expectation")
BOUNDS = ("max_null_ppm", "min_value", "max_value", "max_gap_seconds", "min_rows", "max_rows")
ACCEPTED_KEYS = ("check_id", "kind", "enforcement", "columns", "description") + BOUNDS
#: The bounds each kind reads; stating any other bound is refused.
READS: dict[str, tuple[str, ...]] = {
    "key_uniqueness": (),
    "null_ceiling": ("max_null_ppm",),
    "value_range": ("min_value", "max_value"),
    "continuity": ("max_gap_seconds",),
    "row_expectation": ("min_rows", "max_rows"),
}
ENFORCEMENTS = ("required", "advisory")

MAX_CHECKS = 128
MAX_KEY_COLUMNS = 16

CHECK_ID_RE = re.compile(r"[a-z][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class DeclaredCheck:
    """One resolved declared check.

    ``check_id`` is the reported (upper-cased) id. ``columns`` is the tuple the check reads,
    with the grain fallback of ``key_uniqueness`` already applied (empty for
    ``row_expectation``). ``min_value``/``max_value`` keep the exact decimal text the spec
    wrote. ``blocking`` is ``enforcement == "required"``. ``line`` is where the check starts.
    """

    check_id: str
    kind: str
    enforcement: str
    columns: tuple[str, ...] = ()
    max_null_ppm: Optional[int] = None
    min_value: Optional[str] = None
    max_value: Optional[str] = None
    max_gap_seconds: Optional[int] = None
    min_rows: Optional[int] = None
    max_rows: Optional[int] = None
    description: Optional[str] = None
    blocking: bool = False
    line: int = field(default=0, compare=False)
    #: A rate threshold lowered into a check (assay.checks.rates): the limit's exact decimal text,
    #: and the rule whose firing rows a ``rule_rate`` counts.
    max_rate: Optional[str] = None
    rule: Optional[str] = None
    #: A change limit (assay.checks.increases): the factor's exact decimal text and the floor.
    factor: Optional[str] = None
    floor: Optional[int] = None
    #: An anomaly check (assay.checks.anomaly): the metric judged and the earlier runs it needs.
    metric: Optional[str] = None
    min_history: Optional[int] = None


# --------------------------------------------------------------------------- helpers


def _suggest_id(raw: str) -> Optional[str]:
    folded = re.sub(r"[^a-z0-9_]", "_", raw.strip().lower())
    return folded if CHECK_ID_RE.fullmatch(folded) else None


class _Collector:
    """Problems plus a tolerant ``line_of`` (a path the caller cannot place falls back to its
    nearest ancestor, and finally to line 0)."""

    def __init__(self, line_of: Callable[[tuple], int]):
        self._line_of = line_of
        self.problems: list[Problem] = []

    def line(self, path: tuple) -> int:
        for end in range(len(path), -1, -1):
            try:
                value = self._line_of(tuple(path[:end]))
            except Exception:  # noqa: BLE001 - a caller's lookup must never break validation
                continue
            if is_int(value) and value > 0:
                return value
        return 0

    def add(self, code: str, message: str, path: tuple) -> None:
        self.problems.append(Problem(code, message, self.line(path)))


# --------------------------------------------------------------------------- the entry point


def validate_declared_checks(
    raw: Any,
    *,
    owner: str,
    line_of: Callable[[tuple], int],
    columns: Optional[set[str]],
    grain: Optional[Sequence[str]],
) -> tuple[list[DeclaredCheck], list[Problem]]:
    """Validate the YAML value of ``checks:`` and resolve it.

    ``owner`` names the table in messages (e.g. ``entity station_temperatures``).
    ``line_of(path)`` returns the source line of a path under ``checks:``: ``()`` is the list
    itself, ``(3,)`` its fourth item, ``(3, "max_rows")`` a key of it, ``(3, "columns", 1)`` a
    column. ``columns`` is the set of columns the table declares (``None``: unknown, so no
    column is refused as unknown). ``grain`` is the table's grain, the fallback of a
    ``key_uniqueness`` check that names no columns.

    Returns the checks that have no problem of their own (the first of two checks sharing an
    id is kept) and every problem found, in the order of the list.
    """
    out = _Collector(line_of)
    if not isinstance(raw, list):
        phrase = type_phrase(raw)
        out.add(
            CHECKS_INVALID,
            f"the checks of {owner} are {phrase}, not a list; write checks: as a list of "
            "mappings, one per check (checks: [] for none)",
            (),
        )
        return [], out.problems
    if len(raw) > MAX_CHECKS:
        out.add(
            CHECKS_INVALID,
            f"{owner} declares {len(raw)} checks, more than the {MAX_CHECKS} a table may "
            "declare; keep at most 128, or move the rest to SQL check files",
            (),
        )

    resolved: list[DeclaredCheck] = []
    first_index_of: dict[str, int] = {}
    for index, item in enumerate(raw):
        before = len(out.problems)
        check = _validate_one(index, item, out, owner=owner, columns=columns, grain=grain)
        if check is None:
            continue
        if check.check_id in first_index_of:
            first = first_index_of[check.check_id]
            out.add(
                CHECK_DUPLICATE,
                f"two checks of {owner} claim the id {check.check_id} (checks #{first + 1} and "
                f"#{index + 1}); give each check its own check_id",
                (index, "check_id"),
            )
            continue
        first_index_of[check.check_id] = index
        if len(out.problems) == before:
            resolved.append(check)
    return resolved, out.problems


def _validate_one(
    index: int,
    item: Any,
    out: _Collector,
    *,
    owner: str,
    columns: Optional[set[str]],
    grain: Optional[Sequence[str]],
) -> Optional[DeclaredCheck]:
    """Validate one item; return the check (also when it has problems, so duplicates are still
    found), or ``None`` when it has no usable id."""
    here = (index,)
    if not isinstance(item, Mapping):
        out.add(
            CHECK_INVALID,
            f"check #{index + 1} of {owner} is {type_phrase(item)}, not a mapping; write each "
            "check as a mapping with check_id, kind, enforcement and the keys its kind reads",
            here,
        )
        return None
    problems_before = len(out.problems)

    # -- the id ---------------------------------------------------------------
    raw_id = item.get("check_id")
    check_id: Optional[str] = None
    if raw_id is None:
        out.add(
            CHECK_INVALID,
            f"check #{index + 1} of {owner} states no check_id; write a lower-case identifier "
            "such as grain_unique",
            here,
        )
    elif not isinstance(raw_id, str) or not CHECK_ID_RE.fullmatch(raw_id):
        hint = _suggest_id(raw_id) if isinstance(raw_id, str) else None
        instead = f"write {hint}" if hint else "write a name such as grain_unique"
        out.add(
            CHECK_INVALID,
            f"check #{index + 1} of {owner} states check_id {shown(raw_id)}, which is not a "
            f"lower-case identifier [a-z][a-z0-9_]{{0,62}}; {instead}",
            (index, "check_id"),
        )
    else:
        check_id = raw_id.upper()
    label = f"check {check_id}" if check_id else f"check #{index + 1} of {owner}"

    # -- unknown keys ---------------------------------------------------------
    for key in item:
        if key not in ACCEPTED_KEYS:
            out.add(
                CHECK_INVALID,
                f"{label} states {key}, which is not a key of a declared check; the accepted "
                f"keys are {', '.join(ACCEPTED_KEYS)}",
                (index, key),
            )

    # -- enforcement ----------------------------------------------------------
    enforcement = item.get("enforcement")
    if enforcement is None:
        out.add(
            CHECK_INVALID,
            f"{label} states no enforcement; write enforcement: required or enforcement: "
            "advisory, as there is no default",
            here,
        )
    elif enforcement not in ENFORCEMENTS:
        out.add(
            CHECK_INVALID,
            f"{label} states enforcement {shown(enforcement)}; write required (a failure fails "
            "the run) or advisory (a failure is reported and the run continues)",
            (index, "enforcement"),
        )
        enforcement = None

    # -- description ----------------------------------------------------------
    description = item.get("description")
    if description is not None and not isinstance(description, str):
        out.add(
            CHECK_INVALID,
            f"{label} states a description that is not text; write the description as a string",
            (index, "description"),
        )
        description = None

    # -- kind -----------------------------------------------------------------
    kind = item.get("kind")
    if kind is None:
        out.add(
            CHECK_INVALID,
            f"{label} states no kind; write one of {', '.join(KINDS)}",
            here,
        )
    elif kind not in KINDS:
        out.add(
            CHECK_INVALID,
            f"{label} states kind {shown(kind)}, which is not a kind of declared check; the "
            f"kinds are {', '.join(KINDS)}",
            (index, "kind"),
        )
        kind = None

    # -- columns (shape) --------------------------------------------------------
    named: Optional[list[str]] = []
    raw_columns = item.get("columns")
    if raw_columns is not None:
        if not isinstance(raw_columns, list):
            out.add(
                CHECK_INVALID,
                f"{label} states columns as {type_phrase(raw_columns)}; write a list of column "
                "names, e.g. columns: [station]",
                (index, "columns"),
            )
            named = None
        else:
            named = []
            seen: set[str] = set()
            for j, col in enumerate(raw_columns):
                if not is_identifier(col):
                    # The name reaches generated SQL (and a PostgreSQL DO block): one rule for names.
                    out.add(
                        CHECK_INVALID,
                        f"{label} names {shown(col)} as column {j + 1}, which is not a column "
                        f"name; write the column's name, of {IDENTIFIER_RULE}",
                        (index, "columns", j),
                    )
                    named = None
                    break
                if col in seen:
                    out.add(
                        CHECK_INVALID,
                        f"{label} names column {col} twice; name each column once",
                        (index, "columns", j),
                    )
                    continue
                seen.add(col)
                named.append(col)

    # -- bounds the kind does not read ------------------------------------------
    stated = {b for b in BOUNDS if item.get(b) is not None}
    if kind is not None:
        for bound in BOUNDS:
            if bound in stated and bound not in READS[kind]:
                out.add(
                    CHECK_INVALID,
                    f"{label} is a {kind} check and states {bound}, which a check of that kind "
                    "does not read; a bound that is never evaluated would be reported as "
                    "satisfied, so state it on a check whose kind reads it",
                    (index, bound),
                )

    # -- per-kind rules ---------------------------------------------------------
    resolved_columns: tuple[str, ...] = ()
    values: dict[str, Any] = {}
    if kind is not None:
        resolved_columns = _check_columns(kind, label, named, index, out, owner=owner,
                                          grain=grain)
        values = check_bounds(kind, label, item, named, index, out)
        if columns is not None and kind != "row_expectation" and named:
            for j, col in enumerate(named):
                if col not in columns:
                    out.add(
                        CHECK_COLUMN_UNKNOWN,
                        f"{label} names column {col}, which {owner} does not declare",
                        (index, "columns", _position(raw_columns, col, j)),
                    )

    if check_id is None:
        return None
    if len(out.problems) > problems_before or kind is None or enforcement is None:
        # Keep the id so a duplicate is still reported, but mark the check unusable by
        # returning it only for the duplicate test (the caller drops it: problems grew).
        return DeclaredCheck(check_id=check_id, kind=kind or "", enforcement=enforcement or "",
                             line=out.line(here))
    return DeclaredCheck(
        check_id=check_id,
        kind=kind,
        enforcement=enforcement,
        columns=resolved_columns,
        max_null_ppm=values.get("max_null_ppm"),
        min_value=values.get("min_value"),
        max_value=values.get("max_value"),
        max_gap_seconds=values.get("max_gap_seconds"),
        min_rows=values.get("min_rows"),
        max_rows=values.get("max_rows"),
        description=description,
        blocking=enforcement == "required",
        line=out.line(here),
    )


def _position(raw_columns: Any, col: str, default: int) -> int:
    if isinstance(raw_columns, list):
        for j, c in enumerate(raw_columns):
            if c == col:
                return j
    return default


def _check_columns(
    kind: str,
    label: str,
    named: Optional[list[str]],
    index: int,
    out: _Collector,
    *,
    owner: str,
    grain: Optional[Sequence[str]],
) -> tuple[str, ...]:
    if named is None:  # already refused for its shape
        return ()
    path = (index, "columns")
    n = len(named)
    if kind == "key_uniqueness":
        if n > MAX_KEY_COLUMNS:
            out.add(
                CHECK_INVALID,
                f"{label} names {n} columns; a key_uniqueness check names 1 to "
                f"{MAX_KEY_COLUMNS}, or none to fall back to the grain",
                path,
            )
            return ()
        if n:
            return tuple(named)
        grain_cols = [g for g in (grain or []) if isinstance(g, str) and g]
        if not grain_cols:
            out.add(
                CHECK_INVALID,
                f"{label} names no columns and {owner} has no grain to fall back to; name the "
                "key's columns, e.g. columns: [station, observed_at]",
                (index,),
            )
            return ()
        if len(grain_cols) > MAX_KEY_COLUMNS:
            out.add(
                CHECK_INVALID,
                f"{label} names no columns and falls back to the grain of {owner}, which names "
                f"{len(grain_cols)} columns; a key_uniqueness check reads at most "
                f"{MAX_KEY_COLUMNS}, so name its columns",
                (index,),
            )
            return ()
        return tuple(grain_cols)
    if kind == "row_expectation":
        if n:
            which = (f"column {named[0]}" if n == 1
                     else "columns " + ", ".join(named))
            out.add(
                CHECK_INVALID,
                f"{label} is a row_expectation check and names {which}; it counts the table's "
                "rows and reads no column, so remove columns",
                path,
            )
        return ()
    # null_ceiling, value_range, continuity: exactly one.
    if n != 1:
        names = "none" if n == 0 else str(n)
        out.add(
            CHECK_INVALID,
            f"{label} reads exactly one column and names {names}",
            path if n else (index,),
        )
        return ()
    return (named[0],)
