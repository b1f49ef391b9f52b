"""Rate thresholds (issue 20, item 1): a share of an entity's evaluated rows, judged per run.

Two places of the spec state a limit (docs/thresholds.md, decision 0980)::

    entities:
      order:
        thresholds:                      # the entity's own rates
          max_quarantine_rate: "0.05"    # quarantined (or failed) rows / evaluated rows
          max_flag_rate: 0.2             # kept rows with a flag / evaluated rows
          min_rows: 100                  # fewer evaluated rows: not judged (default 0)
          on_breach: fail                # fail | warn, no default
        quality:
          - {rule: expression, name: discount_ok, expr: "...", on_fail: flag,
             max_rate: "0.01", on_breach: warn, min_rows: 50}   # the rows this rule fires on

and a field or referential rule takes the same three keys. Each limit is lowered into a declared
check of its own kind (:data:`RATE_KINDS`) with a derived id (``QUARANTINE_RATE``, ``FLAG_RATE``,
``<RULE>_RATE``): ``fail`` is ``required`` (the entity is set back), ``warn`` is ``advisory``, so
recording, ``assay checks``, set-back and SQLMesh's audits are the declared checks' own.

A rate is an exact decimal in [0, 1]; it is compared in integers (``failing * 10**s <= digits *
evaluated``), never through a float, and exactly at the limit passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping, Optional

from . import Problem
from .declared import DeclaredCheck
from .quoted import decimal_text, shown
from .increases import INCREASE_KINDS, validate_increase
from .anomaly import ANOMALY_KIND, anomaly_check_id, validate_anomaly
from .limit_mapping import THRESHOLD_INVALID

__all__ = [
    "RATE_KINDS",
    "ON_BREACH",
    "ENTITY_KEYS",
    "RULE_KEYS",
    "THRESHOLD_INVALID",
    "RateLimit",
    "parse_rate",
    "validate_entity_thresholds",
    "validate_rule_threshold",
    "validate_rule_limits",
    "LIMIT_KINDS",
    "rate_check_id",
    "lower_rate_limits",
]

RATE_KINDS = ("quarantine_rate", "flag_rate", "rule_rate")
ON_BREACH = ("fail", "warn")
#: The keys of an entity's ``thresholds:`` and the rate kind each maximum lowers into.
ENTITY_RATES = {"max_quarantine_rate": "quarantine_rate", "max_flag_rate": "flag_rate"}
#: The change limits of an entity's ``thresholds:`` (assay.checks.increases) and their kinds.
ENTITY_CHANGES = {"max_increase": "quarantine_increase", "max_volume_change": "volume_change"}
ENTITY_KEYS = (*ENTITY_RATES, "min_rows", "on_breach", *ENTITY_CHANGES, "anomaly")
RULE_KEYS = ("max_rate", "min_rows", "on_breach", "max_increase", "anomaly")
#: Every kind a threshold lowers into, in the order their checks are placed.
LIMIT_KINDS = (*RATE_KINDS, *INCREASE_KINDS, ANOMALY_KIND)
#: The order of an entity's anomaly checks: its metrics, then rules by name.
_ANOMALY_ORDER = ("volume", "quarantine_rate", "failure_rate")
#: The most evaluated rows a min_rows may ask for: the largest BIGINT, so every engine holds it.
MAX_MIN_ROWS = 2**63 - 1
#: A rate as text: 0 or 1, with at most 18 decimal places (no sign, no exponent).
RATE_RE = re.compile(r"(?:0|1)(?:\.[0-9]{1,18})?")


@dataclass(frozen=True)
class RateLimit:
    """One validated limit. ``rule`` is None for the entity's own rates; for a rule's limit it
    is filled in at resolution, which knows the rule's generated name."""

    kind: str
    max_rate: str
    min_rows: int
    on_breach: str
    line: int
    rule: Optional[str] = None
    file: str = ""  # the document a rule's limit is written in (a mapping's, for a field rule)
    #: A change limit (assay.checks.increases): the factor's exact decimal text and the floor.
    factor: Optional[str] = None
    floor: Optional[int] = None
    #: An anomaly check (assay.checks.anomaly): the metric judged and the history it needs.
    metric: Optional[str] = None
    min_history: Optional[int] = None


