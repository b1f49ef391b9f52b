"""gold.mart_data_quality's query: one accounting row per entity and one row per rule, per run.

Only rows_failed is a fact about a rule; the other counts describe the entity's population, so
rule rows carry zero there and sums stay additive at any grouping. Counts come from the staged
relations in one aggregate per entity. A target adds only its block (dbt config, SQLMesh MODEL).
"""

from __future__ import annotations

from ..ir.model import Entity, Project
from .spelling import Spelling, Sql


def _aggregate(sp: Spelling, e: Entity) -> str:
    i = sp.indent
    agg = [
        sp.sql("{}sum(case when _dedupe_rank = 1 then 1 else 0 end) as rows_evaluated", i * 2),
        sp.sql("{}sum(case when _route in ('quarantined', 'failed') then 1 else 0 end) as rows_quarantined", i * 2),
        sp.sql("{}sum(case when _route = 'deduped' then 1 else 0 end) as rows_deduped", i * 2),
    ]
    agg += [
        sp.sql("{}sum(case when {} then 1 else 0 end) as f__{}", i * 2, sp.call("flags_contain", Sql("_failed_rules"), r.name), r.name)
        for r in e.rules
    ]
    return sp.sql("agg__{n} as (\n{i}select\n{a}\n{i}from {src}\n)", n=e.name, i=i, a=",\n".join(agg), src=sp.staged(e))


def _rows(sp: Spelling, e: Entity) -> list[str]:
    alias = f"agg__{e.name}"
    null_txt = sp.cast(sp.kw("null"), "string", False)

    def text(literal: str) -> str:
        # A bare literal's type is the engine's guess (PostgreSQL stores `text`, SQLMesh infers
        # VARCHAR); the forward-only mart would then be migrated column by column on the next plan
        # that changes an entity, which PostgreSQL refuses under the virtual layer's view.
        return sp.cast(literal, "string", False)

    def row(mapping, rule, disposition, evaluated, failed, quarantined, deduped):
        return sp.sql(
            "{i}select {e} as entity, {m} as mapping, {r} as rule, {d} as disposition, "
            "{ev} as rows_evaluated, {f} as rows_failed, {q} as rows_quarantined, {dd} as rows_deduped from {a}",
            i=sp.indent, e=text(sp.string(e.name)), m=mapping, r=text(rule), d=text(disposition), a=alias,
            ev=sp.cast(evaluated, "int", False), f=sp.cast(failed, "int", False),
            q=sp.cast(quarantined, "int", False), dd=sp.cast(deduped, "int", False),
        )

    coalesce = sp.kw("coalesce")
    rows = [row(null_txt, "'(entity)'", "'(entity)'", f"{coalesce}(rows_evaluated, 0)", "0", f"{coalesce}(rows_quarantined, 0)", f"{coalesce}(rows_deduped, 0)")]
    for r in e.rules:
        mapping = text(sp.string(r.mapping)) if r.mapping else null_txt
        rows.append(row(mapping, sp.string(r.name), sp.string(r.disposition), "0", f"{coalesce}(f__{r.name}, 0)", "0", "0"))
    return rows


def mart_query(sp: Spelling, project: Project) -> str:
    """The mart's query text, from `with` to the final `from counts`."""
    i = sp.indent
    ctes = [_aggregate(sp, e) for e in project.entities]
    selects = [s for e in project.entities for s in _rows(sp, e)]
    run = sp.call("run_timestamp")
    return "\n".join(
        [
            sp.sql("with ") + ",\n\n".join(ctes) + ",",
            "",
            sp.sql("counts as ("),
            sp.sql("\n{}union all\n", i).join(selects),
            ")",
            "",
            sp.sql("select"),
            f"{i}counts.*,",
            sp.sql("{}{} as run_id,", i, sp.run_id()),
            sp.sql("{}{} as run_date,", i, sp.cast(run, "date", False)),
            sp.sql("{}{} as run_started_at", i, run),
            sp.sql("from counts"),
            "",
        ]
    )
