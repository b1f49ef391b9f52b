"""The staged relation of an entity: extract, rank deliveries, dedupe, probe parents, judge, route.

Both outputs (the entity and its reject table) and the mart derive from this one relation, so
bronze is parsed once and every rule is evaluated once. Columns: the entity's columns, lineage,
`_dedupe_rank`, `_delivery_rank`, `_failed_rules` (all failed rules, sorted) and `_route`
(`kept`, `quarantined`, `failed` or `deduped`). The coercion markers `_c__<col>` and the per-rule
booleans `_r__<rule>` are computed inside the query.

A source row may be delivered several times (decision 0014): only its latest delivery
(`_delivery_rank = 1`) competes for a key and is judged; the earlier ones are superseded, routed
`deduped`, and have no `_dedupe_rank`. Incremental staging (dbt) reuses these pieces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..ir.model import Entity, Mapping, Project
from ..privacy import pii_columns
from .fields import Steps, lower_field
from .rules import judged_rows, rule_column
from .spelling import Spelling, Sql

LINEAGE = ("_mapping", "_source_row_id", "_load_id", "_ingested_at")
RANKS = ("_dedupe_rank", "_delivery_rank")
# A staged column a target adds where its staged table can be older than bronze when the entity is
# judged (SQLMesh, decision 0946): bronze's row count as this staged relation read it.
BRONZE_SEEN = "_bronze_rows"
# A replayed delivery (decisions 0011, 1100) carries this reserved `_load_id` and the `_ingested_at`
# of the delivery it re-delivers: it is the latest of the source row's deliveries at that instant,
# and an incremental ledger never holds it as late.
REPLAY_LOAD_ID = "__replay__"
# Text columns of an order are compared byte by byte (`byte_order`, decision 0984): the winner is a
# function of the data, not of a PostgreSQL database's collation.
TEXT_METADATA = ("_load_id", "_source_row_id", "_mapping")


def delivery_order(sp: Spelling) -> str:
    """The order of one source row's deliveries, latest first (decision 0014; a replayed delivery
    first among deliveries of one instant, decision 1100)."""
    return sp.sql(f"_ingested_at desc nulls last, case when _load_id = '{REPLAY_LOAD_ID}' then 0 else 1 end, "
                  "{} desc nulls last", sp.call("byte_order", Sql("_load_id")))


def sort_key(sp: Spelling, entity: Entity, column: str) -> str:
    """A column of the dedupe order as its sort key: text compared byte by byte."""
    col = entity.column(column)
    text = column in TEXT_METADATA or (col is not None and col.type == "string")
    return sp.call("byte_order", Sql(sp.ident(column))) if text else sp.ident(column)


LATEST = "_delivery_rank = 1"


def mapping_select(sp: Spelling, entity: Entity, mapping: Mapping, bronze_filter: Optional[Callable[[dict], str]] = None,
                   extra: tuple[str, ...] = (), source: Optional[str] = None) -> str:
    """One mapping's bronze rows as entity columns, lineage and coercion markers.

    `bronze_filter`, given the lineage expressions over bronze (`_mapping`, `_source_row_id`,
    `_load_id`, `_ingested_at`), returns the text that follows `from <bronze> as b` (a `where`
    clause, or a join and a `where`, possibly templated; every column the select reads is
    `b.`-qualified, so a joined relation's columns never collide with bronze's): it filters
    bronze's own rows before any transform runs, so a build that reads a few new rows does not
    transform all of bronze first. `extra` are further columns, after the markers, over bronze's
    own columns (`b.`). `source` is the from-item read as `b` instead of the mapping's bronze
    relation (one with bronze's columns, e.g. `lower.loads.bronze_rows`).
    """
    i = sp.indent
    # Ingestion metadata is required only where dedupe or quarantine reads it; a mapping that
    # does not name a metadata column gets NULL lineage there rather than a broken query.
    named = set(mapping.bronze_columns)
    null = sp.kw("null")
    lineage = {"_mapping": sp.string(mapping.name)}
    for name in ("_source_row_id", "_load_id"):
        lineage[name] = sp.cast(f"b.{name}" if name in named else null, "string", False)
    # an instant: an offset is converted to UTC, so deliveries order by when they happened
    lineage["_ingested_at"] = (sp.call("ingestion_timestamp", Sql("b._ingested_at")) if "_ingested_at" in named
                               else sp.cast(null, "timestamp", False))
    cols = [sp.sql("{} as {}", value, name) for name, value in lineage.items()]
    markers = []
    private = pii_columns(entity)
    steps = Steps(sp)
    for index, column in enumerate(entity.columns):
        src = mapping.source_for(column.name)
        if src is None:
            value, marker = sp.cast(null, column.type, False), None
        elif not entity.opted_in and column.name in private:
            value, marker = private_read(sp, entity, column.name, column.type, src, steps.binder(index))
        else:
            value, marker = lower_field(sp, src, "b", entity.opted_in, steps.binder(index))
        cols.append(sp.sql("{} as {}", value, sp.ident(column.name)))
        markers.append(sp.sql("{} as _c__{}", marker or sp.kw("false"), column.name))
    body = (",\n" + i * 2).join(cols + markers + list(extra))
    filtered = bronze_filter(lineage) if bronze_filter else ""
    src = source or sp.bronze(mapping.source)
    if steps.levels:
        # bronze's rows are filtered first, as below; the steps' levels then read only those
        if filtered:
            src = sp.sql("(\n{i}{i}select b.*\n{i}{i}from {src} as b{filtered}\n{i})", i=i, src=src, filtered=filtered)
        src, filtered = steps.source(src), ""
    return sp.sql("{i}select\n{i}{i}{body}\n{i}from {src} as b{filtered}", i=i, body=body, src=src, filtered=filtered)


def private_read(sp: Spelling, entity: Entity, column: str, assay_type: str, src, bind=None) -> tuple[str, Optional[str]]:
    """A `pii` field of an entity that is not opted in: read as an opted-in one reads it (a value that
    does not cast is NULL and its marker TRUE), then a value that did not cast stops the build, as
    the engine's own cast would, but with assay's sentence: the engine's names the value it refused,
    which dbt and SQLMesh then print (decision 1136, its "Not done"; decision 1140). The sentence is
    cast to the field's type only where the marker is TRUE, so nothing else is ever evaluated."""
    value, marker = lower_field(sp, src, "b", True, bind)
    if marker is None:
        return value, None
    said = sp.string(f"assay: a value of {entity.name}.{column} (a pii field, not shown) is no {assay_type}; with "
                     f"`quarantine:` on the entity such a row goes to its reject table instead of stopping the build")
    refusal = sp.cast(sp.sql("case when {} then {} end", marker, said), assay_type, False)
    return sp.sql("coalesce({}, {})", value, refusal), marker


def delivery_rank(sp: Spelling, entity: Entity) -> str:
    """Which delivery of its source row a row is: 1 for the latest, which supersedes the others.

    Only an entity whose bronze carries the ingestion metadata has deliveries to tell apart; a
    row without a `_source_row_id` has no identity and is nobody's re-delivery.
    """
    if not entity.has_ingestion_metadata:
        return "1"
    return sp.sql("case when _source_row_id is null then 1 else {} end", delivery_number(sp))


def delivery_number(sp: Spelling) -> str:
    """The delivery order of a source row's deliveries, latest first."""
    return sp.sql("row_number() over (partition by _mapping, _source_row_id order by {})", delivery_order(sp))


def is_late(sp: Spelling, alias: str, window_start: str) -> str:
    """Whether a new delivery (of `alias`) is late for an incremental ledger: older than the window
    start (decision 0401). A replayed delivery never is: it keeps the `_ingested_at` of the delivery
    it re-delivers, so it is older than the window by design, and it is there to be judged under
    the current spec and merged by key against the incumbent (reference 001; decision 1100)."""
    return sp.sql("coalesce({a}._ingested_at < {ws} and coalesce({a}._load_id, '') <> '{r}', false)",
                  a=alias, ws=window_start, r=REPLAY_LOAD_ID)


def dedupe_rank(sp: Spelling, entity: Entity, competes: str = LATEST) -> str:
    """The key dedupe among the rows that compete (`competes`); NULL for the others.

    Superseded deliveries never compete: partitioning by `competes` keeps them out of every
    latest delivery's partition, and the CASE gives them no rank at all.
    """
    if not entity.dedupe:
        return sp.sql("case when {} then 1 end", competes)
    keys = [sp.ident(k) for k in entity.key]
    # A NULL key part is no identity: such rows never dedupe against each other.
    any_null = sp.join("or", (sp.sql("{} is null", k) for k in keys))
    isolate = sp.sql("case when {} then _mapping || '|' || _source_row_id end", any_null)
    order = ", ".join(sp.sql("{} desc nulls last", sort_key(sp, entity, k.column)) for k in entity.dedupe)
    over = sp.sql("row_number() over (partition by {}, {}, {} order by {})", competes, ", ".join(keys), isolate, order)
    return sp.sql("case when {} then {} end", competes, over)


def probes(sp: Spelling, entity: Entity, project: Project) -> tuple[list[str], list[str]]:
    """Left joins onto admitted parent rows for referential rules; (join clauses, probe columns)."""
    joins, cols = [], []
    for rule in entity.rules_of_kind("referential"):
        rel = rule.param("relationship")
        parent = project.entity(rule.param("parent"))
        pairs = rule.param("columns")
        alias = f"p_{rel}"
        pk = ", ".join(sp.ident(p) for _c, p in pairs)
        # Current versions of a type-2 parent only, and distinct: the probe never fans a child out.
        current = sp.sql(" where {} is null", sp.valid_to_column) if parent.scd == "type2" else ""
        sub = sp.sql("(select distinct {}, true as _hit from {}{})", pk, sp.model(parent), current)
        on = sp.join("and", (f"j.{sp.ident(c)} = {alias}.{sp.ident(p)}" for c, p in pairs))
        joins.append(sp.sql("left join {} as {} on {}", sub, alias, on))
        cols.append(sp.sql("{}._hit as _probe__{}", alias, rel))
    return joins, cols


def fk_rewrites(sp: Spelling, entity: Entity) -> dict[str, str]:
    """Foreign keys an `unknown_member` rule replaces when the parent is missing: column -> value."""
    rewrites = {}
    for r in entity.rules_of_kind("referential"):
        if r.param("on_missing") == "unknown_member":
            fk = r.param("columns")[0][0]
            # Only a row the rule judges is rewritten: a dedupe loser or a superseded delivery keeps
            # its value (it showed `__unknown__` in the staged relation and in explain although no
            # rule ever judged it; an outside tester, session 41).
            judged = sp.join("and", judged_rows(sp, r))
            probe = sp.sql("case when {} then _probe__{} else true end", judged, r.param("relationship"))
            rewrites[fk] = sp.call("unknown_member", Sql(sp.ident(fk)), Sql(probe))
    return rewrites


def judged_columns(sp: Spelling, entity: Entity) -> list[str]:
    """The judged relation's columns: entity columns (rewritten), lineage, ranks, markers, rules."""
    rewrites = fk_rewrites(sp, entity)
    types = {c.name: c.type for c in entity.columns}
    out = [sp.sql("{} as {}", rewrites[c.name], sp.ident(c.name)) if c.name in rewrites else sp.ident(c.name) for c in entity.columns]
    out += [*LINEAGE, *RANKS]
    out += [f"_c__{c.name}" for c in entity.columns]
    dedupe_columns = frozenset(k.column for k in entity.dedupe if not k.metadata)
    out += [rule_column(sp, r, types.get(r.column or ""), dedupe_columns, entity) for r in entity.rules]
    return out


def staged_columns(sp: Spelling, entity: Entity) -> list[str]:
    """The columns the staged relation keeps besides `_failed_rules` and `_route`."""
    return [sp.ident(c.name) for c in entity.columns] + [*LINEAGE, *RANKS]


def failed_rules(sp: Spelling, entity: Entity, extra: tuple = ()) -> str:
    """`_failed_rules`: the sorted names of the failed rules (`extra` pairs first)."""
    return sp.sql("{} as _failed_rules", sp.quality_flags([*extra, *((r.name, f"_r__{r.name}") for r in entity.rules)]))


DIVERTED_ROUTES = ("quarantined", "failed")  # the routes whose rows go to the reject table


def diverted(sp: Spelling, alias: str = "") -> str:
    """The condition that a staged row (of `alias`) is diverted, which the mart, the audits, the
    reject rows, the declared checks and the anomaly checks all read."""
    prefix = f"{alias}." if alias else ""
    return sp.sql("{}_route in ({})", prefix, ", ".join(f"'{r}'" for r in DIVERTED_ROUTES))


#: The reserved rule an incremental ledger quarantines a late row under (decision 0401): not ranked,
#: not judged. A leading underscore: no rule a spec can name collides with it. The mart counts it
#: as a rule of the entity (decision 1131).
LATE_RULE = "_late_arrival"


def deduped(sp: Spelling, alias: str = "") -> str:
    """The condition that a staged row (of `alias`) was deduped: a superseded delivery or a key's
    loser. Such a row was never judged."""
    prefix = f"{alias}." if alias else ""
    return sp.sql("{}_route = 'deduped'", prefix)


def evaluated(sp: Spelling, alias: str = "") -> str:
    """The condition that a staged row (of `alias`) was evaluated: every row not deduped, judged
    by the rules (a key's winner, dedupe rank 1) or, in an incremental ledger, as a late arrival
    (no rank, quarantined under `_late_arrival`, decision 0401). The one definition the mart's
    `rows_evaluated`, the rate and change limits and the anomaly checks count (decision 0949), so
    a check's counts are the mart's and evaluated + deduped is every bronze row read."""
    return sp.sql("{} ({})", sp.kw("not"), deduped(sp, alias))


def route(sp: Spelling, entity: Entity, late: bool = False) -> list[str]:
    """The `_route` CASE, one line each: deduped, then failed, then quarantined, else kept."""
    i = sp.indent
    fail = sp.join("or", (f"_r__{r.name}" for r in entity.rules if r.disposition == "fail")) or sp.kw("false")
    quarantine = sp.join("or", (f"_r__{r.name}" for r in entity.rules if r.disposition == "quarantine")) or sp.kw("false")
    whens = [("_delivery_rank > 1", "deduped")]
    if late:
        # a late row is never ranked, so it is placed before the key dedupe looks at it
        whens.append(("_late", "quarantined"))
    whens += [("_dedupe_rank > 1", "deduped"), (fail, "failed"), (quarantine, "quarantined")]
    return [
        sp.sql("{}case", i),
        *(sp.sql("{}when {} then '{}'", i * 2, cond, to) for cond, to in whens),
        sp.sql("{}else 'kept'", i * 2),
        sp.sql("{}end as _route", i),
    ]


@dataclass(frozen=True)
class StagedRelation:
    """The staged model's query as one value: its CTEs' parts, in the order they run."""

    extracted: list[str]  # one select per mapping
    delivery_rank: str
    dedupe_rank: str
    probe_joins: list[str]
    probe_columns: list[str]
    judged: list[str]
    kept: list[str]
    failed_rules: str
    route: list[str]


def staged_relation(sp: Spelling, entity: Entity, project: Project) -> StagedRelation:
    """Every decision of a full-rebuild staged model, spelled for one target."""
    joins, probe_cols = probes(sp, entity, project)
    return StagedRelation(
        extracted=[mapping_select(sp, entity, m) for m in entity.mappings],
        delivery_rank=delivery_rank(sp, entity),
        dedupe_rank=dedupe_rank(sp, entity),
        probe_joins=joins,
        probe_columns=probe_cols,
        judged=judged_columns(sp, entity),
        kept=staged_columns(sp, entity),
        failed_rules=failed_rules(sp, entity),
        route=route(sp, entity),
    )


def staged_query(sp: Spelling, rel: StagedRelation) -> str:
    """The staged relation's query text, from `with` to the final `from judged`."""
    i = sp.indent
    lines = [
        sp.sql("with extracted as ("),
        sp.sql("\n{}union all\n", i).join(rel.extracted),
        "),",
        "",
        sp.sql("delivered as ("),
        sp.sql("{}select *, {} as _delivery_rank", i, rel.delivery_rank),
        sp.sql("{}from extracted", i),
        "),",
        "",
        sp.sql("ranked as ("),
        sp.sql("{}select *, {} as _dedupe_rank", i, rel.dedupe_rank),
        sp.sql("{}from delivered", i),
        "),",
        "",
        sp.sql("probed as ("),
        sp.sql("{}select j.*", i) + "".join(f", {c}" for c in rel.probe_columns),
        sp.sql("{}from ranked as j", i),
        *[f"{i}{j}" for j in rel.probe_joins],
        "),",
        "",
        sp.sql("judged as ("),
        sp.sql("{}select", i),
        ",\n".join(f"{i * 2}{c}" for c in rel.judged),
        sp.sql("{}from probed", i),
        ")",
        "",
        "-- markers and per-rule booleans stay inside this query: downstream reads _failed_rules",
        sp.sql("select"),
        *[f"{i}{c}," for c in rel.kept],
        f"{i}{rel.failed_rules},",
        *rel.route,
        sp.sql("from judged"),
        "",
    ]
    return "\n".join(lines)
