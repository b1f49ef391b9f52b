"""gold.mart_data_quality: one accounting row per entity and one row per rule, per run.

Only rows_failed is a fact about a rule; the other counts describe the
entity's population, so rule rows carry zero there and sums stay additive at
any grouping. Counts come from the staged tables in one aggregate per entity.
"""

from __future__ import annotations

from ...ir.model import Project
from .spelling import call, jstr, sql_str, sql_type
from .naming import model_name, staged_name

INDENT = "    "


def mart_sql(project: Project, header: str) -> str:
    txt, big = sql_type("string"), sql_type("int")
    ctes, selects = [], []
    for e in project.entities:
        agg = [
            f"{INDENT * 2}sum(case when _dedupe_rank = 1 then 1 else 0 end) as rows_evaluated",
            f"{INDENT * 2}sum(case when _route in ('quarantined', 'failed') then 1 else 0 end) as rows_quarantined",
            f"{INDENT * 2}sum(case when _route = 'deduped' then 1 else 0 end) as rows_deduped",
        ]
        agg += [
            f"{INDENT * 2}sum(case when " + call("flags_contain", '"_failed_rules"', jstr(r.name)) + f" then 1 else 0 end) as f__{r.name}"
            for r in e.rules
        ]
        alias = f"agg__{e.name}"
        ctes.append(f"{alias} as (\n{INDENT}select\n" + ",\n".join(agg) + f"\n{INDENT}from {{{{ ref({jstr(staged_name(e))}) }}}}\n)")

        def row(mapping, rule, disposition, evaluated, failed, quarantined, deduped):
            return (
                f"{INDENT}select {sql_str(e.name)} as entity, {mapping} as mapping, {rule} as rule, {disposition} as disposition, "
                f"cast({evaluated} as {big}) as rows_evaluated, cast({failed} as {big}) as rows_failed, "
                f"cast({quarantined} as {big}) as rows_quarantined, cast({deduped} as {big}) as rows_deduped from {alias}"
            )

        null_txt = f"cast(null as {txt})"
        selects.append(row(null_txt, "'(entity)'", "'(entity)'", "coalesce(rows_evaluated, 0)", "0", "coalesce(rows_quarantined, 0)", "coalesce(rows_deduped, 0)"))
        for r in e.rules:
            mapping = sql_str(r.mapping) if r.mapping else null_txt
            selects.append(row(mapping, sql_str(r.name), sql_str(r.disposition), "0", f"coalesce(f__{r.name}, 0)", "0", "0"))
    deps = [f"-- depends_on: {{{{ ref({jstr(model_name(e))}) }}}}" for e in project.entities if e.scd == "type1"]
    return "\n".join(
        [
            header,
            "{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, "
            f"schema={jstr(project.schema('gold'))}, tags=['assay']) }}}}",
            *deps,
            "",
            "with " + ",\n\n".join(ctes) + ",",
            "",
            "counts as (",
            f"\n{INDENT}union all\n".join(selects),
            ")",
            "",
            "select",
            f"{INDENT}counts.*,",
            f"{INDENT}cast({call('string_literal', 'invocation_id')} as {txt}) as run_id,",
            f"{INDENT}cast({call('run_timestamp')} as {sql_type('date')}) as run_date,",
            f"{INDENT}{call('run_timestamp')} as run_started_at",
            "from counts",
            "",
        ]
    )
