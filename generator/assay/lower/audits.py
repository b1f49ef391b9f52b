"""The audits of an entity, decided once for both targets (reference 001, decision 1060).

Which audits an entity gets, their names, the form of the conservation law and the SQL of every
audit are decided here and spelled through a `Spelling`. A target only says where its tool runs
an audit and how the query names what it reads there (`Audited`): dbt judges the candidate
inside the `assay_entity` materialization, after the reject model has written this build's
diverted rows; SQLMesh judges every audit, the conservation law included, on the model evaluated
with the entity on every plan and run (the entity, `__current` for type 2), which runs after the
reject model and reads the reject rows it wrote (decision 0939).

The conservation law: every bronze row (one delivery of a source row) is in exactly one place,
the entity, the dedupe count (key losers and superseded deliveries) or an open reject row that
describes a delivery this build diverts. An open reject row this build resolves (its source
row's latest delivery is now kept or a key's loser) describes no diverted delivery, so it is
never a placement, whether the tool stamps the resolution before the audit (SQLMesh) or after
it (dbt); a reject row whose bronze row aged out is history, never a placement.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

from ..duration import Duration
from ..ir.model import INGESTION_COLUMNS, Entity, Mapping, Project
from .loads import OPEN, ROUTE_SUMS, bronze_rows, load_id, raw, rows_in_loads, settled_ctes, source_row_fingerprint
from .spelling import Spelling, Sql
from .staged import BRONZE_SEEN, REPLAY_LOAD_ID, diverted

COUNT = "count"  # the staged relation holds one row per bronze row: the law by totals, one pass
ROW = "row"  # the staged relation outlives bronze (an incremental ledger): delivery by delivery
LOAD = "load"  # an incremental ledger of one mapping per source: settled loads by sums, the rest as ROW
FAIL_PREFIX = "fail_rule__"  # + the rule's name: a blocking audit per fail rule
FLAG_PREFIX = "flag_rule__"  # + the rule's name: an advisory audit per flag rule
# The check name a stop by the ingestion-metadata audit is recorded under in `<meta>.assay_events`
# on both targets (decision 0935), upper case like the other generated audits (KEY_UNIQUE); a stop
# by a `fail` rule is recorded under the rule's own name.
INGESTION_CHECK = "INGESTION_METADATA"
# The conservation audit: its name in the audit list, and the check name its stop is recorded under
# in `<meta>.assay_events` (dbt's `assay_entity` upper-cases an audit's name so; decision 0939).
CONSERVATION = "conservation"
CONSERVATION_CHECK = "CONSERVATION"


@dataclass(frozen=True)
class Audited:
    """What a target's audit query reads, as the query names it there.

    `entity` is the entity's rows under audit (dbt: the candidate; SQLMesh: the model itself);
    `reject` the reject table as this build wrote it, None for an entity without one."""

    entity: str
    reject: str | None = None
    # True where the staged relation can be older than bronze (SQLMesh: a retried entity is
    # evaluated alone against the staged table its failed run wrote, decision 0946): the law then
    # counts bronze as the staged relation read it, from its `BRONZE_SEEN` column.
    bronze_seen: bool = False


@dataclass(frozen=True)
class Audit:
    """One audit: its name, whether a violation stops the build, the conservation form, its SQL."""

    name: str
    blocking: bool
    sql: str
    form: str | None = None  # COUNT or ROW for the conservation audit, else None


def conservation_form(entity: Entity) -> str:
    """The form of the law an entity's conservation audit takes (decisions 1060, 0406)."""
    if entity.materialized != "incremental":
        return COUNT
    # a settled load is a (mapping, load); it is a (source, load) only when no two mappings share a source
    return LOAD if len({m.source for m in entity.mappings}) == len(entity.mappings) else ROW


def _source_case(sp: Spelling, entity: Entity, alias: str) -> str:
    """The source relation of a staged row, from its mapping."""
    prefix = f"{alias}." if alias else ""
    return sp.sql("case {}_mapping ", prefix) + "".join(
        sp.sql("when {} then {} ", sp.string(m.name), sp.string(m.source)) for m in entity.mappings
    ) + sp.kw("end")


