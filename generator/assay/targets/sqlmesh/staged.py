"""The SQLMesh staged model of an entity: the staged relation under a MODEL block with its audits.

The relation itself (extract, delivery rank, dedupe, probes, judgement, route) is decided once in
assay.lower.staged; this module adds only what is SQLMesh's: the MODEL block, its kind and the
audits that stop a run before the entity is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...ir.model import Entity, Project
from ...lower.audits import bronze_audits as bronze_audits_of, bronze_count, ranking_mappings, staged_audits as staged_audits_of
from ...lower.mart import counts_recorded_when_stopped
from ...lower.staged import BRONZE_SEEN, staged_query, staged_relation
from . import naming
from .checks import THIS, staged_tail
from .mart import stopped_counts_recorder
from .model_errors import watched
from .modelblock import audit_call, model_block
from .project_files import bronze_audits
from .spelling import SqlmeshSpelling

#: The staged column naming the `fail` rules a row broke, read by the audits and their recorder.
FAILED_RULES = "_failed_rules"


def fail_rules(entity: Entity) -> list[str]:
    """The `fail` rules the staged model audits, in the order the audits run (lower.audits): the
    same list names the audits and what their recorder records (decision 0932)."""
    return [a.rule for a in staged_audits_of(entity, audits_a_candidate=False) if a.rule is not None]


@dataclass(frozen=True)
class Stop:
    """One blocking audit of the staged model: its call in the MODEL block, the query it runs over
    ``@this_model``, and whether a build it stops still records the entity's counts (decided in
    assay.lower.mart, decision 1143)."""

    call: str
    query: str
    records: bool


def stops(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[Stop]:
    """The staged model's blocking audits, in the order they run: the bronze relations' ingestion
    metadata, `fail` rules over the pre-route rows, and key uniqueness among the rows about to be
    kept."""
    out = []
    lowered = {b.source: b for b in bronze_audits_of(project)}
    for source in sorted({m.source for m in entity.mappings}):
        if not lowered[source].ingestion_metadata:
            continue
        records = counts_recorded_when_stopped(lowered[source])
        bronze = naming.bronze(project, source)
        ranked = ranking_mappings(entity, source)
        if ranked:  # this model ranks the deliveries (0412)
            mappings = "(" + ", ".join(low.lit(m) for m in ranked) + ")"
            out.append(Stop(audit_call("assay_ingestion_metadata", source=bronze, ranked_mappings=mappings),
                            f"@assay_ingestion_metadata_violations({bronze}, {THIS}, {mappings})", records))
        else:
            out.append(Stop(audit_call("assay_ingestion_metadata", source=bronze),
                            f"@assay_ingestion_metadata_violations({bronze})", records))
    # SQLMesh writes the entity's table before its audits run: the key is judged here (lower.audits)
    for audit in staged_audits_of(entity, audits_a_candidate=False):
        if audit.rule is not None:
            rule = low.lit(audit.rule)
            out.append(Stop(audit_call("assay_fail_rule", rule_name=rule, flags_column=FAILED_RULES),
                            f"@assay_fail_rule_violations({THIS}, {rule}, {FAILED_RULES})",
                            counts_recorded_when_stopped(audit)))
        elif audit.key:
            keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
            out.append(Stop(audit_call("assay_key_unique", columns=keys, kept_only="TRUE"),
                            f"@assay_key_uniqueness_violations({THIS}, {keys}, TRUE)",
                            counts_recorded_when_stopped(audit)))
    return out


def staged_audits(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """Audits that stop a run before the entity is rewritten (`stops`), each bronze relation's
    non-blocking freshness audits after its ingestion audit."""
    audits, blocking = [], iter(stops(entity, project, low))
    per_source = bronze_audits(project)
    for source in sorted({m.source for m in entity.mappings}):
        for name, args in per_source[source]:
            audits.append(next(blocking).call if name == "assay_ingestion_metadata"
                          else audit_call(name, source=naming.bronze(project, source), **args))
    return audits + [stop.call for stop in blocking]


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
    # the entity's counts of a build the key audit alone stops (1143): its mart part is skipped
    counts = stopped_counts_recorder(entity, project, low, [(s.query, s.records) for s in stops(entity, project, low)])
    if counts:
        tail = (tail.rstrip().rstrip(";") + ";\n\n" if tail else "") + counts + ";\n"
    if tail:
        # a build the audits below stop is recorded here (0932), with the entity's checks when
        # the key audit stops it (0921)
        query = query.rstrip().rstrip(";") + ";\n\n" + tail
    return "\n".join([header, block, "", watched(entity, naming.staged(project, entity), low, query)])
