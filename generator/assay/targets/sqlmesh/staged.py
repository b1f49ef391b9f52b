"""The staged model of an entity: extract, transform, dedupe and judge, in one relation.

Both outputs (the entity and its reject table) and the mart derive from this one table, so
bronze is parsed once and every rule is evaluated once. Columns are the dbt target's: the
entity's columns, lineage, `_dedupe_rank`, `_delivery_rank`, `_failed_rules` (all failed rules,
sorted) and `_route` (`kept`, `quarantined`, `failed` or `deduped`). The coercion markers
`_c__<col>` and the per-rule booleans `_r__<rule>` are computed inside the query and not stored.

A source row may be delivered several times (decision 0014): only its latest delivery
(`_delivery_rank = 1`) competes for a key and is judged; the earlier ones are superseded, routed
`deduped`, and have no `_dedupe_rank`.
"""

from __future__ import annotations

from ...ir.model import Entity, Mapping, Project
from . import naming
from .lowering import Lowering
from .modelblock import audit_call, model_block
from .project_files import bronze_audits

INDENT = "  "


def _mapping_select(entity: Entity, mapping: Mapping, project: Project, low: Lowering) -> str:
    # Ingestion metadata is required only where dedupe or quarantine reads it; a mapping that
    # does not name a metadata column gets NULL lineage there rather than a broken query.
    named = set(mapping.bronze_columns)
    cols = [
        f"{low.lit(mapping.name)} AS _mapping",
        f"{low.cast('b._source_row_id' if '_source_row_id' in named else 'NULL', 'string', False)} AS _source_row_id",
        f"{low.cast('b._load_id' if '_load_id' in named else 'NULL', 'string', False)} AS _load_id",
        # an instant: an offset is converted to UTC, so deliveries order by when they happened
        ("@assay_ingestion_timestamp(b._ingested_at)" if "_ingested_at" in named else low.cast("NULL", "timestamp", False))
        + " AS _ingested_at",
    ]
    markers = []
    for column in entity.columns:
        src = mapping.source_for(column.name)
        if src is None:
            cols.append(f"{low.cast('NULL', column.type, False)} AS {low.qi(column.name)}")
            markers.append(f"FALSE AS _c__{column.name}")
            continue
        value, marker = low.field(src, "b", entity.opted_in)
        cols.append(f"{value} AS {low.qi(column.name)}")
        markers.append(f"{marker or 'FALSE'} AS _c__{column.name}")
    body = (",\n" + INDENT * 2).join(cols + markers)
    return f"{INDENT}SELECT\n{INDENT * 2}{body}\n{INDENT}FROM {naming.bronze(project, mapping.source)} AS b"


def _delivery_rank(entity: Entity) -> str:
    """Which delivery of its source row a row is: 1 for the latest, which supersedes the others.

    Only an entity whose bronze carries the ingestion metadata has deliveries to tell apart; a
    row without a `_source_row_id` has no identity and is nobody's re-delivery.
    """
    if not entity.has_ingestion_metadata:
        return "1"
    over = "ROW_NUMBER() OVER (PARTITION BY _mapping, _source_row_id ORDER BY _ingested_at DESC NULLS LAST, _load_id DESC NULLS LAST)"
    return f"CASE WHEN _source_row_id IS NULL THEN 1 ELSE {over} END"


def _rank(entity: Entity, low: Lowering) -> str:
    """The key dedupe among latest deliveries; superseded ones never compete and get no rank."""
    latest = "_delivery_rank = 1"
    if not entity.dedupe:
        return f"CASE WHEN {latest} THEN 1 END"
    keys = [low.qi(k) for k in entity.key]
    # A NULL key part is no identity: such rows never dedupe against each other.
    any_null = " OR ".join(f"{k} IS NULL" for k in keys)
    isolate = f"CASE WHEN {any_null} THEN _mapping || '|' || _source_row_id END"
    order = ", ".join(f"{low.qi(k.column)} DESC NULLS LAST" for k in entity.dedupe)
    return f"CASE WHEN {latest} THEN ROW_NUMBER() OVER (PARTITION BY {latest}, {', '.join(keys)}, {isolate} ORDER BY {order}) END"


def _probes(entity: Entity, project: Project, low: Lowering) -> tuple[list[str], list[str]]:
    """Left joins onto admitted parent rows for referential rules; (join clauses, probe columns)."""
    joins, cols = [], []
    for rule in entity.rules_of_kind("referential"):
        rel = rule.param("relationship")
        parent = project.entity(rule.param("parent"))
        pairs = rule.param("columns")
        alias = f"p_{rel}"
        pk = ", ".join(low.qi(p) for _c, p in pairs)
        # Current versions of a type-2 parent only: the probe never fans out over history.
        current = " WHERE valid_to IS NULL" if parent.scd == "type2" else ""
        sub = f"(SELECT DISTINCT {pk}, TRUE AS _hit FROM {naming.entity_model(project, parent)}{current})"
        on = " AND ".join(f"j.{low.qi(c)} = {alias}.{low.qi(p)}" for c, p in pairs)
        joins.append(f"LEFT JOIN {sub} AS {alias} ON {on}")
        cols.append(f"{alias}._hit AS _probe__{rel}")
    return joins, cols


