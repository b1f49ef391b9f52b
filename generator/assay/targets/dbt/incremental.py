"""The staged model of a `materialized: incremental` entity: a ledger of every bronze row it processed.

A full-rebuild entity re-derives `<entity>__staged` from all of bronze on every
build. An incremental entity keeps that relation instead, one row per delivery
(mapping, `_source_row_id`, `_load_id`) with the row's current route, and each
build merges into it only what changed. Everything downstream (the entity, the reject table,
the mart, the conservation audit) reads the ledger exactly as it reads a full
staged table, which is why those nodes are generated as for a full rebuild; only
the conservation audit takes another form (decisions 0400, 0406).

What one build does (docs/incremental.md says what it does not):
- reads the bronze rows not yet in the ledger under the same `_load_id` and
  `_ingested_at`, leaving out the loads bronze and the ledger hold alike (decision 0406);
- ranks every new delivery with the stored deliveries of its source row
  (decision 0014): the latest one supersedes the others, which become `deduped`
  and leave the key dedupe; a stored winner superseded this way hands its key to
  the rows that remain;
- of the latest deliveries, one older than the window start (the newest `_ingested_at`
  in the ledger minus the lag) is *late*: it is not ranked or judged, and goes to the
  reject table under the reserved rule `_late_arrival`, so that conservation
  still places it and an operator can find it; a replayed delivery is never late
  (decision 1100);
- every other latest delivery is ranked together with the stored rows of its key,
  using the same total order as a full rebuild; rows whose rank changed are
  written back: a new winner is judged, an unseated incumbent becomes
  `deduped`, and an incumbent that keeps its place is left exactly as stored.
"""

from __future__ import annotations

from ...ir.model import Entity, Mapping, Project
from ...lower.loads import (
    FINGERPRINT, OPEN, ROW_FINGERPRINT, SETTLED_ON, bronze_rows, delivery_fingerprint, ingestion_rows_ctes, ledger_loads_cte, load_id, loads_query,
    settled_ctes, source_row_fingerprint,
)
from ...lower.spelling import Sql
from ...lower.staged import (
    LATE_RULE, LINEAGE, RANKS, dedupe_rank, delivery_number, failed_rules, is_late, judged_columns, mapping_select, probes,
    route,
)
from .naming import loads_name, staged_name
from .spelling import DBT, call, jstr, qi, sql_str, sql_type

INDENT = DBT.indent
SETTLE = "assay_settle"  # Jinja: this incremental run may leave settled loads out
LOCATOR = "assay_locator"  # Jinja: the ledger's row locator column, or none (decision 0953)


def lag_hours(entity: Entity) -> int:
    return entity.incremental_lag.hours if entity.incremental_lag else 0


def rewritten_fks(entity: Entity) -> list[str]:
    """Columns an `unknown_member` rule may overwrite; the ledger also keeps their value as delivered."""
    cols = []
    for r in entity.rules_of_kind("referential"):
        if r.param("on_missing") == "unknown_member":
            fk = r.param("columns")[0][0]
            if fk not in cols:
                cols.append(fk)
    return cols


def _indent(text: str, by: str) -> str:
    return "\n".join(by + line if line else line for line in text.split("\n"))


