"""The clock of the project's snapshots: UTC on the adapters whose own is the session's (decision 0992)."""

from __future__ import annotations

from ...ir.model import Project

# dbt's snapshot_get_time() on these adapters is `now()` cast to a zoneless timestamp: the session's
# wall clock (DuckDB's TimeZone defaults to the machine's zone, PostgreSQL's `timezone` to the
# server's). Others date versions in UTC already (Snowflake, BigQuery) or store an instant (Spark).
SESSION_CLOCK_ADAPTERS = ("duckdb", "postgres")


def snapshot_clock_macro(project: Project, header: str) -> str | None:
    """The root-project overrides of dbt's `snapshot_get_time` that date a type-2 entity's versions
    (dbt_valid_from, dbt_valid_to, dbt_updated_at) in UTC; none when no entity is type-2. In the root
    project they come before the adapter's own in dbt's dispatch, so they date every snapshot of the
    project, the user's own too. None too when assay.yml leaves the clock to the project's own
    macros (`dbt: {snapshot_clock: project}`, decision 0996): dbt refuses a macro defined twice."""
    if project.snapshot_clock == "project" or not any(e.scd == "type2" for e in project.entities):
        return None
    out = [header,
           "{#- dbt dates snapshot versions with snapshot_get_time(), the session's wall clock on these",
           "    adapters: a type-2 entity's versions are dated in UTC instead, whatever the session's",
           "    time zone, as SQLMesh dates them with its execution time (decision 0992). -#}"]
    for adapter in SESSION_CLOCK_ADAPTERS:
        out.append(f"{{% macro {adapter}__snapshot_get_time() -%}}\n  {{{{ assay.utc_now() }}}}\n{{%- endmacro %}}")
    return "\n".join(out) + "\n"
