"""The entity, type-2 history and reject models derived from the staged model.

Order of one entity's chain: staged -> reject -> entity (or __current -> SCD type 2). The reject
model reads only the staged model and its own previous state; the model evaluated with the entity
on every plan and run (the entity, or `__current` for type 2: both `FULL`) declares `depends_on`
its reject model and carries the conservation audit, which reads the reject rows this evaluation
wrote (decision 0939). So SQLMesh cannot publish an entity whose conservation it did not judge: a
plan that evaluates the entity without its forward-only reject model (a development range plan,
decision 0938; a rule change planned inside an interval the last run already processed) is
judged against the reject table as it stands, and stopped by the audit when rows the entity no
longer admits are in no table.
"""

from __future__ import annotations

import re

from ...ir.model import Entity, Project
from ...lower.audits import CONSERVATION, FLAG_PREFIX, Audit, Audited, entity_audits as lowered_audits
from ...lower.check_reads import check_dependencies
from ...lower.outputs import kept_query, versioned_query
from ...lower.rejects import COLUMNS as REJECT_COLUMNS, Prior, reject_query
from . import naming
from .spelling import SqlmeshSpelling
from .modelblock import model_block
from .model_errors import watched
from .project_files import flag_audit_name
from .checks import INDENT, _indent, audit_names, inline_audits, post_statements, results_relation

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
        if c.asserts:  # alerts recorded as column metadata (docs/spec.md)
            parts.append("assert: " + ", ".join(f"{k} {list(v) if isinstance(v, tuple) else v}" for k, v in c.asserts))
        if parts:
            out.append(f"{low.qi(c.name)} = {low.prop('; '.join(parts))}")
    return out


def _audit_name(entity: Entity, audit: Audit) -> str:
    """The SQLMesh name of a lowered audit: `assay_<name>`, a flag rule's its own (decision 0933)."""
    if audit.name.startswith(FLAG_PREFIX):
        return flag_audit_name(entity, audit.name[len(FLAG_PREFIX):])
    return "assay_" + re.sub(r"[^a-z0-9_]", "_", audit.name.lower())


def _inline(entity: Entity, audits: list[Audit], low: SqlmeshSpelling) -> str:
    """The model file's AUDIT blocks (inline audits: each query is the lowered one, unchanged)."""
    blocks = []
    for a in audits:
        props = [f"name {_audit_name(entity, a)}", f"dialect {low.dialect}", f"blocking {'TRUE' if a.blocking else 'FALSE'}"]
        blocks.append("AUDIT (\n  " + ",\n  ".join(props) + "\n);\n" + a.sql.rstrip("\n") + ";\n")
    return "\n".join(blocks)