def _unprocessed(lineage: dict) -> str:
    """On an incremental run, only the bronze rows not yet in the ledger under the same `_load_id`
    and `_ingested_at`.

    It filters bronze itself (the lineage expressions are over bronze's columns), so only new
    rows are transformed: comparing the extracted rows instead made every build transform all of
    bronze before the anti-join threw most of it away. It is a left join that keeps the rows
    without a match, not `not exists`: DuckDB runs the join as one hash join, where `not exists`
    with the NULL-safe `_ingested_at` as an `or` cost a distinct of every bronze row's identity,
    a join and an anti-join back (the ledger step at 1M rows 1.21 -> 0.73 s, decision 0405).
    `is not distinct from` is the NULL-safe equality on every engine assay targets. The join
    puts the ledger's columns beside bronze's: the mapping's select names bronze's as `b.` only
    (lower/staged.py), and `_mapping`, a literal, is never NULL on a ledger row.

    A load bronze and the ledger hold alike (`assay_settled`, decision 0406) has no new row: its
    rows are left out of both sides before the join, so neither side is read beyond its
    `_load_id` for it. A row without a `_load_id` belongs to no settled load."""
    mapping, load = lineage["_mapping"], lineage["_load_id"]
    return "\n".join(
        [
            f"\n{INDENT}{{% if assay.keyed_is_incremental() %}}",
            f"{INDENT}{{% if {SETTLE} %}}",
            f"{INDENT}left join (",
            f"{INDENT * 2}select x._mapping, x._source_row_id, x._load_id, x._ingested_at",
            f"{INDENT * 2}from {{{{ this }}}} as x",
            f"{INDENT * 2}inner join {OPEN} as v on v._mapping = x._mapping and v._load_id = x._load_id",
            f"{INDENT}) as l",
            f"{INDENT}{{% else %}}",
            f"{INDENT}left join {{{{ this }}}} as l",
            f"{INDENT}{{% endif %}}",
            f"{INDENT * 2}on l._mapping = {mapping} and l._source_row_id = {lineage['_source_row_id']}"
            f" and l._load_id = {load}",
            f"{INDENT * 2}and l._ingested_at is not distinct from {lineage['_ingested_at']}",
            f"{INDENT}where l._mapping is null",
            f"{INDENT}{{% endif %}}",
        ]
    )


def _extracted(entity: Entity, project: Project) -> str:
    """New bronze rows of every mapping, each marked late or not; already processed rows are skipped."""
    window_start = call("incremental_window_start", "this", str(lag_hours(entity)))
    parts = []
    for m in entity.mappings:
        fingerprint = f"{delivery_fingerprint(DBT, m)} as {FINGERPRINT}"
        # an incremental run reads bronze's rows of the unsettled loads only (decision 0409)
        source = (f"{{% if {SETTLE} %}}{bronze_rows(DBT, m, OPEN, INDENT)}{{% else %}}"
                  f"{DBT.bronze(m.source)}{{% endif %}}")
        inner = _indent(mapping_select(DBT, entity, m, bronze_filter=_unprocessed, extra=(fingerprint,), source=source), INDENT)
        parts.append(
            "\n".join(
                [
                    f"{INDENT}select",
                    f"{INDENT * 2}x.*,",
                    f"{INDENT * 2}{{% if assay.keyed_is_incremental() %}}{is_late(DBT, 'x', window_start)}"
                    "{% else %}false{% endif %} as _late",
                    f"{INDENT}from (",
                    inner,
                    f"{INDENT}) as x",
                ]
            )
        )
    return f"\n{INDENT}union all\n".join(parts)


def _row_columns(entity: Entity, source: str | None = None) -> list[str]:
    """The columns every row carries before ranking, in one fixed order.

    From the ledger (`source` = its alias) a rewritten foreign key is read back as
    delivered, so a row judged again probes its parent with the value the source sent.
    """
    fks = rewritten_fks(entity)
    cols = []
    for c in entity.columns:
        if source is None:
            cols.append(qi(c.name))
        elif c.name in fks:
            cols.append(f"{source}._orig__{c.name} as {qi(c.name)}")
        else:
            cols.append(f"{source}.{qi(c.name)}")
    pre = f"{source}." if source else ""
    cols += [f"{pre}{c}" for c in LINEAGE]
    cols += [f"{pre}_c__{c.name}" for c in entity.columns]
    cols += [f"{source}._orig__{fk}" if source else f"{qi(fk)} as _orig__{fk}" for fk in fks]
    cols.append(f"{pre}_late")
    # A ledger stored before it kept fingerprints has none to read back (decision 0406): a NULL of
    # the fingerprint's own type, which PostgreSQL needs to match the new rows' in the union.
    typed_null = f"case when false then {DBT.call('delivery_fingerprint', Sql('null'), Sql('null'))} end"
    cols.append(f"{{% if {SETTLE} %}}{source}.{FINGERPRINT}{{% else %}}{typed_null}{{% endif %}} as {FINGERPRINT}" if source else FINGERPRINT)
    return cols


