"""The SQLMesh staged model of an entity: the staged relation under a MODEL block with its audits.

The relation itself (extract, delivery rank, dedupe, probes, judgement, route) is decided once in
assay.lower.staged; this module adds only what is SQLMesh's: the MODEL block, its kind and the
audits that stop a run before the entity is rewritten.
"""

from __future__ import annotations

from ...ir.model import Entity, Project
from dataclasses import replace

from ...lower.audits import bronze_count, ranking_mappings, staged_audits as staged_audits_of
from ...lower.staged import BRONZE_SEEN, staged_query, staged_relation
from . import naming
from .checks import staged_tail
from .modelblock import audit_call, model_block
from .project_files import bronze_audits
from .spelling import SqlmeshSpelling

#: The staged column naming the `fail` rules a row broke, read by the audits and their recorder.
FAILED_RULES = "_failed_rules"


def fail_rules(entity: Entity) -> list[str]:
    """The `fail` rules the staged model audits, in the order the audits run (lower.audits): the
    same list names the audits and what their recorder records (decision 0932)."""
    return [a.rule for a in staged_audits_of(entity, audits_a_candidate=False) if a.rule is not None]


def staged_audits(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """Audits that stop a run before the entity is rewritten: the bronze relations' ingestion
    metadata (and their freshness, non-blocking), `fail` rules over the pre-route rows, and key
    uniqueness among the rows about to be kept."""
    audits = []
    per_source = bronze_audits(project)
    for source in sorted({m.source for m in entity.mappings}):
        ranked = ranking_mappings(entity, source)
        for name, args in per_source[source]:
            if name == "assay_ingestion_metadata" and ranked:  # this model ranks the deliveries (0412)
                args = {**args, "ranked_mappings": "(" + ", ".join(low.lit(m) for m in ranked) + ")"}
            audits.append(audit_call(name, source=naming.bronze(project, source), **args))
    # SQLMesh writes the entity's table before its audits run: the key is judged here (lower.audits)
    for audit in staged_audits_of(entity, audits_a_candidate=False):
        if audit.rule is not None:
            audits.append(audit_call("assay_fail_rule", rule_name=low.lit(audit.rule), flags_column=FAILED_RULES))
        elif audit.key:
            keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
            audits.append(audit_call("assay_key_unique", columns=keys, kept_only="TRUE"))
    return audits


def staged_sql(entity: Entity, project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The staged model's file text."""
    block = model_block(
        name=naming.staged(project, entity),
        kind="FULL",
        dialect=low.dialect,
        description=low.lit(f"Extracted, deduped and judged rows of {entity.name}; internal to assay."),
        tags="(assay, assay_staged)",
        audits=staged_audits(entity, project, low),
    )
    rel = staged_relation(low, entity, project)
    # SQLMesh retries a failed entity alone, against this table as its failed run wrote it, while
    # bronze may have grown since: the conservation law counts bronze as this query read it (0946)
    rel = replace(rel, kept=[*rel.kept, low.sql("{} as {}", bronze_count(low, entity), BRONZE_SEEN)])
    query = staged_query(low, rel)
    tail = staged_tail(entity, project, low, fail_rules(entity), FAILED_RULES)
    if tail:
        # a build the audits below stop is recorded here (0932), with the entity's checks when
        # the key audit stops it (0921)
        query = query.rstrip().rstrip(";") + ";\n\n" + tail
    return "\n".join([header, block, "", query])