def _sources_read(entity: Entity) -> list[tuple[str, int]]:
    """The bronze relations of an entity, each once, with the number of its mappings that read it:
    each of them stages every bronze row, so a bronze row is placed once per mapping that reads it
    (decision 0947)."""
    return sorted(Counter(m.source for m in entity.mappings).items())


def _open_rejects(sp: Spelling, entity: Entity, reject: str, replayed: bool = False) -> str:
    """The open reject rows that place a delivery: those describing a delivery this build diverts.

    With `replayed`, an open row also places its source row's `__replay__` delivery, whatever load
    it names: replay made that delivery from the row's `raw`, and a SQLMesh plan of a spec fix
    judges it without the forward-only reject model, whose row follows it only at the next
    interval (decision 0986). Only the count form takes it; the others place a row by its load."""
    i = sp.indent
    same_load = sp.sql("s._load_id = r._load_id")
    if replayed:
        same_load = sp.sql("({} or s._load_id = {})", same_load, sp.string(REPLAY_LOAD_ID))
    return "\n".join(
        [
            sp.sql("{}select r.source_relation, r.mapping, r._source_row_id, r._load_id", i),
            sp.sql("{}from {} as r", i, reject),
            sp.sql("{}where r.resolved_at is null", i),
            sp.sql("{}and exists (", i * 2),
            sp.sql("{}select 1 from {} as s", i * 3, sp.staged(entity)),
            sp.sql("{}where {}", i * 3, diverted(sp, "s")),
            sp.sql("{}and s._source_row_id = r._source_row_id", i * 4),
            sp.sql("{}and {}", i * 4, same_load),
            sp.sql("{}and s._mapping = r.mapping", i * 4),
            sp.sql("{}and r.source_relation = {}", i * 4, _source_case(sp, entity, "s")),
            f"{i * 2})",
        ]
    )


def _open_rejects_cte(sp: Spelling, entity: Entity, where: Audited, replayed: bool = False) -> list[str]:
    """`, assay_open_rejects as (...)`, or nothing for an entity without a reject table."""
    if where.reject is None:
        return []
    return [sp.sql(", assay_open_rejects as ("), _open_rejects(sp, entity, where.reject, replayed), ")"]


def bronze_count(sp: Spelling, entity: Entity) -> str:
    """Bronze's rows of an entity now, as its staged relation holds them: one count per bronze
    relation, times the mappings that read it (each stages every row; decision 0947), summed."""
    return " + ".join(sp.sql("(select count(*) from {}){}", sp.bronze(s), f" * {n}" if n > 1 else "")
                      for s, n in _sources_read(entity))


def conservation_count_sql(sp: Spelling, entity: Entity, where: Audited) -> str:
    """The law by totals: one row (the counts) when it is broken, none when it holds.

    Holds when bronze = entity + open rejects + deduped, the staged relation holds one row per
    bronze row, the entity holds exactly the kept rows, and the open rejects are exactly the
    diverted deliveries. The staged relation is read once for all its counts. With
    `where.bronze_seen` bronze is counted as the staged relation read it (an empty staged relation
    recorded nothing: bronze now), so a staged table older than bronze is never a violation."""
    i = sp.indent
    bronze = bronze_count(sp, entity)
    seen = [sp.sql("{}coalesce(max({}), {}) as bronze_rows,", i * 2, BRONZE_SEEN, bronze)] if where.bronze_seen else []
    lines = [
        sp.sql("with assay_staged as ("),
        sp.sql("{}select", i),
        *seen,
        sp.sql("{}count(*) as staged_rows,", i * 2),
        sp.sql("{}count(case when _route = 'kept' then 1 end) as kept_rows,", i * 2),
        sp.sql("{}count(case when _route = 'deduped' then 1 end) as deduped_rows,", i * 2),
        sp.sql("{}count(case when {} then 1 end) as diverted_rows", i * 2, diverted(sp)),
        sp.sql("{}from {}", i, sp.staged(entity)),
        ")",
        *_open_rejects_cte(sp, entity, where, replayed=True),
        sp.sql(", assay_counts as ("),
        sp.sql("{}select", i),
        sp.sql("{}st.bronze_rows,", i * 2) if where.bronze_seen else sp.sql("{}{} as bronze_rows,", i * 2, bronze),
        sp.sql("{}st.staged_rows,", i * 2),
        sp.sql("{}st.kept_rows,", i * 2),
        sp.sql("{}st.deduped_rows,", i * 2),
        sp.sql("{}st.diverted_rows,", i * 2),
        sp.sql("{}(select count(*) from {}) as entity_rows,", i * 2, where.entity),
        sp.sql("{}{} as open_rejects", i * 2, sp.sql("(select count(*) from assay_open_rejects)") if where.reject else "0"),
        sp.sql("{}from assay_staged as st", i),
        ")",
        sp.sql("select *"),
        sp.sql("from assay_counts"),
        sp.sql("where bronze_rows <> entity_rows + open_rejects + deduped_rows"),
        sp.sql("{}or staged_rows <> bronze_rows", i),
        sp.sql("{}or entity_rows <> kept_rows", i),
        sp.sql("{}or open_rejects <> diverted_rows", i),
    ]
    return "\n".join(lines) + "\n"