def _delivered_key(entity: Entity, alias: str) -> list[str]:
    """A ledger row's key as delivered (before an `unknown_member` rewrite), named as the key."""
    fks = rewritten_fks(entity)
    return [f"{alias}.{'_orig__' + k if k in fks else qi(k)} as {qi(k)}" for k in entity.key]


def _held(entity: Entity) -> str:
    """The deliveries bronze holds now, by mapping: what tells an append-only feed's earlier
    delivery (still there, kept in the ledger as superseded) from one an upserting loader
    overwrote (gone, replaced in the ledger by its new delivery). Bronze holds every stored
    delivery of a settled load, so only the other loads are read (`prior` asks `_settled`)."""
    string = sql_type("string")
    parts = []
    for m in entity.mappings:
        load = load_id(DBT, m)
        parts.append(
            f"{INDENT}select {sql_str(m.name)} as _mapping, cast(b._source_row_id as {string}) as _source_row_id, "
            f"{load} as _load_id from {{% if {SETTLE} %}}{bronze_rows(DBT, m, OPEN, INDENT)}"
            f"{{% else %}}{{{{ source('bronze', {jstr(m.source)}) }}}}{{% endif %}} as b"
        )
    return "held as (\n" + f"\n{INDENT}union all\n".join(parts) + "\n),"


