"""Project-level files: the audit definitions, the macro registration hook, bronze external models."""

from __future__ import annotations

import re
from typing import Optional

import yaml

from ...ir.model import Entity, Project
from ...lower.audits import bronze_audits as lowered_bronze_audits
from . import naming
from .spelling import SqlmeshSpelling

# (name, blocking, defaults, body). Each body is one call of an assay_sqlmesh macro that returns
# the violating rows; the model that attaches an audit may still override `blocking`. These are
# the audits of staged models, bronze and cross-entity checks; an entity's own audits are inline
# in its models, their queries lowered once for both targets (assay.lower.audits).
AUDITS = (
    ("assay_ingestion_metadata", True, "ranked_mappings = NULL",
     "@assay_ingestion_metadata_violations(@source, @this_model, @ranked_mappings)"),
    ("assay_fail_rule", True, "flags_column = _quality_flags", "@assay_fail_rule_violations(@this_model, @rule_name, @flags_column)"),
    ("assay_key_unique", True, "kept_only = FALSE", "@assay_key_uniqueness_violations(@this_model, @columns, @kept_only)"),
    ("assay_freshness_warn", False, None, "@assay_freshness_violations(@source, @max_age_hours)"),
    ("assay_freshness_error", False, None, "@assay_freshness_violations(@source, @max_age_hours)"),
    ("assay_coverage", True, "min_children = 1", "@assay_coverage_violations(@parent, @child, @pairs, @min_children)"),
    (
        "assay_reconcile",
        True,
        None,
        "@assay_reconcile_violations(@left_relation, @left_column, @left_agg, @left_by, "
        "@right_relation, @right_column, @right_agg, @right_by, @tolerance)",
    ),
)


def flag_audit_name(entity: Entity, rule_name: str) -> str:
    """The non-blocking audit of one flag rule, named after it: SQLMesh's warning names only the
    audit (`'<audit>' audit error: N rows failed`), so a shared audit would hide which rule fired."""
    return "assay_flag__" + re.sub(r"[^a-z0-9_]", "_", f"{entity.name}__{rule_name}".lower())


def audits_sql(low: SqlmeshSpelling, header: str, project: Optional[Project] = None) -> str:
    """audits/assay.sql: one AUDIT block per reusable audit. An entity's own audits (lower.audits)
    are inline in its models; `project` is accepted for callers that pass it."""
    blocks = [header]
    for name, blocking, defaults, body in AUDITS:
        props = [f"name {name}", f"dialect {low.dialect}", f"blocking {'TRUE' if blocking else 'FALSE'}"]
        if defaults:
            props.append(f"defaults ({defaults})")
        # An audit body must be a query; the macro's query sits in it as a subquery.
        query = f"SELECT * FROM ({body}) AS assay_violations"
        blocks.append("AUDIT (\n  " + ",\n  ".join(props) + "\n);\n" + query + ";\n")
    return "\n".join(blocks)


def macros_py(header: str) -> str:
    """macros/assay_macros.py: re-registers the assay_sqlmesh macros on every project load."""
    return f'''{header}
"""Registers the assay_sqlmesh macros with this project each time SQLMesh loads it.

SQLMesh resets its macro registry around every load and re-imports this file, but the
assay_sqlmesh package is imported once per process, so its @macro() decorators would run for
the first Context only. register() puts every macro back, so a second Context works too.
"""

from assay_sqlmesh import register

register()
'''


def bronze_audits(project: Project) -> dict[str, list[tuple[str, dict]]]:
    """Per bronze relation: the audits that read it (decided in assay.lower.audits), as SQLMesh
    audit calls.

    SQLMesh 0.236 builds an external model's Python environment from the built-in macros only,
    so an audit on the external model cannot call assay_sqlmesh. These audits read the bronze
    relation but are attached to every staged model that reads it, which runs them before
    anything downstream: a blocking failure still stops the entity from being rebuilt.
    """
    out = {}
    for b in lowered_bronze_audits(project):
        audits = [("assay_ingestion_metadata", {})] if b.ingestion_metadata else []
        for key, value in (("warn", b.warn_after), ("error", b.error_after)):
            if value is not None:
                audits.append((f"assay_freshness_{key}", {"max_age_hours": str(value.hours)}))
        out[b.source] = audits
    return out


def external_models(project: Project) -> list[dict]:
    """One external model per bronze relation (lineage and documentation; see bronze_audits)."""
    readers: dict[str, set] = {}
    for e in project.entities:
        for m in e.mappings:
            readers.setdefault(m.source, set()).add(f"{e.name} ({m.name})")
    return [
        {
            "name": naming.bronze(project, source),
            "description": "Bronze relation read by " + ", ".join(sorted(readers[source])) + ".",
        }
        for source in sorted(readers)
    ]


def external_models_yaml(project: Project, header: str) -> str:
    return header + "\n" + yaml.safe_dump(external_models(project), sort_keys=False, allow_unicode=True, width=100)
