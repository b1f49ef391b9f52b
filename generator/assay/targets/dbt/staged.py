"""The staged model of an entity: extract, transform, dedupe and judge, in one relation.

Both outputs (the entity and its reject table) and the mart are derived from
this one table, so bronze is parsed once and every rule is evaluated once.
Columns: the entity's columns, the lineage columns, one coercion marker
`_c__<col>` per column, `_dedupe_rank`, `_delivery_rank`, one boolean
`_r__<rule>` per rule, `_failed_rules` (all failed rules, sorted) and `_route`
(`kept`, `quarantined`, `failed` or `deduped`).

A source row may be delivered several times (decision 0014): only its latest
delivery (`_delivery_rank = 1`) competes for a key and is judged; the earlier
ones are superseded, routed `deduped`, and have no `_dedupe_rank`.
"""

from __future__ import annotations

from ...ir.model import Entity, Project
from .lowering import call, jstr, lower_field, qi, sql_str, sql_type, violation
from .naming import model_name

INDENT = "    "


def _mapping_select(entity: Entity, mapping, project: Project) -> str:
    safe = entity.opted_in
    cols = []
    cols.append(f"{sql_str(mapping.name)} as _mapping")
    # Ingestion metadata is required only where dedupe or quarantine reads it; a mapping that
    # does not name a metadata column gets NULL lineage there rather than a broken query.
    named = set(mapping.bronze_columns)
    string, ts = sql_type("string"), sql_type("timestamp")
    cols.append(f"cast(b._source_row_id as {string}) as _source_row_id" if "_source_row_id" in named else f"cast(null as {string}) as _source_row_id")
    cols.append(f"cast(b._load_id as {string}) as _load_id" if "_load_id" in named else f"cast(null as {string}) as _load_id")
    cols.append(call("ingestion_timestamp", '"b._ingested_at"') + " as _ingested_at" if "_ingested_at" in named else f"cast(null as {ts}) as _ingested_at")
    markers = []
    for column in entity.columns:
        src = mapping.source_for(column.name)
        if src is None:
            cols.append(f"cast(null as {sql_type(column.type)}) as {qi(column.name)}")
            markers.append(f"false as _c__{column.name}")
            continue
        value, marker = lower_field(src, "b", safe)
        cols.append(f"{value} as {qi(column.name)}")
        markers.append(f"{marker or 'false'} as _c__{column.name}")
    body = (",\n" + INDENT * 2).join(cols + markers)
    source = "{{ source('bronze', " + jstr(mapping.source) + ") }}"
    return f"{INDENT}select\n{INDENT * 2}{body}\n{INDENT}from {source} as b"


DELIVERY_ORDER = "_ingested_at desc nulls last, _load_id desc nulls last"
LATEST = "_delivery_rank = 1"


def delivery_rank(entity: Entity) -> str:
    """Which delivery of its source row a row is: 1 for the latest, which supersedes the others.

    Only an entity whose bronze carries the ingestion metadata has deliveries to tell apart; a
    row without a `_source_row_id` has no identity and is nobody's re-delivery.
    """
    if not entity.has_ingestion_metadata:
        return "1"
    over = f"row_number() over (partition by _mapping, _source_row_id order by {DELIVERY_ORDER})"
    return f"case when _source_row_id is null then 1 else {over} end"


def _rank(entity: Entity, competes: str = LATEST) -> str:
    """The key dedupe among the rows that compete (`competes`); NULL for the others.

    Superseded deliveries never compete: partitioning by `competes` keeps them out of every
    latest delivery's partition, and the CASE gives them no rank at all.
    """
    if not entity.dedupe:
        return f"case when {competes} then 1 end"
    keys = [qi(k) for k in entity.key]
    # A NULL key part is no identity: such rows never dedupe against each other.
    any_null = " or ".join(f"{k} is null" for k in keys)
    isolate = f"case when {any_null} then _mapping || '|' || _source_row_id end"
    order = ", ".join(f"{qi(k.column)} desc nulls last" for k in entity.dedupe)
    over = f"row_number() over (partition by {competes}, {', '.join(keys)}, {isolate} order by {order})"
    return f"case when {competes} then {over} end"