def _prior(entity: Entity) -> str:
    """The stored rows this build ranks again, minus the rows a new delivery replaces.

    Two kinds: every stored delivery of a source row delivered again (the delivery order
    decides which one is latest now), and the latest stored deliveries of every key a new
    delivery or a superseded one touches (the key dedupe decides its winner again). A stored
    delivery is replaced when the new one is the same delivery (`_load_id`), or when bronze no
    longer holds it (an upserting loader overwrote it with the new one).

    Where the engine has a row locator (`assay.row_locator()`), the stored rows are found by
    their identity and key columns alone and then read whole by locator, and the stored
    deliveries of the redelivered source rows are found once (`restated`) for both uses
    (decision 0953).
    """
    fks = rewritten_fks(entity)
    key_match = " and ".join(f"t.{qi(k)} = s.{'_orig__' + k if k in fks else qi(k)}" for k in entity.key)
    same_row = "x._mapping = l._mapping and x._source_row_id = l._source_row_id"
    held = "h._mapping = l._mapping and h._source_row_id = l._source_row_id and h._load_id = l._load_id"
    cols = _row_columns(entity, "l") + ["true as _prior", "l._dedupe_rank as _old_rank", "l._delivery_rank as _old_delivery_rank"]
    touched_new = ", ".join(qi(k) for k in entity.key)
    redelivered = "(select distinct _mapping, _source_row_id from extracted)"
    touched_old = ", ".join(_delivered_key(entity, "l"))
    locator = "{% if " + LOCATOR + " %}"
    # the latest stored deliveries of the touched keys, the others once only. NULL key parts
    # never compare equal, so rows without an identity are never re-ranked; a superseded or
    # late stored row has no place in any key's order.
    keyed = [
        f"{INDENT * 3}from {{{{ this }}}} as s",
        f"{INDENT * 3}inner join (select distinct {touched_new} from touched) as t",
        f"{INDENT * 4}on {key_match}",
        f"{INDENT * 3}left join {redelivered} as r",
        f"{INDENT * 4}on r._mapping = s._mapping and r._source_row_id = s._source_row_id",
        f"{INDENT * 3}where r._source_row_id is null and s._delivery_rank = 1 and not s._late",
    ]
    return "\n".join(
        [
            _held(entity),
            "",
            # the stored deliveries of every source row delivered again
            "restated as (",
            f"{INDENT}select {locator}l.{{{{ {LOCATOR} }}}} as _locator, {{% endif %}}{touched_old} from {{{{ this }}}} as l",
            f"{INDENT}inner join {redelivered} as x",
            f"{INDENT * 2}on {same_row}",
            "),",
            "",
            "touched as (",
            f"{INDENT}select {touched_new} from extracted",
            f"{INDENT}union all",
            # a stored delivery about to be superseded may hold a key that another row must now win
            f"{INDENT}select {touched_new} from restated",
            "),",
            "",
            "prior as (",
            f"{INDENT}select",
            ",\n".join(f"{INDENT * 2}{c}" for c in cols),
            # The few stored rows a new delivery touches are found first, by joins whose other side
            # is the new rows made distinct; the tests against bronze (`held`) then run on those rows
            # only. Asked of every ledger row, as one condition, they cost half the ledger step
            # (decision 0404); as EXISTS under an OR, DuckDB probed all of the ledger for each (1.8 s
            # of a 10M-row ledger's 5.5 s step, against 0.1 s for the two joins; decision 0406).
            # Joins, not EXISTS, also because Spark takes EXISTS in a filter only.
            f"{INDENT}from (",
            f"{INDENT * 2}select n.*{{% if {SETTLE} %}}, u._mapping is not null as _settled{{% endif %}}",
            f"{INDENT * 2}from (",
            locator,
            # Read whole by locator: a join on the key reads every column of every row it passes
            # (0.25 s of a 10M-row ledger step's 0.86 s on DuckDB; decision 0953).
            f"{INDENT * 3}select s.*, f._redelivered",
            f"{INDENT * 3}from {{{{ this }}}} as s",
            f"{INDENT * 3}inner join (",
            f"{INDENT * 3}select _locator, true as _redelivered from restated",
            f"{INDENT * 3}union all",
            f"{INDENT * 3}select s.{{{{ {LOCATOR} }}}} as _locator, false as _redelivered",
            *keyed,
            f"{INDENT * 3}) as f on f._locator = s.{{{{ {LOCATOR} }}}}",
            "{% else %}",
            f"{INDENT * 3}select s.*, true as _redelivered",
            f"{INDENT * 3}from {{{{ this }}}} as s",
            f"{INDENT * 3}inner join {redelivered} as r",
            f"{INDENT * 4}on r._mapping = s._mapping and r._source_row_id = s._source_row_id",
            f"{INDENT * 3}union all",
            f"{INDENT * 3}select s.*, false as _redelivered",
            *keyed,
            "{% endif %}",
            f"{INDENT * 2}) as n",
            f"{INDENT * 2}{{% if {SETTLE} %}}left join assay_settled as u on u._mapping = n._mapping and u._load_id = n._load_id{{% endif %}}",
            f"{INDENT}) as l",
            f"{INDENT}where not exists (select 1 from extracted as x where {same_row} and x._load_id = l._load_id)",
            f"{INDENT * 2}and (not l._redelivered or {{% if {SETTLE} %}}l._settled or {{% endif %}}exists (select 1 from held as h where {held}))",
            "),",
        ]
    )


