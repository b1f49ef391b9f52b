"""Anomalies judged at build time (issue 20, item 3): the band `assay anomalies` learns, as a check.

Two places of the spec opt in (docs/anomalies.md "As a check at build time", decision 1030)::

    entities:
      order:
        thresholds:
          anomaly: {metrics: [volume, quarantine_rate], on_breach: fail, min_history: 7}
        quality:
          - {rule: expression, name: discount_ok, expr: "...", on_fail: flag,
             anomaly: {on_breach: warn}}                # the rule's failure rate

Each metric lowers into a declared check of kind ``anomaly`` (``VOLUME_ANOMALY``,
``QUARANTINE_RATE_ANOMALY``, ``<RULE>_ANOMALY``). Its measuring query runs the detector's own SQL
(assay.anomalies.method, never a second copy) over the entity's earlier runs plus this one, and
records the observed value, the band's edges and median (the engine's doubles as text, which
round-trip exactly) and how many runs it learnt from; the verdict is decided here and in the
package's Jinja twin from those recorded numbers: outside ``[low, high]`` is a breach, at an
edge passes, fewer eligible earlier runs than ``min_history`` is not judged.
"""

from __future__ import annotations

import datetime as _dt
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any, Callable, Mapping, Optional

from . import Problem
from .detail import Verdict, _number_text, _quote
from .limit_mapping import LimitProblems
from .quoted import shown

__all__ = ["ANOMALY_KIND", "METRICS", "ANOMALY_KEYS", "RULE_ANOMALY_KEYS", "validate_anomaly", "anomaly_check_id",
           "anomaly_detail", "MIN_HISTORY_RANGE"]

ANOMALY_KIND = "anomaly"
#: The entity's metrics, and the measure each is in the detector's answer (a rule's is its name).
METRICS = {"volume": "(volume)", "quarantine_rate": "(quarantine_rate)"}
ANOMALY_KEYS = ("metrics", "on_breach", "min_history")
RULE_ANOMALY_KEYS = ("on_breach", "min_history")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _method_history() -> tuple[int, int]:
    from ..anomalies.method import METHOD

    # At least 3 runs for a median and a spread; at most the runs the all-runs band learns from.
    return 3, METHOD.recent_runs


MIN_HISTORY_RANGE = _method_history()


def anomaly_check_id(metric: str, rule: Optional[str] = None) -> str:
    """``VOLUME_ANOMALY``, ``QUARANTINE_RATE_ANOMALY`` or ``<RULE>_ANOMALY``."""
    return f"{rule if metric == 'failure_rate' else metric}_anomaly".upper()


def validate_anomaly(raw: Any, *, label: str, on_rule: bool, inherited_on_breach: Any,
                     line_of: Callable[[Optional[str]], int], inherited_reported: bool = True
                     ) -> tuple[Optional[dict], list[Problem]]:
    """Validate one ``anomaly:`` mapping (an entity's ``thresholds.anomaly`` or a rule's ``anomaly``).

    ``inherited_on_breach`` is the enclosing ``thresholds:``' or rule's ``on_breach`` (None when
    unstated), taken when the mapping states none; ``line_of(k)`` the line of a key (None: the
    mapping). Returns ``{'metrics', 'on_breach', 'min_history', 'line'}`` or None, and every problem."""
    from ..anomalies.method import METHOD

    keys = RULE_ANOMALY_KEYS if on_rule else ANOMALY_KEYS
    example = "anomaly: {on_breach: warn}" if on_rule else "anomaly: {metrics: [volume, quarantine_rate], on_breach: warn}"
    found = LimitProblems(line_of)
    problems, add = found.problems, found.add
    hint = lambda k: (" (a rule's anomaly judges that rule's failure rate; the entity's metrics are listed in its "  # noqa: E731
                      "thresholds: anomaly)" if on_rule and k == "metrics" else "")
    if found.opened(raw, label=label, key="anomaly", keys=keys, how=f"as a mapping, e.g. {example}", hint=hint) is None:
        return None, problems
    metrics: list[str] = []
    if not on_rule:
        listed = raw.get("metrics")
        names = ", ".join(METRICS)
        if not isinstance(listed, list) or not listed:
            what = ("no metrics" if listed is None else "an empty list of metrics" if listed == []
                    else f"metrics {shown(listed)}")
            add(f"{label} states {what} in anomaly; list the measures to judge against the band learnt from earlier "
                f"runs, e.g. metrics: [volume, quarantine_rate] (accepted: {names}; a rule's failure rate is judged "
                "by an anomaly mapping on the rule)", "metrics" if "metrics" in raw else None)
        else:
            for m in listed:
                if m not in METRICS:
                    add(f"{label} lists metric {shown(m)} in anomaly.metrics, which is not a metric; write "
                        f"{' or '.join(METRICS)} (a rule's failure rate: anomaly: {{on_breach: ...}} on the rule)",
                        "metrics")
                elif m in metrics:
                    add(f"{label} lists metric {m} twice in anomaly.metrics; list it once", "metrics")
                else:
                    metrics.append(m)
    low, high = MIN_HISTORY_RANGE
    history = raw.get("min_history", METHOD.min_history)
    if not (isinstance(history, int) and not isinstance(history, bool) and low <= history <= high):
        add(f"{label} states min_history {shown(history)} in anomaly; write the number of eligible earlier runs needed "
            f"before a run is judged, a whole number from {low} to {high} (default {METHOD.min_history}; the band "
            f"learns from at most the latest {high} runs)", "min_history")
    on_breach = raw.get("on_breach", inherited_on_breach)
    if on_breach not in ("fail", "warn"):
        if "on_breach" not in raw and on_breach is not None and inherited_reported:
            pass  # refused where the enclosing on_breach is written
        elif on_breach is None:
            add(f"{label} states no on_breach for anomaly; write on_breach: fail (an anomalous run sets the entity "
                "back: it is not published and the previous version stays) or on_breach: warn (recorded, "
                "published) in the mapping, as there is no default")
        else:
            add(f"{label} states on_breach {shown(on_breach)} for anomaly; write fail (an anomalous run sets the "
                "entity back) or warn (recorded, published)", "on_breach" if "on_breach" in raw else None)
    if problems or on_breach not in ("fail", "warn"):
        return None, problems
    return {"metrics": tuple(metrics), "on_breach": on_breach, "min_history": history, "line": line_of(None)}, []


