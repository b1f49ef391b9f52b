"""A build-time anomaly check's part of the measuring query (decision 1030).

The detector's one SQL text (assay.anomalies.method.band_sql) is run inside the entity's
measuring query, over relations this module defines as CTEs:

- ``assay_am``: the mart's rows of the entity's earlier runs (the history's ``assay_hm``, decision
  0981) and this run's rows, counted from the staged relation exactly as the mart counts them;
- ``assay_ab``: the runs that failed (the history's ``assay_hb``: a ``fail`` rule is seen by the
  detector in the mart rows themselves);
- ``assay_ay`` (the entity's recorded anomaly results, with their direction), ``assay_az`` and
  ``assay_aw`` (those of runs that did not fail, in order, in rows of one direction) and
  ``assay_ax``, the detector's state: a run recorded as anomalous is left out of the measure's
  later bands, and every ``shift_runs``-th anomaly in a row in one direction is a level shift,
  as the detector's sequential pass (detect.next_state) decides them;
- ``assay_ar``: this run's id, the only run judged.

``assay_an`` is the detector's answer for this run, one row per measure; each check reads its
measure's row. The detector's text is written for the engine by sqlglot: once on SQLMesh (the
model dialect), once per engine the detector runs on for dbt, chosen by the target at run time.
"""

from __future__ import annotations

from typing import Any, Callable

import sqlglot

from ..anomalies.method import METHOD, QUARANTINE_RATE, VOLUME, Sources, band_sql
from .history import MART_CTE, BLOCKED_CTE, History, sp_string
from .spelling import Spelling, Sql
from .staged import deduped, diverted, evaluated

#: The CTE of the left-out runs and level shifts, as the detector's `State` spells them; it is
#: derived from `assay_ay`, the recorded results, which a target reads as empty when the results
#: table does not exist yet.
ANOMALOUS_CTE = "assay_ax"
SOURCES = Sources(mart="assay_am", blocked="assay_ab", state=ANOMALOUS_CTE, judged_run="select run_id from assay_ar")


def measure_of(metric: str, rule: str | None) -> str:
    """The detector's measure: ``(volume)``, ``(quarantine_rate)`` or the rule's name."""
    return {"volume": VOLUME, "quarantine_rate": QUARANTINE_RATE}.get(metric, rule or "")


def detector_sql(dialect: str) -> str:
    """The detector's query for this run only, over the CTEs above, in `dialect`."""
    if dialect in ("duckdb", "postgres"):
        return band_sql(dialect, ("unused", "unused"), sources=SOURCES)
    # Spark (and any other model dialect) from the detector's own text, as sqlglot reads it.
    return sqlglot.transpile(band_sql("duckdb", ("unused", "unused"), sources=SOURCES), read="duckdb", write=dialect)[0]