def _misplaced(sp: Spelling, placed_filter: str = "") -> list[str]:
    """The deliveries of `assay_bronze` placed zero or several times among `assay_placed` (those
    `placed_filter`, a join and a `where` over its alias `p`, keeps)."""
    i = sp.indent
    return [
        sp.sql(", assay_placements as ("),
        sp.sql("{}select p._mapping, p.source_relation, p.source_row_id, p.load_id, count(*) as placements", i),
        sp.sql("{}from assay_placed as p", i),
        *([sp.sql("{}{}", i, placed_filter)] if placed_filter else []),
        sp.sql("{}group by p._mapping, p.source_relation, p.source_row_id, p.load_id", i),
        ")",
        sp.sql("select b.source_relation, b.source_row_id, b.load_id, coalesce(c.placements, 0) as placements"),
        sp.sql("from assay_bronze as b"),
        sp.sql("left join assay_placements as c"),
        sp.sql("{}on c._mapping = b._mapping and c.source_relation = b.source_relation and c.source_row_id = b.source_row_id "
               "and c.load_id = b.load_id", i),
        sp.sql("where coalesce(c.placements, 0) <> 1"),
    ]


def conservation_row_sql(sp: Spelling, entity: Entity, where: Audited) -> str:
    """The law delivery by delivery: the bronze deliveries placed zero or several times.

    A delivery is (source relation, `_source_row_id`, `_load_id`), which the ingestion audit
    keeps unique, staged by one mapping: a bronze row two mappings read is two deliveries, each
    placed once (decision 0947). Only bronze deliveries are judged, so ledger rows that outlived
    bronze are not."""
    i = sp.indent
    ids = lambda src, mapping, *where_: sp.sql(  # noqa: E731 - one placement branch
        "{}select {} as source_relation, {} as _mapping, _source_row_id as source_row_id, _load_id as load_id from {}",
        i, src, mapping, " ".join(where_)
    ).rstrip()
    bronze = sp.sql("\n{}union all\n", i).join(
        # bronze ids may be of any type; the staged relation and the reject table hold them as text
        sp.sql("{}select {} as source_relation, {} as _mapping, {} as source_row_id, {} as load_id from {}", i, sp.string(m.source),
               sp.string(m.name), sp.cast("_source_row_id", "string", False), sp.cast("_load_id", "string", False), sp.bronze(m.source))
        for m in sorted(entity.mappings, key=lambda m: (m.source, m.name))
    )
    case = _source_case(sp, entity, "")
    placed = [ids(case, "_mapping", where.entity), ids(case, "_mapping", sp.staged(entity), sp.sql("where _route = 'deduped'"))]
    if where.reject is not None:
        placed.append(ids("source_relation", "mapping", "assay_open_rejects"))
    lines = [
        sp.sql("with assay_bronze as ("),
        bronze,
        ")",
        *_open_rejects_cte(sp, entity, where),
        sp.sql(", assay_placed as ("),
        sp.sql("\n{}union all\n", i).join(placed),
        ")",
        *_misplaced(sp),
    ]
    return "\n".join(lines) + "\n"


