"""The previous successful runs of an entity, read inside its one measuring query (decision 0981).

A change limit (assay.checks.increases) compares this run's counts with the counts
``gold.mart_data_quality`` recorded for the entity's previous successful run (and, for volume,
the one before it). Those counts are read as one more part of the measuring query (0500), so the
recorded result carries both runs' numbers and the verdict is decided from them alone.

The previous successful run is the latest run of the mart's ``(entity)`` row for the entity,
other than the current run, that

- fired no rule whose disposition is ``fail`` (``rows_failed > 0`` on such a rule's row);
- recorded no ``required`` check (nor ``block`` check file) of the table as not passed in ``<meta>.assay_check_results``
  (a check not evaluated over its budget does not count: it never blocks);
- was not set back: no ``TABLE_ROLLED_BACK`` event of that run for the table in
  ``<meta>.assay_events`` (where the target keeps events: dbt).

Runs are ordered by ``run_started_at`` (then ``run_id``). A relation that does not exist yet (the
mart before the first build) reads as empty through the target's ``guard``: the dbt target asks
the adapter at run time, the SQLMesh recorder replaces a missing table's part before running.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .spelling import Spelling

ENTITY_ROW = "(entity)"
#: The parts of the query that read a relation that may not exist, by what they read.
MART_CTE, BLOCKED_CTE = "assay_hm", "assay_hb"


def _no_guard(which: str, real: str, empty: str) -> str:
    return real


@dataclass(frozen=True)
class HistoryRelations:
    """Where a target finds the entity's history: the mart, the check results and (dbt) the
    events table, as SQL text; ``guard(which, real, empty)`` spells "``real`` when relation
    ``which`` exists, else ``empty``" (which: ``mart``, ``results`` or ``events``)."""

    mart: str
    results: str
    events: Optional[str] = None
    guard: Callable[[str, str, str], str] = field(default=_no_guard, compare=False)