def _lowered(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[Audit]:
    """The entity's audits (lower.audits), all run by the model evaluated with the entity on every
    plan and run (the entity, `__current` for type 2), the conservation law included: it reads
    the reject table this evaluation's reject model wrote, which runs before it (decision 0939)."""
    reject = naming.reject(project, entity) if entity.has_reject else None
    return lowered_audits(low, entity, Audited("@this_model", reject, bronze_seen=True))


def _conservation_recorder(entity: Entity, project: Project, low: SqlmeshSpelling, audit: Audit) -> str:
    """The post-statement recording a build the conservation audit is about to stop, over the
    audit's own query (decision 0939); it stops a development plan where SQLMesh would run the
    audit as non-blocking (`assay_record_conservation_stop`)."""
    return "\n".join([
        "@assay_record_conservation_stop(",
        f"{INDENT}table_name := {low.string(entity.name)},",
        f"{INDENT}results := {low.string(results_relation(project))},",
        f"{INDENT}violations := (",
        _indent(audit.sql.strip().rstrip(";"), INDENT * 2),
        f"{INDENT})",
        ")",
    ])


def _depends_on(entity: Entity, project: Project, dialect: str) -> str | None:
    """The models the entity's own needs name beside those its query reads: the reject model
    (the conservation audit reads the reject rows it wrote) and every entity a SQL check file of it
    joins (its check reads that entity as built in this plan or run: decision 0974)."""
    models = [naming.reject(project, entity)] if entity.has_reject else []
    models += [naming.entity_model(project, project.entity(n), dialect) for n in check_dependencies(entity, project)]
    return f"({', '.join(models)})" if models else None


def entity_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The published entity (type 1), or the `__current` kept rows a type-2 history versions.

    FULL, rebuilt from all of bronze every run: a corrupt newer delivery must evict an older
    clean row, which a merge by key would keep.
    """
    type2 = entity.scd == "type2"
    audits = _lowered(entity, project, low)
    name = naming.current(project, entity) if type2 else naming.entity_model(project, entity, low.dialect)
    description = f"{entity.name}: {entity.grain}" if not type2 else f"Kept rows of {entity.name} in this build; the SCD type 2 model versions them."
    block = model_block(
        name=name,
        kind="FULL",
        dialect=low.dialect,
        owner=low.prop(entity.owner) if entity.owner else None,
        description=low.prop(entity.description or description) if not type2 else low.prop(description),
        tags="(assay)",
        grants=None if type2 else _grants(entity, low),
        depends_on=_depends_on(entity, project, low.dialect),
        column_descriptions=_column_descriptions(entity, low),
        audits=[_audit_name(entity, a) for a in audits] + audit_names(entity),
    )
    query = kept_query(low, entity)
    conservation = [a for a in audits if a.name == CONSERVATION]
    if conservation:
        # first, as the audit is first: a stopped build names the law before any check
        query = query.rstrip().rstrip(";") + ";\n\n" + _conservation_recorder(entity, project, low, conservation[0]) + ";\n"
    # Checks (000, 002): recorded by post-statements, judged by one inline audit each.
    recorders = post_statements(entity, project, low)
    if recorders:
        query = query.rstrip().rstrip(";") + ";\n\n" + ";\n\n".join(recorders) + ";\n"
    query = watched(entity, name, low, query)
    checks = inline_audits(entity, project, low)
    if checks:
        query = query.rstrip() + "\n\n" + ";\n\n".join(checks) + ";\n"
    if audits:
        query = query.rstrip().rstrip(";") + ";\n\n" + _inline(entity, audits, low)
    return "\n".join([header, block, "", query])


def scd2_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """Type-2 history: SQLMesh owns the validity interval, so assay only feeds the kept rows."""
    keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
    check = "(" + ", ".join(low.qi(c.name) for c in entity.columns) + ")"
    block = model_block(
        name=naming.entity_model(project, entity, low.dialect),
        # A first version is valid from the run that saw it (as a dbt snapshot's), not from 1970.
        # A key this build no longer admits has no current version (decision 0415).
        kind=f"SCD_TYPE_2_BY_COLUMN (unique_key {keys}, columns {check}, execution_time_as_valid_from TRUE, "
             "invalidate_hard_deletes TRUE)",
        dialect=low.dialect,
        owner=low.prop(entity.owner) if entity.owner else None,
        description=low.prop(entity.description or f"{entity.name}: {entity.grain}"),
        tags="(assay)",
        grants=_grants(entity, low),
        column_descriptions=_column_descriptions(entity, low),
    )
    return "\n".join([header, block, "", versioned_query(low, entity, naming.current(project, entity))])


def _reject_columns(low: SqlmeshSpelling) -> list[str]:
    types = {"string": "TEXT", "timestamp": "TIMESTAMP", "flags": FLAGS_TYPE.get(low.dialect, "TEXT")}
    return [f"{n} {types[t]}" for n, t in REJECT_COLUMNS]


def reject_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The reject table: merged on reject_id, forward-only so rule changes never rebuild it.

    The rows are `lower.rejects.reject_query`'s, resolution included: the query reads the staged
    model and the table's previous state (a self-reference, hence the declared columns: SQLMesh
    creates the table empty before the first run). It runs before the entity, whose conservation
    audit reads what it wrote (decision 0939); it has no audit of its own.
    """
    this = naming.reject(project, entity)
    block = model_block(
        name=this,
        kind="INCREMENTAL_BY_UNIQUE_KEY (unique_key reject_id, forward_only TRUE)",
        dialect=low.dialect,
        owner=low.prop(entity.owner) if entity.owner else None,
        description=low.lit(f"Rows of {entity.name} diverted by quality rules, with their raw payload, for replay (retention {entity.retention})."),
        tags="(assay, assay_reject)",
        columns=_reject_columns(low),
    )
    query = reject_query(low, entity, Prior(this), resolve=True)
    return "\n".join([header, block, "", watched(entity, this, low, query)])
