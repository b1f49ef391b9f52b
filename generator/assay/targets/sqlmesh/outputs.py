"""The entity, type-2 history and reject models derived from the staged model.

Order of one entity's chain: staged -> entity (or __current -> SCD type 2) -> reject. The reject
model runs last so that its conservation audit can read the finished entity (SQLMesh resolves
references to a model's parents inside its audits, hence the explicit `depends_on`), and so that a
rule change applied by `sqlmesh plan` between two intervals, which rebuilds staged and entity but
leaves the forward-only reject model for the next interval, never blocks the plan on a reject
table that has not caught up yet.
"""

from __future__ import annotations

from ...ir.model import Entity, Project
from ...lower.outputs import diverted_select, kept_query, reject_id
from . import naming
from .spelling import SqlmeshSpelling
from .modelblock import audit_call, model_block
from .project_files import flag_audit_name
from .checks import audit_names, model_tail

INDENT = "  "
# Flag-array column type per model dialect (the macros' flags_type, which this package cannot
# import without importing SQLMesh).
FLAGS_TYPE = {
    "duckdb": "TEXT[]",
    "postgres": "TEXT[]",
    "snowflake": "ARRAY",
    "bigquery": "ARRAY<STRING>",
    "spark": "ARRAY<STRING>",
    "databricks": "ARRAY<STRING>",
    "trino": "ARRAY(VARCHAR)",
}


def _grants(entity: Entity, low: SqlmeshSpelling) -> str | None:
    if not entity.grants_select:
        return None
    return "('select' = [" + ", ".join(low.lit(g) for g in entity.grants_select) + "])"


def _column_descriptions(entity: Entity, low: SqlmeshSpelling) -> list[str]:
    out = []
    for c in entity.columns:
        parts = [c.description] if c.description else []
        if c.classification:
            parts.append(f"classification: {c.classification}")
        if parts:
            out.append(f"{low.qi(c.name)} = {low.lit('; '.join(parts))}")
    return out


def mappings_arg(entity: Entity, project: Project, low: SqlmeshSpelling) -> str:
    items = [f"({low.lit(m.name)}, {low.lit(m.source)}, {naming.bronze(project, m.source)})" for m in entity.mappings]
    return "(" + ", ".join(items) + ")"


def _conservation(entity: Entity, project: Project, low: SqlmeshSpelling, on_reject: bool) -> str:
    staged = naming.staged(project, entity)
    if on_reject:
        return audit_call("assay_conservation", entity=naming.admitted(project, entity), staged=staged, mappings=mappings_arg(entity, project, low))
    if not all({"_source_row_id", "_load_id"} <= set(m.bronze_columns) for m in entity.mappings):
        # No delivery identity to match bronze rows by (an entity that needs no ingestion
        # metadata): the law is checked from counts.
        return audit_call("assay_conservation_counts", staged=staged, mappings=mappings_arg(entity, project, low))
    return audit_call("assay_conservation_no_reject", staged=staged, mappings=mappings_arg(entity, project, low))