def parse_rate(value: Any) -> Optional[str]:
    """The exact decimal text of a rate written as a string or a number in [0, 1], or None
    when it is not one. A YAML float is read by its shortest spelling (``0.05`` is ``0.05``),
    never by its binary value."""
    text = decimal_text(value)
    if text is None:
        return None
    if not RATE_RE.fullmatch(text):
        return None
    if Decimal(text) > 1:
        return None
    return text


def _rate_problem(label: str, key: str, value: Any) -> str:
    return (f"{label} states {key} {shown(value)}, which is not a rate between 0 and 1; write the largest "
            f"share of evaluated rows allowed as a decimal, e.g. {key}: \"0.05\" for five per cent "
            "(at most 18 decimal places)")


def _min_rows_problem(label: str, value: Any) -> str:
    return (f"{label} states min_rows {shown(value)}; min_rows is a whole number of evaluated rows (0 or more) "
            "below which the rate is not judged, e.g. min_rows: 100")


def _on_breach_problem(label: str, value: Any) -> str:
    if value is None:
        return (f"{label} states no on_breach; write on_breach: fail (a breach sets the entity back: it is not "
                "published and the previous version stays) or on_breach: warn (recorded, published), as there "
                "is no default")
    return (f"{label} states on_breach {shown(value)}; write fail (a breach sets the entity back) or warn "
            "(a breach is recorded and the entity is published)")


def _min_rows(value: Any) -> Optional[int]:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MIN_ROWS:
        return value
    return None


def validate_entity_thresholds(raw: Any, *, owner: str, line_of: Callable[[tuple], int]
                               ) -> tuple[list[RateLimit], list[Problem]]:
    """Validate an entity's ``thresholds:`` mapping; return its limits and every problem.

    ``line_of(path)`` gives the line of ``()`` (the mapping) or ``(key,)``."""
    problems: list[Problem] = []
    label = f"the thresholds mapping of {owner}"

    def add(message: str, path: tuple = ()) -> None:
        problems.append(Problem(THRESHOLD_INVALID, message, line_of(path)))

    if not isinstance(raw, Mapping):
        add(f"thresholds: of {owner} is {'empty' if raw is None else 'not a mapping'}; write it as a mapping, e.g. "
            "thresholds: {max_quarantine_rate: \"0.05\", on_breach: fail}")
        return [], problems
    for key in raw:
        if key not in ENTITY_KEYS:
            hint = " (a rule's own limit is max_rate, written on the rule)" if key == "max_rate" else ""
            add(f"{label} states {key}, which is not a key of thresholds{hint}; the accepted keys are "
                f"{', '.join(ENTITY_KEYS)}", (key,))
    changes: dict = {}
    for key in ENTITY_CHANGES:
        if key in raw:
            found, more = validate_increase(raw[key], key=key, label=label, inherited_on_breach=raw.get("on_breach"),
                                            line_of=lambda k, key=key: line_of((key,) if k is None else (key, k)))
            problems.extend(more)
            if found is not None:
                changes[key] = found
    anomaly = None
    if "anomaly" in raw:
        anomaly, more = validate_anomaly(raw["anomaly"], label=label, on_rule=False,
                                         inherited_on_breach=raw.get("on_breach"),
                                         line_of=lambda k: line_of(("anomaly",) if k is None else ("anomaly", k)))
        problems.extend(more)
    rates = {}
    for key in ENTITY_RATES:
        if raw.get(key) is None:
            continue
        text = parse_rate(raw[key])
        if text is None:
            add(_rate_problem(label, key, raw[key]), (key,))
        else:
            rates[key] = text
    stated_rate = any(raw.get(k) is not None for k in ENTITY_RATES)
    if not stated_rate and not any(k in raw for k in (*ENTITY_CHANGES, "anomaly")):
        add(f"{label} states none of max_quarantine_rate, max_flag_rate, max_increase, max_volume_change, anomaly; "
            "state at least one, or remove thresholds:")
    min_rows = _min_rows(raw.get("min_rows"))
    if min_rows is None:
        add(_min_rows_problem(label, raw.get("min_rows")), ("min_rows",))
    on_breach = raw.get("on_breach")
    # The rates' own on_breach; a change limit may take it, or state its own (assay.checks.increases).
    if on_breach not in ON_BREACH and (stated_rate or on_breach is not None):
        add(_on_breach_problem(label, on_breach), ("on_breach",) if on_breach is not None else ())
    if problems:
        return [], problems
    limits = [RateLimit(ENTITY_RATES[k], rates[k], min_rows, on_breach, line_of((k,))) for k in ENTITY_RATES
              if k in rates]
    limits += [RateLimit(ENTITY_CHANGES[k], "", 0, c["on_breach"], line_of((k,)), factor=c["factor"], floor=c["floor"])
               for k, c in changes.items()]
    if anomaly is not None:
        limits += [RateLimit(ANOMALY_KIND, "", 0, anomaly["on_breach"], anomaly["line"], metric=m,
                             min_history=anomaly["min_history"]) for m in anomaly["metrics"]]
    return limits, []


