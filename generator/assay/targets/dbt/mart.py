"""gold.mart_data_quality for dbt: the mart query (assay.lower.mart) under an append-only config.

Incremental with `full_refresh=false`: every run appends, so history survives rule changes.

dbt skips the mart when any staged model it reads failed a test or was skipped (a `fail` rule's
test on `<entity>__staged`, the ingestion-metadata test, a referential parent set back), which
would drop every entity's row of the run. So the mart's config names, in `meta.assay_mart`, a
macro the generator writes beside it (`assay_mart_rows(entity, staged)`: the mart query of one
entity, reading the staged relation it is given) and each entity's staged node; the package's
on-run-end hook appends the rows of every entity whose staged model the invocation built when
dbt skipped the mart (decision 0942). Either way an entity is recorded only when the invocation
selected its staged model and the model that publishes it (decision 0987). The model itself is the union of the same macro's calls,
one per entity, so the project holds the mart's SQL once.
"""

from __future__ import annotations

from ...ir.model import Project
from ...lower.mart import mart_query
from .naming import audited_name, staged_name
from .spelling import DBT, jstr

ROWS_MACRO = "assay_mart_rows"  # the project's macro of one entity's mart rows (decision 0942)


def _meta(project: Project) -> str:
    """`meta={'assay_mart': ...}`: the rows macro, each entity's staged node and the node that audits
    and publishes it, for the hook."""
    entities = ", ".join("{'entity': " + jstr(e.name) + ", 'node': " + jstr(staged_name(e))
                         + ", 'audited': " + jstr(audited_name(e)) + "}" for e in project.entities)
    return "meta={'assay_mart': {'macro': " + jstr(ROWS_MACRO) + ", 'entities': [" + entities + "]}}"


def mart_sql(project: Project, header: str) -> str:
    """The mart's file text."""
    deps: list[str] = []
    config = (
        "{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, "
        f"schema={jstr(project.schema('gold'))}, tags=['assay'], {_meta(project)}) }}}}"
    )
    if not project.entities:
        return "\n".join([header, config, *deps, "", mart_query(DBT, project)])
    # One query per entity, the macro the on-run-end hook also runs (mart_rows_macro): the mart's
    # SQL is written once in the project, the model reading each entity's staged model by ref. Each
    # is recorded only when this invocation built the entity (decision 0987): a selection without it
    # judged nothing, and its row would claim a run that did not happen.
    parts = [f"select * from ({{{{ {ROWS_MACRO}({jstr(e.name)}, ref({jstr(staged_name(e))})) }}}}) as assay_mart_{n}\n"
             f"where {{{{ assay.mart_judged({jstr(staged_name(e))}, {jstr(audited_name(e))}) }}}}"
             for n, e in enumerate(project.entities)]
    return "\n".join([header, config, *deps, "", "\nunion all\n".join(parts), ""])


def mart_rows_macro(project: Project, header: str) -> str:
    """`assay_mart_rows(entity, staged)`: the mart's rows of one entity, counted from `staged` (a
    relation), as the mart model counts them from the entity's staged model. Run by the package's
    on-run-end hook (`assay.record_stopped_builds`) only when dbt skipped the mart (decision 0942)."""
    out = [header,
           "{#- The rows gold.mart_data_quality records for one entity in this run, counted from `staged`, its",
           "    staged relation: the mart model's query of that entity alone. The assay package's on-run-end hook",
           "    runs it for each entity whose staged model this invocation built when dbt skipped the mart",
           "    (decision 0942). -#}",
           f"{{% macro {ROWS_MACRO}(entity, staged) %}}"]
    for n, e in enumerate(project.entities):
        query = mart_query(DBT, project, (e,)).replace(DBT.staged(e), "{{ staged }}")
        out.append(("{%- if " if n == 0 else "{%- elif ") + f"entity == {jstr(e.name)} %}}")
        out.append(query.rstrip("\n"))
    if project.entities:
        out.append("{%- endif %}")
    out.append("{% endmacro %}")
    return "\n".join(out) + "\n"
