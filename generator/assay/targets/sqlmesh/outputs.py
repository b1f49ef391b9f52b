"""The entity, type-2 history and reject models derived from the staged model.

Order of one entity's chain: staged -> entity (or __current -> SCD type 2) -> reject. The reject
model runs last so that its conservation audit can read the finished entity (SQLMesh resolves
references to a model's parents inside its audits, hence the explicit `depends_on`), and so that a
rule change applied by `sqlmesh plan` between two intervals, which rebuilds staged and entity but
leaves the forward-only reject model for the next interval, never blocks the plan on a reject
table that has not caught up yet.
"""

from __future__ import annotations

import re

from ...ir.model import Entity, Project
from ...lower.audits import FLAG_PREFIX, Audit, Audited, entity_audits as lowered_audits
from ...lower.outputs import kept_query, versioned_query
from ...lower.rejects import COLUMNS as REJECT_COLUMNS, Prior, reject_query
from . import naming
from .spelling import SqlmeshSpelling
from .modelblock import model_block
from .project_files import flag_audit_name
from .checks import audit_names, model_tail

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


def _lowered(entity: Entity, project: Project, low: SqlmeshSpelling) -> tuple[list[Audit], list[Audit]]:
    """The entity's audits (lower.audits) split by the model that runs them: the entity model, and
    the reject model, which holds this build's reject rows only once it has run after the entity."""
    if not entity.has_reject:
        return lowered_audits(low, entity, Audited("@this_model")), []
    on_entity = [a for a in lowered_audits(low, entity, Audited("@this_model")) if a.name != "conservation"]
    on_reject = [a for a in lowered_audits(low, entity, Audited(naming.admitted(project, entity), "@this_model")) if a.name == "conservation"]
    return on_entity, on_reject


def entity_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The published entity (type 1), or the `__current` kept rows a type-2 history versions.

    FULL, rebuilt from all of bronze every run: a corrupt newer delivery must evict an older
    clean row, which a merge by key would keep.
    """
    type2 = entity.scd == "type2"
    audits = _lowered(entity, project, low)[0]
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
        audits=[_audit_name(entity, a) for a in audits] + audit_names(entity),
    )
    query = kept_query(low, entity)
    tail = model_tail(entity, project, low)
    if tail:
        # Checks (000, 002): recorded by post-statements, judged by one inline audit each.
        query = query.rstrip().rstrip(";") + ";\n\n" + tail
    if audits:
        query = query.rstrip().rstrip(";") + ";\n\n" + _inline(entity, audits, low)
    return "\n".join([header, block, "", query])


def scd2_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """Type-2 history: SQLMesh owns the validity interval, so assay only feeds the kept rows."""
    keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
    check = "(" + ", ".join(low.qi(c.name) for c in entity.columns) + ")"
    block = model_block(
        name=naming.entity_model(project, entity),
        # A first version is valid from the run that saw it (as a dbt snapshot's), not from 1970.
        # A key this build no longer admits has no current version (decision 0415).
        kind=f"SCD_TYPE_2_BY_COLUMN (unique_key {keys}, columns {check}, execution_time_as_valid_from TRUE, "
             "invalidate_hard_deletes TRUE)",
        dialect=low.dialect,
        owner=low.lit(entity.owner) if entity.owner else None,
        description=low.lit(entity.description or f"{entity.name}: {entity.grain}"),
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

    The rows are `lower.rejects.reject_query`'s, resolution included: the query reads the
    table's previous state (a self-reference, hence the declared columns: SQLMesh creates the
    table empty before the first run), and the model runs after the entity it depends on.
    """
    this = naming.reject(project, entity)
    audits = _lowered(entity, project, low)[1]
    block = model_block(
        name=this,
        kind="INCREMENTAL_BY_UNIQUE_KEY (unique_key reject_id, forward_only TRUE)",
        dialect=low.dialect,
        owner=low.lit(entity.owner) if entity.owner else None,
        description=low.lit(f"Rows of {entity.name} diverted by quality rules, with their raw payload, for replay (retention {entity.retention})."),
        tags="(assay, assay_reject)",
        depends_on=f"({naming.admitted(project, entity)})",
        columns=_reject_columns(low),
        audits=[_audit_name(entity, a) for a in audits],
    )
    query = reject_query(low, entity, Prior(this), resolve=True).rstrip("\n") + ";\n\n" + _inline(entity, audits, low)
    return "\n".join([header, block, "", query])