def entity_audits(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """Blocking audits on the finished rows, non-blocking ones for the flags they carry."""
    audits = []
    flags_col = "_quality_flags" if entity.opted_in else None
    for r in entity.rules:
        if r.disposition == "fail" and flags_col:
            audits.append(audit_call("assay_fail_rule", rule_name=low.lit(r.name)))
    if not entity.dedupe:
        audits.append(audit_call("assay_key_unique", columns="(" + ", ".join(low.qi(k) for k in entity.key) + ")"))
    if not entity.has_reject:
        audits.append(_conservation(entity, project, low, on_reject=False))
    for r in entity.rules:
        if r.disposition == "flag" and flags_col:
            audits.append(flag_audit_name(entity, r))  # its own audit: SQLMesh's warning names the rule
    return audits


def entity_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The published entity (type 1), or the `__current` kept rows a type-2 history versions.

    FULL, rebuilt from all of bronze every run: a corrupt newer delivery must evict an older
    clean row, which a merge by key would keep.
    """
    type2 = entity.scd == "type2"
    name = naming.current(project, entity) if type2 else naming.entity_model(project, entity)
    description = f"{entity.name}: {entity.grain}" if not type2 else f"Kept rows of {entity.name} in this build; the SCD type 2 model versions them."
    block = model_block(
        name=name,
        kind="FULL",
        dialect=low.dialect,
        owner=low.lit(entity.owner) if entity.owner else None,
        description=low.lit(entity.description or description) if not type2 else low.lit(description),
        tags="(assay)",
        grants=None if type2 else _grants(entity, low),
        column_descriptions=_column_descriptions(entity, low),
        audits=entity_audits(entity, project, low) + audit_names(entity),
    )
    query = kept_query(low, entity)
    tail = model_tail(entity, project, low)
    if tail:
        # Checks (000, 002): recorded by post-statements, judged by one inline audit each.
        query = query.rstrip().rstrip(";") + ";\n\n" + tail
    return "\n".join([header, block, "", query])


def scd2_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """Type-2 history: SQLMesh owns the validity interval, so assay only feeds the kept rows."""
    keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
    check = "(" + ", ".join(low.qi(c.name) for c in entity.columns) + ")"
    block = model_block(
        name=naming.entity_model(project, entity),
        # A first version is valid from the run that saw it (as a dbt snapshot's), not from 1970.
        kind=f"SCD_TYPE_2_BY_COLUMN (unique_key {keys}, columns {check}, execution_time_as_valid_from TRUE)",
        dialect=low.dialect,
        owner=low.lit(entity.owner) if entity.owner else None,
        description=low.lit(entity.description or f"{entity.name}: {entity.grain}"),
        tags="(assay)",
        grants=_grants(entity, low),
        column_descriptions=_column_descriptions(entity, low),
    )
    return "\n".join([header, block, "", "SELECT *", f"FROM {naming.current(project, entity)}", ""])


def _reject_columns(low: SqlmeshSpelling) -> list[str]:
    flags = FLAGS_TYPE.get(low.dialect, "TEXT")
    cols = [
        ("reject_id", "TEXT"),
        ("entity", "TEXT"),
        ("mapping", "TEXT"),
        ("source_relation", "TEXT"),
        ("_source_row_id", "TEXT"),
        ("_load_id", "TEXT"),
        ("first_seen", "TIMESTAMP"),
        ("last_seen", "TIMESTAMP"),
        ("failed_rules", flags),
        ("disposition", "TEXT"),
        ("key_values", "TEXT"),
        ("raw", "TEXT"),
        ("resolved_at", "TIMESTAMP"),
        ("resolution", "TEXT"),
        ("last_evaluated_at", "TIMESTAMP"),
    ]
    return [f"{n} {t}" for n, t in cols]


CARRIED = ("reject_id", "entity", "mapping", "source_relation", "_source_row_id", "_load_id")


def reject_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The reject table: merged on reject_id, forward-only so rule changes never rebuild it.

    The query reads the table's previous state (a self-reference, hence the declared columns:
    SQLMesh creates the table empty before the first run), so first_seen stays where it was,
    last_seen follows the delivery, rules are re-stamped, and an open reject row whose bronze row
    is now kept or deduped is resolved rather than deleted. A source row delivered several times
    speaks through its latest delivery only (decision 0014), so each reject_id appears once.
    """
    staged = naming.staged(project, entity)
    this = naming.reject(project, entity)
    diverted, routes = [], []
    for m in entity.mappings:
        diverted.append(diverted_select(low, entity, m))
        rid = reject_id(low, m)
        # Only the latest delivery of a source row speaks for it: a superseded one never resolves.
        routes.append(
            f"{INDENT}SELECT {rid} AS reject_id, s._route FROM {staged} AS s WHERE s._mapping = {low.lit(m.name)} AND s._delivery_rank = 1"
        )
    ts_null = low.cast("NULL", "timestamp", False)
    txt_null = low.cast("NULL", "string", False)
    now = "@assay_run_timestamp()"
    block = model_block(
        name=this,
        kind="INCREMENTAL_BY_UNIQUE_KEY (unique_key reject_id, forward_only TRUE)",
        dialect=low.dialect,
        owner=low.lit(entity.owner) if entity.owner else None,
        description=low.lit(f"Rows of {entity.name} diverted by quality rules, with their raw payload, for replay (retention {entity.retention})."),
        tags="(assay, assay_reject)",
        depends_on=f"({naming.admitted(project, entity)})",
        columns=_reject_columns(low),
        audits=[_conservation(entity, project, low, on_reject=True)],
    )
    lines = [
        header,
        block,
        "",
        "WITH diverted AS (",
        f"\n{INDENT}UNION ALL\n".join(diverted),
        "),",
        "",
        "prior AS (",
        f"{INDENT}SELECT * FROM {this}",
        "),",
        "",
        "routes AS (",
        f"\n{INDENT}UNION ALL\n".join(routes),
        ")",
        "",
        "-- still or newly diverted: first_seen is sticky, last_seen follows the delivery, rules are re-stamped",
        "SELECT",
        ",\n".join(f"{INDENT}d.{c}" for c in CARRIED) + ",",
        f"{INDENT}COALESCE(p.first_seen, d._ingested_at) AS first_seen,",
        f"{INDENT}d._ingested_at AS last_seen,",
        f"{INDENT}d.failed_rules,",
        f"{INDENT}d.disposition,",
        f"{INDENT}d.key_values,",
        f"{INDENT}d.raw,",
        f"{INDENT}{ts_null} AS resolved_at,",
        f"{INDENT}{txt_null} AS resolution,",
        f"{INDENT}{now} AS last_evaluated_at",
        "FROM diverted AS d",
        "LEFT JOIN prior AS p ON p.reject_id = d.reject_id",
        "",
        "UNION ALL",
        "",
        "-- open rejects this build admitted or deduped: resolved, never deleted",
        "SELECT",
        ",\n".join(f"{INDENT}p.{c}" for c in CARRIED) + ",",
        f"{INDENT}p.first_seen,",
        f"{INDENT}p.last_seen,",
        f"{INDENT}p.failed_rules,",
        f"{INDENT}p.disposition,",
        f"{INDENT}p.key_values,",
        f"{INDENT}p.raw,",
        f"{INDENT}{now} AS resolved_at,",
        f"{INDENT}CASE WHEN r._route = 'deduped' THEN 'deduped' ELSE 'admitted' END AS resolution,",
        f"{INDENT}{now} AS last_evaluated_at",
        "FROM prior AS p",
        "INNER JOIN routes AS r ON r.reject_id = p.reject_id",
        "WHERE p.resolved_at IS NULL AND r._route IN ('kept', 'deduped')",
        "",
    ]
    return "\n".join(lines)