def conservation_load_sql(sp: Spelling, entity: Entity, where: Audited) -> str:
    """The law for an incremental ledger that keeps delivery fingerprints (decision 0406).

    A settled load (bronze and the ledger hold the same deliveries of it: `lower/loads.py`) is
    proven by sums: its ledger rows each have one route, so each of its bronze deliveries is
    placed exactly once when the entity's rows of the load are the ledger's kept ones and its open
    reject rows the ledger's diverted ones, compared by count and by the sum of a fingerprint of
    their `_source_row_id` (a compensating error, one row in place of another, changes the sum).
    One pass per relation, a hash aggregate with one group per load. The deliveries of the other
    loads are placed one by one, as in the ROW form, from a second read of the entity filtered to
    those loads (`_open_load_rows`). A violation is a delivery (with its
    placements) or a settled load (`source_row_id` and `placements` NULL)."""
    i = sp.indent
    staged = sp.staged(entity)
    string = lambda expr: sp.cast(expr, "string", False)  # noqa: E731
    srid_fp = sp.call("fingerprint_sum", Sql(source_row_fingerprint(sp)))
    unsettled = lambda mapping, load: sp.sql(  # noqa: E731
        "left join assay_settled as u on u._mapping = {} and u._load_id = {}\n{}where u._mapping is null", mapping, load, i)
    bronze = sp.sql("\n{}union all\n", i).join(
        sp.sql("{i}select {src} as source_relation, {name} as _mapping, {srid} as source_row_id, {load} as load_id\n{i}from {rel} as b",
               i=i, src=sp.string(m.source), name=sp.string(m.name), srid=string(raw(m, "_source_row_id")), load=load_id(sp, m),
               rel=bronze_rows(sp, m, OPEN, i))
        for m in entity.mappings
    )
    case = _source_case(sp, entity, "")
    placed_branch = lambda src, rel, *where_: sp.sql(  # noqa: E731
        "{}select {} as source_relation, _source_row_id as source_row_id, _load_id as load_id, _mapping from {}", i, src, rel
    ) + "".join(" " + w for w in where_)
    placed = [placed_branch(case, _open_load_rows(sp, where.entity, i)),
              placed_branch(case, staged, sp.sql("where _route = 'deduped'"))]
    # the ledger's sides come from the pass that groups it by load (route_sums), not a pass each
    sums = [
        sp.sql("{}select _mapping, _load_id, '{}' as _side, _{}_rows as _rows, _{}_fp as _fp from assay_ledger_loads", i, side, side, side)
        for side in ROUTE_SUMS
    ] + [
        sp.sql("{}select _mapping, _load_id, 'entity' as _side, count(*) as _rows, {} as _fp from {} group by _mapping, _load_id",
               i, srid_fp, where.entity),
    ]
    if where.reject is not None:
        # an open reject row places a delivery of its own mapping (`_open_rejects`)
        placed.append(sp.sql("{}select source_relation, _source_row_id as source_row_id, _load_id as load_id, mapping as _mapping "
                             "from assay_open_rejects", i))
        sums.append(sp.sql("{}select mapping as _mapping, _load_id, 'rejected' as _side, count(*) as _rows, {} as _fp "
                           "from assay_open_rejects group by mapping, _load_id", i, srid_fp))
    side = lambda alias, name: sp.sql(  # noqa: E731
        "left join assay_load_sums as {a} on {a}._mapping = s._mapping and {a}._load_id = s._load_id and {a}._side = '{n}'",
        a=alias, n=name)
    differ = lambda a, b: sp.sql(  # noqa: E731
        "coalesce({a}._rows, 0) <> coalesce({b}._rows, 0) or coalesce({a}._fp, 0) <> coalesce({b}._fp, 0)", a=a, b=b)
    lines = [
        "with " + ",\n".join(settled_ctes(sp, entity, staged, routes=True)),
        *_open_rejects_cte(sp, entity, where),
        sp.sql(", assay_bronze as ("),
        bronze,
        ")",
        sp.sql(", assay_load_sums as ("),
        sp.sql("\n{}union all\n", i).join(sums),
        ")",
        sp.sql(", assay_placed as ("),
        sp.sql("\n{}union all\n", i).join(placed),
        ")",
        *_misplaced(sp, unsettled("p._mapping", "p.load_id")),
        sp.sql("union all"),
        sp.sql("select {} as source_relation, {} as source_row_id, s._load_id as load_id, {} as placements",
               _source_case(sp, entity, "s"), sp.cast(sp.kw("null"), "string", False), sp.cast(sp.kw("null"), "int", False)),
        sp.sql("from assay_settled as s"),
        *[side(a, n) for a, n in (("k", "kept"), ("e", "entity"), ("d", "diverted"), ("r", "rejected"))],
        sp.sql("where {}", differ("k", "e")),
        sp.sql("{}or {}", i, differ("d", "r")),
    ]
    return "\n".join(lines) + "\n"