def validate_rule_limits(values: Mapping[str, Any], *, label: str, disposition: Optional[str],
                         line_of: Callable[[tuple], int]) -> tuple[list[RateLimit], list[Problem]]:
    """Validate a rule's ``max_rate`` (with ``min_rows``, ``on_breach``) and ``max_increase``;
    ``line_of(path)`` gives the line of ``()`` (the rule), ``(key,)`` or ``('max_increase', key)``.

    Returns the rule's limits (their rule name is set at resolution) and every problem."""
    increase, anomaly = values.get("max_increase"), values.get("anomaly")
    rate_values = {k: v for k, v in values.items() if k not in ("max_increase", "anomaly")}
    if (increase is not None or anomaly is not None) and values.get("max_rate") is None:
        # on_breach then belongs to max_increase or anomaly, which take it when they state none
        rate_values["on_breach"] = None
    limit, problems = validate_rule_threshold(rate_values, label=label, disposition=disposition,
                                              line_of=lambda key: line_of((key,) if key else ()))
    limits = [limit] if limit is not None else []
    if anomaly is not None:
        if disposition == "fail":
            problems.append(Problem(THRESHOLD_INVALID, (
                f"{label} fails the run on the first row it fires on (on_fail: fail), so its failure rate is never "
                "recorded; remove anomaly, or make the rule quarantine or flag its rows"), line_of(("anomaly",))))
        found, more = validate_anomaly(anomaly, label=label, on_rule=True, inherited_on_breach=values.get("on_breach"),
                                       line_of=lambda k: line_of(("anomaly",) if k is None else ("anomaly", k)),
                                       inherited_reported=values.get("max_rate") is not None)
        problems.extend(more)
        if found is not None:
            limits.append(RateLimit(ANOMALY_KIND, "", 0, found["on_breach"], found["line"], metric="failure_rate",
                                    min_history=found["min_history"]))
    if increase is None:
        return ([], problems) if problems else (limits, problems)
    if disposition == "fail":
        problems.append(Problem(THRESHOLD_INVALID, (
            f"{label} fails the run on the first row it fires on (on_fail: fail), so no increase is ever recorded; "
            "remove max_increase, or make the rule quarantine or flag its rows"), line_of(("max_increase",))))
    found, more = validate_increase(increase, key="max_increase", label=label, inherited_on_breach=values.get("on_breach"),
                                    line_of=lambda k: line_of(("max_increase",) if k is None else ("max_increase", k)),
                                    inherited_reported=values.get("max_rate") is not None)
    problems.extend(more)
    if problems or found is None:
        return [], problems
    limits.append(RateLimit("rule_increase", "", 0, found["on_breach"], found["line"], factor=found["factor"],
                            floor=found["floor"]))
    return sorted(limits, key=lambda l: LIMIT_KINDS.index(l.kind)), []