def incremental_staged_sql(entity: Entity, project: Project, header: str) -> str:
    int_t = sql_type("int")
    row_cols = _row_columns(entity)
    joins, probe_cols = probes(DBT, entity, project)
    fks = rewritten_fks(entity)
    # The full rebuild's staged columns first, so every downstream node reads the ledger unchanged.
    staged_cols = [qi(c.name) for c in entity.columns] + [*LINEAGE, *RANKS]
    config = (
        "{{ config(materialized=assay.keyed_materialization(), unique_key='_ledger_id', incremental_strategy='delete+insert', "
        "on_schema_change='append_new_columns', schema=" + jstr(project.schema("silver"))
        + ", tags=['assay', 'assay_staged', 'assay_incremental']) }}"
    )
    fks_read = [f"_orig__{fk}" for fk in fks]
    read_back = [c.name for c in entity.columns if c.name not in fks] + list(LINEAGE) + [f"_c__{c.name}" for c in entity.columns]
    read_back += fks_read + ["_late", "_dedupe_rank", "_delivery_rank"]
    lines = [
        header,
        config,
        loads_dependency(entity),
        call("incremental_ledger_check", "this", "[" + ", ".join(jstr(c) for c in read_back) + "]"),
        f"{{% set {SETTLE} = assay.ledger_fingerprinted(this) %}}",
        f"{{% set {LOCATOR} = assay.row_locator() %}}",
        "",
        "with",
        f"{{% if {SETTLE} %}}",
        ",\n\n".join(settled_ctes(DBT, entity, "{{ this }}", before_write=True)) + ",",
        "",
        "{% endif %}",
        "extracted as (",
        _extracted(entity, project),
        "),",
        "",
        "{% if assay.keyed_is_incremental() %}",
        _prior(entity),
        "{% endif %}",
        "",
        "pool as (",
        f"{INDENT}select " + ", ".join(row_cols) + f", false as _prior, cast(null as {int_t}) as _old_rank, cast(null as {int_t}) as _old_delivery_rank",
        f"{INDENT}from extracted",
        "{% if assay.keyed_is_incremental() %}",
        f"{INDENT}union all",
        f"{INDENT}select * from prior",
        "{% endif %}",
        "),",
        "",
        # Every delivery of a source row in the pool is here (new, and all stored ones of it), so
        # this is the source row's whole delivery order; a row pulled in for its key only is the
        # stored latest delivery of an untouched source row, rank 1 again.
        "delivered as (",
        f"{INDENT}select p.*, case when _source_row_id is null then 1 else {delivery_number(DBT)} end as _delivery_rank",
        f"{INDENT}from pool as p",
        "),",
        "",
        "-- late rows take no part in the key order: ranking them would unseat winners of rows already published",
        "ranked as (",
        f"{INDENT}select d.*, {dedupe_rank(DBT, entity, '_delivery_rank = 1 and not _late')} as _dedupe_rank",
        f"{INDENT}from delivered as d",
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
        ",\n".join(
            [f"{INDENT * 2}{c}" for c in judged_columns(DBT, entity)]
            + [f"{INDENT * 2}_orig__{fk}" for fk in fks]
            # a superseded late delivery is no longer held: its source row's latest delivery speaks
            + [f"{INDENT * 2}_late and _delivery_rank = 1 as _late", f"{INDENT * 2}{FINGERPRINT}"]
            + [f"{INDENT * 2}{c}" for c in ("_prior", "_old_rank", "_old_delivery_rank")]
        ),
        f"{INDENT}from probed",
        ")",
        "",
        "select",
        ",\n".join(f"{INDENT}{c}" for c in staged_cols) + ",",
        f"{INDENT}{failed_rules(DBT, entity, ((LATE_RULE, '_late'),))},",
        "\n".join(route(DBT, entity, late=True)) + ",",
        # Markers, not rule outcomes, are kept: a row promoted later is judged by the rules of that build.
        *[f"{INDENT}_c__{c.name}," for c in entity.columns],
        # One ledger row per delivery. The latest delivery of a source row takes the source row's id,
        # so a new latest delivery replaces the row of the one it supersedes (rewritten under its
        # delivery's id when bronze still holds it, gone when an upserting loader overwrote it).
        f"{INDENT}case when _delivery_rank = 1 then _mapping || '|' || _source_row_id",
        f"{INDENT * 2}else _mapping || '|' || _source_row_id || '|' || _load_id end as _ledger_id,",
        f"{INDENT}_late,",
        f"{INDENT}{FINGERPRINT},",
        f"{INDENT}{source_row_fingerprint(DBT)} as {ROW_FINGERPRINT},",
        *[f"{INDENT}_orig__{fk}," for fk in fks],
        f"{INDENT}{call('run_timestamp')} as _processed_at",
        "from judged",
        # An incumbent whose ranks did not move keeps its stored judgement: it is not processed twice.
        # A superseded row has no key rank, hence the null-safe comparison.
        "where not _prior or _old_delivery_rank <> _delivery_rank or coalesce(_old_rank, 0) <> coalesce(_dedupe_rank, 0)",
        "",
    ]
    return "\n".join(lines)