def _open_load_rows(sp: Spelling, relation: str, under: str) -> str:
    """The rows of `relation` (alias `e`) in `assay_open_loads` (`loads.rows_in_loads`). The entity
    is grouped by load for the settled loads in a pass of its own, with no join: marking each of
    its rows settled or not, by a join, cost more than both passes (decision 0411)."""
    return rows_in_loads(sp, relation, "e", "e._mapping, e._load_id, e._source_row_id", "e._mapping", "e._load_id",
                         "e._load_id", OPEN, under) + " as e"


def conservation_sql(sp: Spelling, entity: Entity, where: Audited, form: str | None = None) -> str:
    """The conservation audit's query in `form` (default: the entity's, `conservation_form`)."""
    form = form or conservation_form(entity)
    return {ROW: conservation_row_sql, LOAD: conservation_load_sql}.get(form, conservation_count_sql)(sp, entity, where)


def key_unique_sql(sp: Spelling, entity: Entity, relation: str) -> str:
    """Keys that repeat among the rows (a row with a NULL key part is no identity)."""
    cols = [sp.ident(k) for k in entity.key]
    listed = ", ".join(cols)
    return "\n".join(
        [
            sp.sql("select {}, count(*) as occurrences", listed),
            sp.sql("from {}", relation),
            sp.sql("where {}", sp.join("and", (sp.sql("{} is not null", c) for c in cols))),
            sp.sql("group by {}", listed),
            sp.sql("having count(*) > 1"),
            "",
        ]
    )


def flagged_sql(sp: Spelling, relation: str, rule_name: str) -> str:
    """The rows whose quality flags name `rule_name`."""
    return "\n".join(
        [
            sp.sql("select *"),
            sp.sql("from {}", relation),
            sp.sql("where {}", sp.call("flags_contain", Sql("_quality_flags"), rule_name)),
            "",
        ]
    )


def entity_audits(sp: Spelling, entity: Entity, where: Audited) -> list[Audit]:
    """The audits an entity gets, in the order they run; the same list on both targets.

    Blocking: the conservation law, key uniqueness (entities without `dedupe:`, where nothing
    else makes the key unique), one per `fail` rule on the finished rows (a fail rule that
    fired routes its row away, so a finished row carrying one is a bug). Advisory (never
    blocking): one per `flag` rule, the rows it flagged. A target whose tool has no advisory
    channel for a build (dbt: the mart's counts say it) spells only the blocking ones."""
    audits = [Audit(CONSERVATION, True, conservation_sql(sp, entity, where), conservation_form(entity))]
    if not entity.dedupe:
        audits.append(Audit("key_unique", True, key_unique_sql(sp, entity, where.entity)))
    if entity.opted_in:
        for rule in entity.rules:
            if rule.disposition == "fail":
                audits.append(Audit(FAIL_PREFIX + rule.name, True, flagged_sql(sp, where.entity, rule.name)))
        for rule in entity.rules:
            if rule.disposition == "flag":
                audits.append(Audit(FLAG_PREFIX + rule.name, False, flagged_sql(sp, where.entity, rule.name)))
    return audits


@dataclass(frozen=True)
class StagedAudit:
    """A blocking audit of the staged relation: it stops the build before the entity is written.

    `rule` names the `fail` rule whose rows it finds (over the staged rows' `_failed_rules`);
    `key` is True for the key audit among the rows about to be kept."""

    name: str
    rule: Optional[str] = None
    key: bool = False