def validate_rule_threshold(values: Mapping[str, Any], *, label: str, disposition: Optional[str],
                            line_of: Callable[[Optional[str]], int]) -> tuple[Optional[RateLimit], list[Problem]]:
    """Validate ``max_rate``, ``min_rows`` and ``on_breach`` of one quality rule (``values``
    holds the three, None when unstated); ``label`` names the rule in sentences, ``disposition``
    is what the rule does to a row, ``line_of(key)`` the line of a key (None: the rule).

    Returns the limit (its rule name is set at resolution), or None when the rule states none."""
    problems: list[Problem] = []

    def add(message: str, key: Optional[str] = None) -> None:
        problems.append(Problem(THRESHOLD_INVALID, message, line_of(key)))

    max_rate, min_rows, on_breach = (values.get(k) for k in ("max_rate", "min_rows", "on_breach"))
    if max_rate is None:
        for key in ("min_rows", "on_breach"):
            if values.get(key) is not None:
                add(f"{label} states {key} but no max_rate, so there is no rate to judge; add max_rate (the largest "
                    f"share of evaluated rows the rule may fire on, e.g. max_rate: \"0.01\") or remove {key}", key)
        return None, problems
    text = parse_rate(max_rate)
    if text is None:
        add(_rate_problem(label, "max_rate", max_rate), "max_rate")
    if disposition == "fail":
        add(f"{label} fails the run on the first row it fires on (on_fail: fail), so a rate is never reached; "
            "remove max_rate, or make the rule quarantine or flag its rows and let max_rate decide the run",
            "max_rate")
    rows = _min_rows(min_rows)
    if rows is None:
        add(_min_rows_problem(label, min_rows), "min_rows")
    if on_breach not in ON_BREACH:
        add(_on_breach_problem(label, on_breach), "on_breach" if on_breach is not None else None)
    if problems:
        return None, problems
    return RateLimit("rule_rate", text, rows, on_breach, line_of("max_rate")), []


def rate_check_id(limit: RateLimit) -> str:
    """The reported id of a limit's check: ``QUARANTINE_RATE``, ``FLAG_RATE``, ``<RULE>_RATE``."""
    if limit.kind == "rule_rate":
        return f"{limit.rule}_rate".upper()
    if limit.kind == "rule_increase":
        return f"{limit.rule}_increase".upper()
    if limit.kind == ANOMALY_KIND:
        return anomaly_check_id(limit.metric or "", limit.rule)
    return limit.kind.upper()


def _limit_name(limit: RateLimit) -> str:
    if limit.kind == "rule_rate":
        return f"rule {limit.rule}'s max_rate"
    if limit.kind == "rule_increase":
        return f"rule {limit.rule}'s max_increase"
    if limit.kind == ANOMALY_KIND:
        return f"rule {limit.rule}'s anomaly" if limit.rule else f"anomaly metric {limit.metric}"
    return {"quarantine_increase": "max_increase", "volume_change": "max_volume_change"}.get(limit.kind, f"max_{limit.kind}")


def lower_rate_limits(limits: list[RateLimit], declared: tuple, *, owner: str) -> tuple[list[DeclaredCheck], list[tuple[RateLimit, str]]]:
    """The declared checks of an entity's limits (entity rates first, then rules by name), and
    (limit, sentence) for each limit whose derived id another check already claims."""
    taken = {c.check_id: f"declared check {c.check_id} (line {c.line})" for c in declared}
    ordered = sorted(limits, key=lambda l: (LIMIT_KINDS.index(l.kind), _ANOMALY_ORDER.index(l.metric) if l.metric else 0,
                                            l.rule or ""))
    checks, clashes = [], []
    for limit in ordered:
        check_id = rate_check_id(limit)
        if check_id in taken:
            what = _limit_name(limit)
            other = taken[check_id]
            fix = (f"give the declared check another check_id, e.g. {check_id.lower()}_check"
                   if other.startswith("declared") else "rename the rule, or state one of the two limits only")
            clashes.append((limit, f"{what} of {owner} is recorded as check {check_id}, and {other} already "
                                        f"claims that id; {fix}"))
            continue
        where = "" if limit.rule else " of the entity's thresholds"
        taken[check_id] = f"{_limit_name(limit)}{where} (line {limit.line})"
        enforcement = "required" if limit.on_breach == "fail" else "advisory"
        checks.append(DeclaredCheck(check_id=check_id, kind=limit.kind, enforcement=enforcement,
                                    min_rows=limit.min_rows if limit.kind in RATE_KINDS else None,
                                    max_rate=limit.max_rate or None, rule=limit.rule, factor=limit.factor, floor=limit.floor,
                                    metric=limit.metric, min_history=limit.min_history,
                                    blocking=enforcement == "required", line=limit.line))
    return checks, clashes
