"""Change since the last run (issue 20, item 2): limits relative to the previous successful run.

Three limits, each a factor and an absolute floor, so that 1 -> 3 rows is not an alarm
(docs/thresholds.md, decision 0981)::

    entities:
      order:
        thresholds:
          max_increase: {factor: "2", floor: 50, on_breach: fail}        # the quarantine rate
          max_volume_change: {factor: "3", floor: 1000, on_breach: warn}  # bronze rows per load
        quality:
          - {rule: expression, name: discount_ok, expr: "...", on_fail: flag,
             max_increase: {factor: "2", floor: 50, on_breach: warn}}  # the rows the rule fires on

``on_breach`` may be left out of the mapping when the enclosing rule or ``thresholds:`` states
one. Each limit lowers into a declared check (``<RULE>_INCREASE``, ``QUARANTINE_INCREASE``,
``VOLUME_CHANGE``) whose measuring query reads this run's counts from the staged relation and
the previous successful runs' counts from ``gold.mart_data_quality``; the verdict is decided here
from the recorded integers, in integers only:

- a rule: ``rows > previous * factor`` and ``rows > previous + floor``;
- the quarantine rate: ``rate > previous rate * factor`` and the increase of the rate, counted in
  this run's evaluated rows (``quarantined - previous rate * evaluated``), ``> floor``;
- volume (a load is the bronze rows the mart counted now minus at the previous successful run):
  ``load > previous load * factor`` and ``load > previous load + floor``, or
  ``load * factor < previous load`` and ``load < previous load - floor``.

Exactly at the factor or the floor passes. With no previous successful run (two for volume) the
check passes and says it was not judged.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Callable, Mapping, Optional

from . import Problem
from .detail import Verdict, _number_text, _quote
from .limit_mapping import LimitProblems
from .quoted import decimal_text, shown

__all__ = [
    "INCREASE_KINDS",
    "INCREASE_KEYS",
    "parse_factor",
    "validate_increase",
    "increase_detail",
]

INCREASE_KINDS = ("quarantine_increase", "rule_increase", "volume_change")
INCREASE_KEYS = ("factor", "floor", "on_breach")
#: A factor as text: a decimal of at least 1, at most 18 digits before and after the point.
FACTOR_RE = re.compile(r"[0-9]{1,18}(?:\.[0-9]{1,18})?")
MAX_FLOOR = 2**63 - 1


def parse_factor(value: Any) -> Optional[str]:
    """The exact decimal text of a factor of at least 1, written as a string or a YAML number
    (a float by its shortest spelling), or None when it is not one."""
    text = decimal_text(value)
    if text is None:
        return None
    if not FACTOR_RE.fullmatch(text) or Decimal(text) < 1:
        return None
    return text


def validate_increase(raw: Any, *, key: str, label: str, inherited_on_breach: Any,
                      line_of: Callable[[Optional[str]], int],
                      inherited_reported: bool = True) -> tuple[Optional[dict], list[Problem]]:
    """Validate one ``max_increase`` / ``max_volume_change`` mapping written under ``label``.

    ``inherited_on_breach`` is the enclosing rule's or thresholds' ``on_breach`` (None when
    unstated), used when the mapping states none; ``line_of(k)`` the line of a key of the mapping
    (None: the mapping); ``inherited_reported`` says the enclosing ``on_breach``, when invalid, is
    already reported where it is written (so it is not reported twice). Returns ``{'factor', 'floor', 'on_breach', 'line'}`` or None, and every
    problem."""
    example = f'{key}: {{factor: "2", floor: 50, on_breach: fail}}'
    found = LimitProblems(line_of)
    problems, add = found.problems, found.add
    if found.opened(raw, label=label, key=key, keys=INCREASE_KEYS, how=f"as a mapping with a factor and a floor, e.g. {example}") is None:
        return None, problems
    factor = parse_factor(raw.get("factor"))
    if factor is None:
        what = "no factor" if raw.get("factor") is None else f"factor {shown(raw.get('factor'))}"
        add(f"{label} states {what} in {key}; write the largest allowed ratio to the previous run as a decimal of "
            "at least 1, e.g. factor: \"2\" (twice the previous run's value)", "factor" if "factor" in raw else None)
    floor = raw.get("floor")
    if not (isinstance(floor, int) and not isinstance(floor, bool) and 0 <= floor <= MAX_FLOOR):
        what = "no floor" if floor is None else f"floor {shown(floor)}"
        add(f"{label} states {what} in {key}; write the change in rows below which nothing is an alarm as a whole "
            "number of rows (0 or more), e.g. floor: 50, so that 1 -> 3 rows is not a breach",
            "floor" if "floor" in raw else None)
        floor = None
    on_breach = raw.get("on_breach", inherited_on_breach)
    refused_above = "on_breach" not in raw and on_breach is not None and inherited_reported
    if on_breach not in ("fail", "warn") and refused_above:
        return None, problems  # the enclosing on_breach is refused where it is written
    if on_breach not in ("fail", "warn"):
        if on_breach is None:
            add(f"{label} states no on_breach for {key}; write on_breach: fail (a breach sets the entity back: it is "
                "not published and the previous version stays) or on_breach: warn (recorded, published) in the "
                "mapping, as there is no default")
        else:
            add(f"{label} states on_breach {shown(on_breach)} for {key}; write fail (a breach sets the entity back) "
                "or warn (a breach is recorded and the entity is published)",
                "on_breach" if "on_breach" in raw else None)
    if problems:
        return None, problems
    return {"factor": factor, "floor": floor, "on_breach": on_breach, "line": line_of(None)}, []


# --------------------------------------------------------------------------- verdicts


def _ratio(numerator: int, denominator: int, places: int = 4) -> str:
    """``numerator / denominator`` rounded UP to ``places`` (0100's reasoning: a value above an
    integer limit never prints at the limit)."""
    scaled = -((-numerator * 10**places) // denominator)
    return _number_text(Decimal(scaled).scaleb(-places))


def _factor(factor: str) -> tuple[int, int]:
    whole, _, frac = factor.partition(".")
    return int(whole + frac), 10 ** len(frac)


def _run(run: Any) -> str:
    return f"run {run}" if run else "run (unknown id)"


def _rows(n: int) -> str:
    return f"{n} {'row' if n == 1 else 'rows'}"


def _limits(factor: str, floor: int) -> str:
    return f"the declared factor {factor} and floor of {_rows(floor)}"


def _int(value: Any) -> Optional[int]:
    return None if value is None else int(value)


def increase_detail(kind: str, bounds: Mapping[str, Any], measures: Mapping[str, Any]) -> Verdict:
    """The verdict and sentence of one change limit, from the recorded counts (decision 0981)."""
    factor, floor = str(bounds["factor"]), int(bounds.get("floor") or 0)
    digits, scale = _factor(factor)
    if kind == "volume_change":
        return _volume(measures, factor, floor, digits, scale)
    failing = int(measures.get("failing") or 0)
    previous, run = _int(measures.get("previous_failing")), measures.get("previous_run")
    if kind == "rule_increase":
        rule = _quote(str(bounds.get("rule") or ""))
        now = f"rule {rule} fired on {_rows(failing)}"
        if not run:
            return Verdict(True, f"{now}; no earlier successful run of the entity is recorded, so the increase is "
                                 f"not judged against {_limits(factor, floor)}")
        if previous is None:
            return Verdict(True, f"{now}; the previous successful {_run(run)} recorded no count for the rule, so the "
                                 f"increase is not judged against {_limits(factor, floor)}")
        above_factor = failing * scale > digits * previous
        above_floor = failing > previous + floor
        breach = above_factor and above_floor
        return Verdict(not breach, (
            f"{now}, against {previous} in the previous successful {_run(run)}: "
            f"{'above both' if breach else 'not above both'} {previous} x {factor} = "
            f"{_number_text(Decimal(previous) * Decimal(factor))} (the declared factor) and {previous} + {floor} = "
            f"{previous + floor} (the declared floor)"))
    evaluated = int(measures.get("evaluated") or 0)
    prev_evaluated = _int(measures.get("previous_evaluated"))
    now = f"quarantined {failing} of {_rows(evaluated).replace('row', 'evaluated row')}"
    if not run:
        return Verdict(True, f"{now}; no earlier successful run of the entity is recorded, so the increase of the "
                             f"quarantine rate is not judged against {_limits(factor, floor)}")
    if evaluated <= 0 or not prev_evaluated or previous is None:
        which = "this run" if evaluated <= 0 else f"the previous successful {_run(run)}"
        return Verdict(True, f"{now}; no rows were evaluated in {which}, so the increase of the quarantine rate "
                             f"is not judged against {_limits(factor, floor)}")
    # rate > previous rate x factor, and (rate - previous rate) x evaluated > floor, in integers.
    above_factor = failing * prev_evaluated * scale > digits * previous * evaluated
    excess = failing * prev_evaluated - previous * evaluated  # over prev_evaluated: rows above the previous rate
    above_floor = excess > floor * prev_evaluated
    breach = above_factor and above_floor
    places = max(4, len(str(scale)) - 1)
    return Verdict(not breach, (
        f"{now}, a rate of {_ratio(failing, evaluated)}, against {_ratio(previous, prev_evaluated)} "
        f"({previous} of {prev_evaluated}) in the previous successful {_run(run)}: "
        f"{'above both' if breach else 'not above both'} {_ratio(previous * digits, prev_evaluated * scale, places)} "
        f"(the previous rate x the declared factor {factor}) and, by {_ratio(excess, prev_evaluated)} rows of this "
        f"run's {evaluated}, the previous rate plus the declared floor of {_rows(floor)}"))


def _volume(measures: Mapping[str, Any], factor: str, floor: int, digits: int, scale: int) -> Verdict:
    bronze = int(measures.get("bronze") or 0)
    before, earlier = _int(measures.get("previous_bronze")), _int(measures.get("earlier_bronze"))
    run, earlier_run = measures.get("previous_run"), measures.get("earlier_run")
    if not run or before is None:
        return Verdict(True, f"bronze holds {_rows(bronze)}; no earlier successful run of the entity is recorded, so "
                             f"the volume of this load is not judged against {_limits(factor, floor)}")
    load = bronze - before
    # a negative load is bronze shrinking (rows pruned): said so, not as `loaded -10 rows`
    grew = f"loaded {_rows(load)}" if load >= 0 else f"bronze lost {_rows(-load)} (a load of {load})"
    now = f"{grew} since the previous successful {_run(run)} (bronze rows {before} -> {bronze})"
    if not earlier_run or earlier is None:
        return Verdict(True, f"{now}; only one earlier successful run is recorded, so there is no previous load to "
                             f"compare with, and the volume is not judged against {_limits(factor, floor)}")
    previous = before - earlier
    up = load * scale > digits * previous and load > previous + floor
    down = load * digits < previous * scale and load < previous - floor
    against = f"against {_rows(previous)} loaded between {_run(earlier_run)} and {_run(run)}"
    if up:
        return Verdict(False, f"{now}, {against}: above both {previous} x {factor} = "
                              f"{_number_text(Decimal(previous) * Decimal(factor))} (the declared factor) and "
                              f"{previous} + {floor} = {previous + floor} (the declared floor)")
    if down:
        return Verdict(False, f"{now}, {against}: below both {previous} / {factor} = "
                              f"{_ratio(previous * scale, digits)} (the declared factor) and {previous} - {floor} = "
                              f"{previous - floor} (the declared floor)")
    return Verdict(True, f"{now}, {against}: within {_limits(factor, floor)} in both directions")