def staged_audits(entity: Entity, audits_a_candidate: bool) -> list[StagedAudit]:
    """The staged relation's audits, in the order they run; both targets spell this list.

    One per `fail` rule: a row that fails it stops the run (reference 001) whatever its route.
    The key among the kept rows of an entity without `dedupe:` only where the tool writes the
    entity in place before its own audits run (SQLMesh re-evaluates a model into its table, then
    audits it): a tool that audits a candidate before publishing it (dbt's `assay_entity`) judges
    the key there, among the entity's audits, and needs no second audit here."""
    audits = [StagedAudit(FAIL_PREFIX + r.name, rule=r.name) for r in entity.rules if r.disposition == "fail"]
    if not entity.dedupe and not audits_a_candidate:
        audits.append(StagedAudit("key_unique", key=True))
    return audits


@dataclass(frozen=True)
class BronzeAudits:
    """What is audited of one bronze relation before anything reads it, the same on both targets:
    its ingestion metadata (when an entity that reads it carries the metadata: every row has a
    `_source_row_id`, a `_load_id` and an `_ingested_at` that reads as an instant) and its
    freshness thresholds (the strictest each of the mappings that read it declares)."""

    source: str
    ingestion_metadata: bool
    warn_after: Optional[Duration]
    error_after: Optional[Duration]
    # The incremental entity and its mapping of this relation whose ledger proves loads clean, so
    # that the metadata test reads only the other loads (decision 0408); None: it reads them all.
    settled_by: Optional[tuple[Entity, Mapping]] = None
    # Where no ledger does: an entity rebuilt in full whose staged relation ranks this relation's
    # deliveries, and its mappings of it, so that the repeat search groups only the re-delivered
    # source rows (decision 0412); None: it groups every row.
    ranked_by: Optional[tuple[Entity, tuple[str, ...]]] = None


def reading_entities(project: Project, source: str) -> list[Entity]:
    """The entities a mapping of which reads the bronze relation `source`, by name: those a failing
    audit of the relation stops before they are written (decision 0935)."""
    return sorted((e for e in project.entities if any(m.source == source for m in e.mappings)), key=lambda e: e.name)


def ranking_mappings(entity: Entity, source: str) -> tuple[str, ...]:
    """The mappings of `source` whose deliveries `entity`'s staged relation ranks (`_delivery_rank`
    over every row of the relation, decision 0412), sorted; empty when it ranks none: an entity
    without the ingestion metadata, an incremental ledger, which holds rows of earlier builds, or a
    mapping that does not read all three metadata columns (its lineage there is NULL)."""
    mappings = [m for m in entity.mappings if m.source == source]
    if entity.materialized == "incremental" or not entity.has_ingestion_metadata or not all(
            set(INGESTION_COLUMNS) <= set(m.bronze_columns) for m in mappings):
        return ()
    return tuple(sorted(m.name for m in mappings))


def bronze_audits(project: Project) -> list[BronzeAudits]:
    """One `BronzeAudits` per bronze relation a mapping reads, by relation name."""
    metadata: dict[str, bool] = {}
    strictest: dict[tuple[str, str], Duration] = {}
    ledgers: dict[str, tuple[Entity, Mapping]] = {}
    ranked: dict[str, tuple[Entity, tuple[str, ...]]] = {}
    for e in sorted(project.entities, key=lambda e: e.name):
        for m in e.mappings:
            if e.materialized == "incremental" and e.has_ingestion_metadata:
                ledgers.setdefault(m.source, (e, m))
            ranks = ranking_mappings(e, m.source)
            if ranks:
                ranked.setdefault(m.source, (e, ranks))
            metadata[m.source] = metadata.get(m.source, False) or e.has_ingestion_metadata
            for key, value in (("warn", m.freshness_warn), ("error", m.freshness_error)):
                held = strictest.get((m.source, key))
                if value is not None and (held is None or value.hours < held.hours):
                    strictest[(m.source, key)] = value
    return [BronzeAudits(source, metadata[source], strictest.get((source, "warn")), strictest.get((source, "error")),
                         ledgers.get(source), None if source in ledgers else ranked.get(source))
            for source in sorted(metadata)]