# --------------------------------------------------------------------------- verdicts


def _decimal(text: Any) -> Optional[Decimal]:
    if text is None:
        return None
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _rounded(value: Decimal, places: int, rounding: str) -> str:
    return _number_text(value.quantize(Decimal(1).scaleb(-places), rounding=rounding))


def _band_texts(observed: Decimal, low: Decimal, high: Decimal, integral: bool) -> tuple[str, str, str]:
    """The observed value and the band's edges as printed: the band shrunk to what it allows at
    the printed precision (low rounded up, high down), so an observed value printed above the
    band's high is above it (0100's reasoning); volume is a whole number of rows."""
    start = 0 if integral else 4
    for places in range(start, 19):
        lo, hi = _rounded(low, places, ROUND_CEILING), _rounded(high, places, ROUND_FLOOR)
        ob = _rounded(observed, places, ROUND_CEILING if observed > high else ROUND_FLOOR if observed < low else "ROUND_HALF_EVEN")
        above, below = Decimal(ob) > Decimal(hi), Decimal(ob) < Decimal(lo)
        if (observed > high) == above and (observed < low) == below:
            return ob, lo, hi
    return _number_text(observed), _number_text(low), _number_text(high)


def _learnt(season: Optional[str], learnt_from: Optional[int], run_date: Any) -> str:
    n = int(learnt_from or 0)
    runs = "run" if n == 1 else "runs"
    if season == "weekday" and run_date:
        try:
            day = _WEEKDAYS[_dt.date.fromisoformat(str(run_date)[:10]).weekday()]
            return f"{n} earlier {runs} on {day}s" if n != 1 else f"1 earlier run on a {day}"
        except ValueError:
            pass
    return f"{n} earlier {runs}"


def anomaly_detail(bounds: Mapping[str, Any], measures: Mapping[str, Any]) -> Verdict:
    """The verdict and sentence of one build-time anomaly check, from its recorded numbers."""
    metric = str(bounds.get("metric"))
    needed = int(bounds.get("min_history") or 0)
    history = int(measures.get("history") or 0)
    observed, low, high = (_decimal(measures.get(k)) for k in ("observed", "low", "high"))
    evaluated, failing = int(measures.get("evaluated") or 0), int(measures.get("failing") or 0)
    if metric == "volume":
        what = "the volume of this load"
        if observed is None:
            return Verdict(True, "no earlier run of the entity is recorded, so no load is measured and the volume is "
                                 "not judged against a band learnt from earlier runs")
        if observed >= 0:
            now = f"loaded {_number_text(observed)} {'row' if observed == 1 else 'rows'} since the previous run"
        else:  # bronze pruned by more than it received: said as the change limit says it
            now = (f"bronze lost {_number_text(-observed)} {'row' if observed == -1 else 'rows'} since the previous run "
                   f"(a load of {_number_text(observed)})")
    else:
        what = "the quarantine rate" if metric == "quarantine_rate" else "the rule's failure rate"
        head = ("quarantined" if metric == "quarantine_rate"
                else f"rule {_quote(str(bounds.get('rule') or ''))} fired on")
        now = f"{head} {failing} of {evaluated} evaluated {'row' if evaluated == 1 else 'rows'}"
        if observed is None:
            return Verdict(True, f"{now}, so {what} is not judged against a band learnt from earlier runs")
    if history < needed or low is None or high is None:
        return Verdict(True, f"{now}; {history} eligible earlier {'run' if history == 1 else 'runs'} can be learnt from "
                             f"and {needed} are needed (min_history), so {what} is not judged")
    ob, lo, hi = _band_texts(observed, low, high, metric == "volume")
    if metric != "volume":
        now += f", a rate of {ob}"
    where = "above" if observed > high else "below" if observed < low else "within"
    median = _decimal(measures.get("median"))
    centre = f" (median {_rounded(median, 0 if metric == 'volume' else 4, 'ROUND_HALF_EVEN')})" if median is not None else ""
    return Verdict(where == "within", f"{now}, {where} the band [{lo}, {hi}] learnt from "
                                      f"{_learnt(measures.get('season'), measures.get('learnt_from'), measures.get('run_date'))}{centre}")