class Anomalies:
    """The anomaly part of one measuring query: added once, read by every anomaly check."""

    def __init__(self, sp: Spelling, entity: str, history: History, staged_count: Callable[[str, str], str]) -> None:
        self.sp = sp
        self.entity = entity
        self.history = history
        self.staged_count = staged_count
        self.rules: list[tuple[str, str]] = []  # (rule, the staged column counting its firing rows)
        self.checks: list[tuple[str, str]] = []  # (check id, measure)
        self.used = False

    def add(self, check: Any, n: int) -> dict[str, str]:
        """Register one check; return the staged columns its sentence reads (evaluated, failing)."""
        self.used = True
        self.history.run_columns()  # the history's CTEs (the mart's earlier rows, the failed runs)
        counted = self.staged_count(evaluated(self.sp), "assay_evaluated")
        quarantined = self.staged_count(diverted(self.sp), "assay_quarantined")
        self.staged_count(deduped(self.sp), "assay_deduped")
        measure = measure_of(check.metric, check.rule)
        self.checks.append((check.check_id, measure))
        out = {"evaluated": counted}
        if check.metric == "quarantine_rate":
            out["failing"] = quarantined
        elif check.metric == "failure_rate":
            fires = self.staged_count(self.sp.call("flags_contain", Sql("_failed_rules"), check.rule), f"m{n}_fires")
            if all(r != check.rule for r, _c in self.rules):
                self.rules.append((check.rule, fires))
            out["failing"] = fires
        return out

    def ctes(self, run_id: str) -> list[str]:
        """The CTEs, after the staged counts (``assay_s``) and the history's."""
        sp, i = self.sp, self.sp.indent
        guard, results = self.history.rel.guard, self.history.rel.results
        txt = lambda e: sp.cast(e, "string", False)  # noqa: E731
        num = lambda e: sp.cast(e, "int", False)  # noqa: E731
        now = sp.call("run_timestamp")
        entity = txt(sp_string(sp, self.entity))
        row = sp_string(sp, "(entity)")
        parts = [sp.sql("{i}select {e} as entity, rule, disposition, {ev}, {f}, {q}, {d}, run_id, {date} as run_date, "
                        "run_started_at\n{i}from {m}\n{i}where run_id <> {run}",
                        i=i, e=entity, m=MART_CTE, run=run_id, date=sp.cast("run_started_at", "date", False),
                        ev=num("rows_evaluated") + " as rows_evaluated", f=num("rows_failed") + " as rows_failed",
                        q=num("rows_quarantined") + " as rows_quarantined", d=num("rows_deduped") + " as rows_deduped")]
        parts.append(sp.sql("{i}select {e}, {r}, {r}, {ev}, {zero}, {q}, {d}, {run}, {date}, {ts}\n{i}from assay_s",
                            i=i, e=entity, r=txt(row), ev=num("assay_evaluated"), zero=num("0"), q=num("assay_quarantined"),
                            d=num("assay_deduped"), run=txt(run_id), date=sp.cast(now, "date", False),
                            ts=sp.cast(now, "timestamp", False)))
        for rule, column in self.rules:
            parts.append(sp.sql("{i}select {e}, {r}, {blank}, {zero}, {f}, {zero}, {zero}, {run}, {date}, {ts}\n{i}from assay_s",
                                i=i, e=entity, r=txt(sp_string(sp, rule)), blank=txt(sp_string(sp, "")), zero=num("0"),
                                f=num(column), run=txt(run_id), date=sp.cast(now, "date", False),
                                ts=sp.cast(now, "timestamp", False)))
        union = sp.sql("\n{}union all\n", i).join(parts)
        cases = " ".join(sp.sql("when {} then {}", sp_string(sp, c), sp_string(sp, m)) for c, m in self.checks)
        null = txt(sp.kw("null"))
        no = sp.kw("not")
        # Each recorded result of an anomaly check of the entity: its measure, and the direction of
        # an anomaly (1 up, -1 down, 0 passed: normal or not judged). Only texts the check records
        # can hold "up" or "down" (its `direction`), so a LIKE reads it whatever the JSON spacing.
        real = sp.sql("{i}select {m} as measure, {r} as run_id,\n"
                      "{i}{i}case when passed then 0 when measures like '%\"up\"%' then 1 "
                      "when measures like '%\"down\"%' then -1 else 0 end as direction\n{i}from {rel}\n"
                      "{i}where table_name = {name} and kind = 'anomaly' and measures {no} like '%\"not_evaluated\":%'",
                      i=i, m=txt(sp.sql("case check_id {} end", cases)), r=txt("run_id"), rel=results,
                      name=sp_string(sp, self.entity), no=no)
        empty = sp.sql("{i}select {n} as measure, {n} as run_id, {z} as direction where 1 = 0", i=i, n=null, z=num("0"))
        # The detector's sequential rule over those results (detect.next_state): an anomalous run is
        # left out of later bands, and `shift_runs` anomalies in a row in one direction (failed runs
        # skipped, anything else breaking the row) are a new level, learnt from its first run on.
        # Rows of one direction are islands (a row number minus the row number within the
        # direction); a level is detected at every `shift_runs`-th run of an island.
        order = "order by r.run_started_at, y.run_id"
        ordered = sp.sql(
            "assay_az as (\n{i}select y.measure, y.run_id, y.direction, r.run_started_at,\n"
            "{i}{i}row_number() over (partition by y.measure {o}) - row_number() over (partition by y.measure, "
            "y.direction {o}) as island\n"
            "{i}from assay_ay as y\n"
            "{i}{j} join (select run_id, max(run_started_at) as run_started_at from {m} where rule = {row} group by run_id) "
            "as r on r.run_id = y.run_id\n"
            "{i}where y.run_id {no} in (select run_id from {b} where run_id is {no} null)\n"
            "{i}{i}and y.run_id {no} in (select run_id from {m} where disposition = 'fail' and rows_failed > 0 "
            "and run_id is {no} null)\n)",
            i=i, o=order, j=sp.kw("inner"), m=MART_CTE, row=row, b=BLOCKED_CTE, no=no)
        island = "partition by measure, direction, island order by run_started_at, run_id"
        shifts = sp.sql(
            "assay_aw as (\n{i}select measure, run_id, direction,\n"
            "{i}{i}row_number() over ({w}) as place,\n"
            "{i}{i}lag(run_id, {back}) over ({w}) as since_run_id\n"
            "{i}from assay_az\n)", i=i, w=island, back=METHOD.shift_runs - 1)
        state = sp.sql(
            "{x} as (\n{i}select {e} as entity, measure, run_id, {n} as since_run_id from assay_ay where direction <> 0\n"
            "{i}union all\n"
            "{i}select {e}, measure, run_id, {since} from assay_aw where direction <> 0 and place % {k} = 0\n)",
            x=ANOMALOUS_CTE, i=i, e=entity, n=null, since=txt("since_run_id"), k=METHOD.shift_runs)
        return [
            sp.sql("assay_am as (\n{}\n)", union),
            sp.sql("assay_ab as (\n{i}select run_id, {e} as entity from {b}\n)", i=i, e=entity, b=BLOCKED_CTE),
            sp.sql("assay_ay as (\n{body}\n)", body=guard("results", real, empty)),
            ordered,
            shifts,
            state,
            sp.sql("assay_ar as (\n{i}select {r} as run_id\n)", i=i, r=txt(run_id)),
            sp.sql("assay_an as (\n{}\n)", sp.engine_sql(detector_sql)),
        ]

    def joins(self) -> list[str]:
        """One row of the detector's answer per check, by its measure."""
        sp = self.sp
        return [sp.sql("left join assay_an as an{k} on an{k}.measure = {m}", k=k, m=sp_string(sp, m))
                for k, (_c, m) in enumerate(self.checks, 1)]

    def outer(self) -> list[tuple[str, str]]:
        """(expr, name) of what each check records: counts as integers, the engine's doubles as text."""
        sp = self.sp
        out = []
        for k, _ in enumerate(self.checks, 1):
            a = f"an{k}"
            # The direction a later build's level-shift rule reads (assay_ay); the verdict itself is
            # decided from the numbers (assay.checks.anomaly).
            up_down = sp.sql("case when {a}.observed > {a}.high then 'up' when {a}.observed < {a}.low then 'down' end", a=a)
            out += [(sp.cast(f"coalesce({a}.history, 0)", "int", False), f"assay_a{k}_history"),
                    (sp.cast(up_down, "string", False), f"assay_a{k}_direction"),
                    (sp.cast(f"{a}.learnt_from", "int", False), f"assay_a{k}_learnt"),
                    *[(sp.cast(f"{a}.{c}", "string", False), f"assay_a{k}_{c}")
                      for c in ("observed", "centre", "low", "high", "season", "run_date")]]
        return out

    def columns(self, check_id: str) -> dict[str, dict[str, str]]:
        """The descriptor's counts and texts of one check (read by name from the row)."""
        k = next(i for i, (c, _m) in enumerate(self.checks, 1) if c == check_id)
        return {"counts": {"history": f"assay_a{k}_history", "learnt_from": f"assay_a{k}_learnt"},
                "texts": {"direction": f"assay_a{k}_direction", "observed": f"assay_a{k}_observed", "median": f"assay_a{k}_centre", "low": f"assay_a{k}_low",
                          "high": f"assay_a{k}_high", "season": f"assay_a{k}_season", "run_date": f"assay_a{k}_run_date"}}