class History:
    """The history part of one measuring query: added once, read by every change limit."""

    def __init__(self, sp: Spelling, entity: str, relations: HistoryRelations) -> None:
        self.sp = sp
        self.entity = entity
        self.rel = relations
        self.rule_columns: list[tuple[str, str]] = []  # (rule, column of its previous rows_failed)
        self.used = False

    def run_columns(self) -> dict[str, str]:
        """The columns of the previous runs' numbers (the latest successful run, and the one before)."""
        self.used = True
        return {"previous_run": "assay_prev_run", "previous_evaluated": "assay_prev_evaluated",
                "previous_quarantined": "assay_prev_quarantined", "previous_bronze": "assay_prev_bronze",
                "earlier_run": "assay_earlier_run", "earlier_bronze": "assay_earlier_bronze"}

    def rule_column(self, rule: str, name: str) -> str:
        """The column holding ``rows_failed`` of ``rule`` in the previous successful run."""
        self.used = True
        if all(r != rule for r, _c in self.rule_columns):
            self.rule_columns.append((rule, name))
        return next(c for r, c in self.rule_columns if r == rule)

    def ctes(self, run_id: str) -> list[str]:
        """The CTEs: the entity's mart rows, the runs that failed, the successful runs ranked, and
        the one row of previous numbers (``assay_h``)."""
        sp, i, name = self.sp, self.sp.indent, sp_string(self.sp, self.entity)
        txt, num = (lambda e: sp.cast(e, "string", False)), (lambda e: sp.cast(e, "int", False))
        null = sp.kw("null")
        mart_cols = ("run_id", "rule", "disposition")
        mart_nums = ("rows_evaluated", "rows_quarantined", "rows_deduped", "rows_failed")
        real_mart = sp.sql("{i}select {cols}, run_started_at\n{i}from {rel}\n{i}where entity = {e}", i=i,
                           cols=", ".join(mart_cols + mart_nums), rel=self.rel.mart, e=name)
        empty_mart = sp.sql("{i}select {cols}, {ts} as run_started_at\n{i}where 1 = 0", i=i, ts=sp.cast(null, "timestamp", False),
                            cols=", ".join([sp.sql("{} as {}", txt(null), c) for c in mart_cols]
                                           + [sp.sql("{} as {}", num(null), c) for c in mart_nums]))
        blocked = [self.rel.guard("results", sp.sql(
            "{i}select run_id from {rel}\n{i}where table_name = {e} and enforcement in ('required', 'block') and {no} passed\n"
            "{i}{a} measures {no} like '%\"not_evaluated\":%'", i=i, rel=self.rel.results, e=name, no=sp.kw("not"),
            a=sp.kw("and")), sp.sql("{i}select {n} as run_id where 1 = 0", i=i, n=txt(null)))]
        if self.rel.events is not None:
            blocked.append(self.rel.guard("events", sp.sql(
                "\n{i}union all\n{i}select run_id from {rel}\n{i}where table_name = {e} and event_type = 'TABLE_ROLLED_BACK'",
                i=i, rel=self.rel.events, e=name), ""))
        ranked = sp.sql(
            "assay_hr as (\n{i}select run_id, rows_evaluated, rows_quarantined, rows_evaluated + rows_deduped as bronze,\n"
            "{i}{i}row_number() over (order by run_started_at desc, run_id desc) as n\n"
            "{i}from {m}\n"
            "{i}where rule = {row} and run_id is not null and run_id <> {run}\n"
            "{i}{i}and run_id not in (select run_id from {m} where disposition = 'fail' and rows_failed > 0 and run_id is not null)\n"
            "{i}{i}and run_id not in (select run_id from {b} where run_id is not null)\n)",
            i=i, m=MART_CTE, b=BLOCKED_CTE, row=sp_string(sp, ENTITY_ROW), run=run_id)

        def pick(n: int, column: str, alias: str, cast) -> str:
            return sp.sql("{i}{i}{e} as {a}", i=i, a=alias, e=cast(sp.sql("max(case when n = {} then {} end)", n, column)))

        cols = self.run_columns()
        items = [pick(1, "run_id", cols["previous_run"], txt), pick(1, "rows_evaluated", cols["previous_evaluated"], num),
                 pick(1, "rows_quarantined", cols["previous_quarantined"], num),
                 pick(1, "bronze", cols["previous_bronze"], num), pick(2, "run_id", cols["earlier_run"], txt),
                 pick(2, "bronze", cols["earlier_bronze"], num)]
        out = [
            sp.sql("{m} as (\n{body}\n)", m=MART_CTE, body=self.rel.guard("mart", real_mart, empty_mart)),
            sp.sql("{b} as (\n{body}\n)", b=BLOCKED_CTE, body="".join(blocked)),
            ranked,
            sp.sql("assay_h as (\n{i}select\n{items}\n{i}from assay_hr\n)", i=i, items=",\n".join(items)),
        ]
        if self.rule_columns:
            rules = ",\n".join(
                sp.sql("{i}{i}{e} as {c}", i=i, c=c, e=num(sp.sql("max(case when f.rule = {} then f.rows_failed end)",
                                                                  sp_string(sp, r))))
                for r, c in self.rule_columns)
            out.append(sp.sql("assay_hf as (\n{i}select\n{rules}\n{i}from {m} as f\n{i}{j} join assay_hr as r on "
                              "f.run_id = r.run_id and r.n = 1\n)", i=i, rules=rules, m=MART_CTE, j=sp.kw("inner")))
        return out

    def outer(self) -> list[tuple[str, str]]:
        """What the final select reads from the history's rows, as (expr, name)."""
        items = [(f"h.{c}", c) for c in self.run_columns().values()]
        return items + [(f"hf.{c}", c) for _r, c in self.rule_columns]

    def joins(self) -> list[str]:
        sp = self.sp
        out = [sp.sql("{} join assay_h as h", sp.kw("cross"))]
        if self.rule_columns:
            out.append(sp.sql("{} join assay_hf as hf", sp.kw("cross")))
        return out


def sp_string(sp: Spelling, value: str) -> str:
    """A string literal cast to text, so every engine compares it as one (PostgreSQL's unknown)."""
    return sp.string(value)