def _scoped(rule, predicate: str, low: Lowering) -> str:
    """Field rules judge their own mapping's rows; losers of the dedupe and superseded deliveries
    (no `_dedupe_rank`) are never judged."""
    conds = ["_dedupe_rank = 1"]
    if rule.mapping is not None:
        conds.append(f"_mapping = {low.lit(rule.mapping)}")
    return "(" + " AND ".join(conds) + f" AND {predicate})"


def staged_audits(entity: Entity, project: Project, low: Lowering) -> list[str]:
    """Audits that stop a run before the entity is rewritten: the bronze relations' ingestion
    metadata (and their freshness, non-blocking), `fail` rules over the pre-route rows, and key
    uniqueness among the rows about to be kept."""
    audits = []
    per_source = bronze_audits(project)
    for source in sorted({m.source for m in entity.mappings}):
        for name, args in per_source[source]:
            audits.append(audit_call(name, source=naming.bronze(project, source), **args))
    audits += [
        audit_call("assay_fail_rule", rule_name=low.lit(r.name), flags_column="_failed_rules")
        for r in entity.rules
        if r.disposition == "fail"
    ]
    if not entity.dedupe:
        keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
        audits.append(audit_call("assay_key_unique", columns=keys, kept_only="TRUE"))
    return audits


def staged_sql(entity: Entity, project: Project, low: Lowering, header: str) -> str:
    """The staged model's file text."""
    selects = [_mapping_select(entity, m, project, low) for m in entity.mappings]
    joins, probe_cols = _probes(entity, project, low)
    col_types = {c.name: c.type for c in entity.columns}
    rule_cols = [
        f"COALESCE({_scoped(r, low.violation(r, entity, col_types.get(r.column or '')), low)}, FALSE) AS _r__{r.name}"
        for r in entity.rules
    ]
    rewrites = {}
    for r in entity.rules_of_kind("referential"):
        if r.param("on_missing") == "unknown_member":
            fk = r.param("columns")[0][0]
            rewrites[fk] = f"@assay_unknown_member({low.qi(fk)}, _probe__{r.param('relationship')})"
    out_cols = [f"{rewrites[c.name]} AS {low.qi(c.name)}" if c.name in rewrites else low.qi(c.name) for c in entity.columns]
    flags = ", ".join(f"({low.lit(r.name)}, _r__{r.name})" for r in entity.rules)
    fail = " OR ".join(f"_r__{r.name}" for r in entity.rules if r.disposition == "fail") or "FALSE"
    quarantine = " OR ".join(f"_r__{r.name}" for r in entity.rules if r.disposition == "quarantine") or "FALSE"
    kept_cols = [low.qi(c.name) for c in entity.columns] + ["_mapping", "_source_row_id", "_load_id", "_ingested_at", "_dedupe_rank", "_delivery_rank"]
    block = model_block(
        name=naming.staged(project, entity),
        kind="FULL",
        dialect=low.dialect,
        description=low.lit(f"Extracted, deduped and judged rows of {entity.name}; internal to assay."),
        tags="(assay, assay_staged)",
        audits=staged_audits(entity, project, low),
    )
    judged = (
        [f"{INDENT * 2}{c}" for c in out_cols]
        + [f"{INDENT * 2}{c}" for c in ("_mapping", "_source_row_id", "_load_id", "_ingested_at", "_dedupe_rank", "_delivery_rank")]
        + [f"{INDENT * 2}_c__{c.name}" for c in entity.columns]
        + [f"{INDENT * 2}{c}" for c in rule_cols]
    )
    lines = [
        header,
        block,
        "",
        "WITH extracted AS (",
        f"\n{INDENT}UNION ALL\n".join(selects),
        "),",
        "",
        "delivered AS (",
        f"{INDENT}SELECT *, {_delivery_rank(entity)} AS _delivery_rank",
        f"{INDENT}FROM extracted",
        "),",
        "",
        "ranked AS (",
        f"{INDENT}SELECT *, {_rank(entity, low)} AS _dedupe_rank",
        f"{INDENT}FROM delivered",
        "),",
        "",
        "probed AS (",
        f"{INDENT}SELECT j.*" + "".join(f", {c}" for c in probe_cols),
        f"{INDENT}FROM ranked AS j",
        *[f"{INDENT}{j}" for j in joins],
        "),",
        "",
        "judged AS (",
        f"{INDENT}SELECT",
        ",\n".join(judged),
        f"{INDENT}FROM probed",
        ")",
        "",
        "-- markers and per-rule booleans stay inside this query: downstream reads _failed_rules",
        "SELECT",
        *[f"{INDENT}{c}," for c in kept_cols],
        f"{INDENT}@assay_quality_flags({flags}) AS _failed_rules,",
        f"{INDENT}CASE",
        f"{INDENT * 2}WHEN _delivery_rank > 1 THEN 'deduped'",
        f"{INDENT * 2}WHEN _dedupe_rank > 1 THEN 'deduped'",
        f"{INDENT * 2}WHEN {fail} THEN 'failed'",
        f"{INDENT * 2}WHEN {quarantine} THEN 'quarantined'",
        f"{INDENT * 2}ELSE 'kept'",
        f"{INDENT}END AS _route",
        "FROM judged",
        "",
    ]
    return "\n".join(lines)