def _probes(entity: Entity, project: Project) -> tuple[list[str], list[str]]:
    """Left joins onto admitted parent rows for referential rules; (join clauses, probe columns)."""
    joins, cols = [], []
    for rule in entity.rules_of_kind("referential"):
        rel = rule.param("relationship")
        parent = project.entity(rule.param("parent"))
        pairs = rule.param("columns")
        alias = f"p_{rel}"
        pk = [qi(p) for _c, p in pairs]
        parent_ref = "{{ ref(" + jstr(model_name(parent)) + ") }}"
        current = " where dbt_valid_to is null" if parent.scd == "type2" else ""
        # distinct: the probe must never fan a child out over several parent rows.
        sub = f"(select distinct {', '.join(pk)}, true as _hit from {parent_ref}{current})"
        on = " and ".join(f"j.{qi(c)} = {alias}.{qi(p)}" for c, p in pairs)
        joins.append(f"left join {sub} as {alias} on {on}")
        cols.append(f"{alias}._hit as _probe__{rel}")
    return joins, cols


def staged_sql(entity: Entity, project: Project, header: str) -> str:
    selects = [_mapping_select(entity, m, project) for m in entity.mappings]
    unioned = f"\n{INDENT}union all\n".join(selects)
    joins, probe_cols = _probes(entity, project)
    rules = list(entity.rules)
    col_types = {c.name: c.type for c in entity.columns}
    rule_cols = [f"coalesce({_scoped(r, violation(r, entity, col_types.get(r.column or '')))}, false) as _r__{r.name}" for r in rules]
    rewrites = {}
    for r in entity.rules_of_kind("referential"):
        if r.param("on_missing") == "unknown_member":
            fk = r.param("columns")[0][0]
            rewrites[fk] = call("unknown_member", jstr(qi(fk)), jstr(f"_probe__{r.param('relationship')}"))
    out_cols = []
    for c in entity.columns:
        out_cols.append(f"{rewrites[c.name]} as {qi(c.name)}" if c.name in rewrites else qi(c.name))
    flags = "[" + ", ".join(f"[{jstr(r.name)}, {jstr('_r__' + r.name)}]" for r in rules) + "]"
    fail = " or ".join(f"_r__{r.name}" for r in rules if r.disposition == "fail") or "false"
    quarantine = " or ".join(f"_r__{r.name}" for r in rules if r.disposition == "quarantine") or "false"
    kept_cols = [qi(c.name) for c in entity.columns] + ["_mapping", "_source_row_id", "_load_id", "_ingested_at", "_dedupe_rank", "_delivery_rank"]
    lines = [
        header,
        "{{ config(materialized='table', schema=" + jstr(project.schema("silver")) + ", tags=['assay', 'assay_staged']) }}",
        "",
        "with extracted as (",
        unioned,
        "),",
        "",
        "delivered as (",
        f"{INDENT}select *, {delivery_rank(entity)} as _delivery_rank",
        f"{INDENT}from extracted",
        "),",
        "",
        "ranked as (",
        f"{INDENT}select *, {_rank(entity)} as _dedupe_rank",
        f"{INDENT}from delivered",
        "),",
        "",
        "probed as (",
        f"{INDENT}select j.*" + "".join(f", {c}" for c in probe_cols),
        f"{INDENT}from ranked as j",
        *[f"{INDENT}{j}" for j in joins],
        "),",
        "",
        "judged as (",
        f"{INDENT}select",
        (",\n").join(
            [f"{INDENT * 2}{c}" for c in out_cols]
            + [f"{INDENT * 2}{c}" for c in ("_mapping", "_source_row_id", "_load_id", "_ingested_at", "_dedupe_rank", "_delivery_rank")]
            + [f"{INDENT * 2}_c__{c.name}" for c in entity.columns]
            + [f"{INDENT * 2}{c}" for c in rule_cols]
        ),
        f"{INDENT}from probed",
        ")",
        "",
        "-- markers and per-rule booleans stay inside this query: downstream reads _failed_rules",
        "select",
        "".join(f"{INDENT}{c},\n" for c in kept_cols) + f"{INDENT}" + call("quality_flags", flags) + " as _failed_rules,",
        f"{INDENT}case",
        f"{INDENT * 2}when _delivery_rank > 1 then 'deduped'",
        f"{INDENT * 2}when _dedupe_rank > 1 then 'deduped'",
        f"{INDENT * 2}when {fail} then 'failed'",
        f"{INDENT * 2}when {quarantine} then 'quarantined'",
        f"{INDENT * 2}else 'kept'",
        f"{INDENT}end as _route",
        "from judged",
        "",
    ]
    return "\n".join(lines)


def _scoped(rule, predicate: str) -> str:
    """Field rules judge their own mapping's rows; losers of the dedupe and superseded deliveries
    (no `_dedupe_rank`) are never judged."""
    conds = ["_dedupe_rank = 1"]
    if rule.mapping is not None:
        conds.append(f"_mapping = {sql_str(rule.mapping)}")
    return "(" + " and ".join(conds) + f" and {predicate})"