def loads_sql(entity: Entity, project: Project, header: str) -> str:
    """`<entity>__loads`: bronze's per-load counts and fingerprint sums, and whether the ledger held
    each load alike before this build (`_settled`), counted once per build (decision 0411). The
    ingestion-metadata test and the ledger step (both before the ledger's write) and the
    conservation audit (the counts only, after it) each computed them; they read this table
    instead when the build that runs them built it (`DbtSpelling.counted_loads`). The ledger is
    found at run time, not by `ref`: the ledger step depends on this model."""
    config = ("{{ config(materialized='table', schema=" + jstr(project.schema("silver"))
              + ", tags=['assay', 'assay_incremental']) }}")
    held = "{% if ledger is not none %}"
    return "\n".join([
        header,
        config,
        "{% set ledger = assay.fingerprinted_ledger(" + jstr(staged_name(entity)) + ") %}",
        "",
        "with assay_bronze_loads as (",
        loads_query(DBT, entity),
        ")" + held + ",",
        ledger_loads_cte(DBT, "{{ ledger }}") + "{% endif %}",
        "",
        f"select n._mapping, n._load_id, n._rows, n._fp, {held}o._mapping is not null{{% else %}}false{{% endif %}} as _settled",
        "from assay_bronze_loads as n",
        f"{held}left join assay_ledger_loads as o on {SETTLED_ON}{{% endif %}}",
        "",
    ])


def loads_dependency(entity: Entity) -> str:
    """The dependency on `<entity>__loads` of a node that reads it only when it was built in the
    same invocation: dbt sees a `ref` inside an `if` only when the parse takes that branch."""
    return "-- depends_on: {{ ref(" + jstr(loads_name(entity)) + ") }}"


def late_arrivals_test(entity: Entity) -> dict:
    """A warning on every build while rows that arrived older than the window sit unprocessed."""
    return {
        "assay.assay_late_arrivals": {
            "name": f"assay_late_arrivals__{entity.name}",
            "config": {"severity": "warn"},
        }
    }



def ingestion_rows_name(source: str) -> str:
    """The macro that gives a bronze relation's ingestion-metadata test the rows it must read."""
    return f"assay_ingestion_rows__{source}"


def ingestion_rows_macro(entity: Entity, mapping: Mapping, header: str) -> str:
    """The CTEs ending in `assay_ingestion_rows` (`lower.loads.ingestion_rows_ctes`) for the
    ledger relation the test passes in (decision 0408): the test finds the ledger at run time,
    since a `ref` would make it wait for the ledger it is meant to guard."""
    ctes = ingestion_rows_ctes(DBT, entity, mapping, "{{ ledger }}")
    return "\n".join([
        header,
        "{% macro " + ingestion_rows_name(mapping.source) + "(ledger) %}",
        "{%- set ctes -%}",
        ",\n".join(ctes),
        "{%- endset -%}",
        "{{ return(ctes) }}",
        "{% endmacro %}",
        "",
    ])


def ingestion_test_arguments(entity: Entity, mapping: Mapping) -> dict:
    """The metadata test's arguments where a ledger bounds it: the macro above and the ledger model."""
    return {"rows": ingestion_rows_name(mapping.source), "ledger": staged_name(entity),
            # a ref, so that the test runs after the loads it reads (and before the ledger it guards)
            "loads": f"ref({jstr(loads_name(entity))})"}
