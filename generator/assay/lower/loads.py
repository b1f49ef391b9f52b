"""Loads bronze and an incremental entity's ledger hold alike (decision 0406).

The ledger keeps, per row, a fingerprint of the bronze delivery it came from (`_bronze_fp`: the
raw `_source_row_id` and `_ingested_at`, unparsed). Per mapping and `_load_id`, bronze's row
count and fingerprint sum against the ledger's (rows without a fingerprint not counted) tell
which loads are *settled*: the ledger holds exactly bronze's deliveries of them. The ledger step
leaves settled loads out of its search for new rows; the conservation audit proves them by
per-load sums instead of delivery by delivery. Both read the same CTEs, written here once.
"""

from __future__ import annotations

from ..ir.model import Entity, Mapping
from .spelling import Spelling, Sql
from .staged import diverted

FINGERPRINT = "_bronze_fp"  # a ledger row's delivery fingerprint
OPEN = "assay_open_loads"  # bronze's loads that are not settled, by mapping


def raw(mapping: Mapping, name: str) -> str:
    """Bronze's own column `name` of a mapping (alias `b`), or NULL where its bronze has none."""
    return f"b.{name}" if name in mapping.bronze_columns else "null"


def delivery_fingerprint(sp: Spelling, mapping: Mapping) -> str:
    """A bronze row's delivery fingerprint, over bronze's raw metadata (alias `b`)."""
    return sp.call("delivery_fingerprint", Sql(raw(mapping, "_source_row_id")), Sql(raw(mapping, "_ingested_at")))


def load_id(sp: Spelling, mapping: Mapping) -> str:
    """A bronze row's `_load_id` as the ledger holds it (text)."""
    return sp.cast(raw(mapping, "_load_id"), "string", False)


ROUTE_SUMS = ("kept", "diverted")  # the ledger's sides the conservation audit sums per load
ROW_FINGERPRINT = "_row_fp"  # a ledger row's `source_row_fingerprint`, written with the row


def _side(sp: Spelling, side: str) -> str:
    """The condition of a ledger row on one side of ROUTE_SUMS."""
    return sp.sql("_route = 'kept'") if side == "kept" else diverted(sp)


def source_row_fingerprint(sp: Spelling) -> str:
    """A row's fingerprint of its `_source_row_id` alone: what the conservation audit sums per load
    on every side (the entity, the reject table and the ledger), where `_ingested_at` is not kept."""
    return sp.call("delivery_fingerprint", Sql("_source_row_id"), Sql("null"))


def stored_row_fingerprint(sp: Spelling) -> str:
    """A ledger row's `source_row_fingerprint` as the ledger step wrote it (`ROW_FINGERPRINT`), so
    that the audit sums integers instead of hashing every ledger row on every build; a row an
    earlier version of assay wrote has none and is hashed here (the column is appended by
    `on_schema_change`, NULL in the rows already stored)."""
    return sp.sql("coalesce({}, {})", ROW_FINGERPRINT, source_row_fingerprint(sp))


def route_sums(sp: Spelling) -> list[str]:
    """Per load, the count and `source_row_fingerprint` sum of the ledger's rows of each side of
    ROUTE_SUMS (`_kept_rows`, `_kept_fp`, ...), over `assay_ledger_routes` (one row per load and
    route): aggregates for the query that groups those rows by load."""
    out = []
    for side in ROUTE_SUMS:
        when = _side(sp, side)
        out.append(sp.sql("sum(case when {} then _n end) as _{}_rows", when, side))
        out.append(sp.sql("sum(case when {} then _row_fp_sum end) as _{}_fp", when, side))
    return out


def loads_query(sp: Spelling, entity: Entity, mappings: tuple[Mapping, ...] = ()) -> str:
    """Bronze's loads, per mapping: `_mapping`, `_load_id`, `_rows` and `_fp` (the sum of the
    deliveries' fingerprints). Bronze is read for its three metadata columns only. `mappings`
    narrows it to those mappings (default: all of the entity's)."""
    i = sp.indent
    parts = [
        sp.sql("{i}select {name} as _mapping, {load} as _load_id, count(*) as _rows, {fp} as _fp\n"
               "{i}from {src} as b\n{i}group by {load}", i=i, name=sp.string(m.name), load=load_id(sp, m),
               fp=sp.call("fingerprint_sum", Sql(delivery_fingerprint(sp, m))), src=sp.bronze(m.source))
        for m in (mappings or entity.mappings)
    ]
    return sp.sql("\n{}union all\n", i).join(parts)


SETTLED_ON = "o._mapping = n._mapping and o._load_id = n._load_id and o._rows = n._rows and o._fp = n._fp"


def ledger_loads_cte(sp: Spelling, ledger: str, mappings: tuple[Mapping, ...] = (), routes: bool = False) -> str:
    """`assay_ledger_loads as (...)`: the ledger's rows with a fingerprint, counted and summed per
    mapping and load (only `mappings`' when given). With `routes`, it also carries `route_sums`,
    so that the ledger is read once: it is then grouped by load and route first
    (`assay_ledger_routes`, plain sums), which costs less than conditional aggregates over every
    row, and those few rows are summed per load."""
    i = sp.indent
    where = [sp.sql("{}where _mapping in ({})", i, ", ".join(sp.string(m.name) for m in mappings))] if mappings else []
    fp_sum = lambda expr: sp.call("fingerprint_sum", Sql(expr))  # noqa: E731
    if not routes:
        return "\n".join([
            "assay_ledger_loads as (",
            sp.sql("{}select _mapping, _load_id, count({fp}) as _rows, {sum} as _fp", i, fp=FINGERPRINT, sum=fp_sum(FINGERPRINT)),
            sp.sql("{}from {}", i, ledger),
            *where,
            sp.sql("{}group by _mapping, _load_id", i),
            ")",
        ])
    return "\n".join([
        "assay_ledger_routes as (",
        sp.sql("{}select _mapping, _load_id, _route, count({fp}) as _fps, {sum} as _fp_sum, count(*) as _n, {rows} as _row_fp_sum",
               i, fp=FINGERPRINT, sum=fp_sum(FINGERPRINT), rows=fp_sum(stored_row_fingerprint(sp))),
        sp.sql("{}from {}", i, ledger),
        *where,
        sp.sql("{}group by _mapping, _load_id, _route", i),
        "),",
        "assay_ledger_loads as (",
        sp.sql("{}select _mapping, _load_id, sum(_fps) as _rows, sum(_fp_sum) as _fp", i)
        + "".join(",\n" + i * 2 + s for s in route_sums(sp)),
        sp.sql("{}from assay_ledger_routes", i),
        sp.sql("{}group by _mapping, _load_id", i),
        ")",
    ])


def settled_ctes(sp: Spelling, entity: Entity, ledger: str, mappings: tuple[Mapping, ...] = (),
                 routes: bool = False, before_write: bool = False) -> list[str]:
    """The CTEs `assay_bronze_loads`, `assay_ledger_loads`, `assay_settled` (mapping, load) and
    `assay_open_loads`, each as `name as (...)`, for a WITH list. `assay_bronze_loads` is
    `loads_query`, which a target may read from where the build counted it once
    (`Spelling.counted_loads`); so is `assay_settled` for a node that runs `before_write` of the
    ledger, which sees the ledger the counting saw. `mappings` narrows them to those mappings
    (default: all of the entity's). `routes`: see `ledger_loads_cte`."""
    i = sp.indent
    narrowed = mappings if mappings and mappings != entity.mappings else ()
    mappings = mappings or entity.mappings
    settled = "\n".join([
        sp.sql("{}select n._mapping, n._load_id", i),
        sp.sql("{}from assay_bronze_loads as n", i),
        sp.sql("{}inner join assay_ledger_loads as o", i),
        sp.sql("{}on {}", i * 2, SETTLED_ON),
    ])
    if before_write:
        settled = sp.counted_loads(entity, mappings, settled, settled=True)
    return [
        "assay_bronze_loads as (\n" + sp.counted_loads(entity, mappings, loads_query(sp, entity, mappings)) + "\n)",
        ledger_loads_cte(sp, ledger, narrowed, routes),
        "assay_settled as (\n" + settled + "\n)",
        _without(sp, OPEN, [sp.sql("{}select n._mapping, n._load_id from assay_bronze_loads as n", i)],
                 "assay_settled as s", "s._mapping = n._mapping and s._load_id = n._load_id", "s._mapping"),
    ]


def rows_in_loads(sp: Spelling, relation: str, alias: str, columns: str, mapping: str, load: str, own_load: str,
                  loads: str, under: str = "") -> str:
    """A from-item (without its alias) of the rows of `relation` (as `alias`) in the loads the CTE
    `loads` lists (`_mapping`, `_load_id`), matched by the SQL `mapping` and `load`, and the rows
    whose `own_load` (their `_load_id` as stored) is NULL, which belong to no load; each row as
    `columns`.

    An inner join on the load, not a left join kept where nothing matched: the engine then filters
    the scan by the few loads listed (DuckDB skips the row groups of other loads by their min/max,
    decision 0409) instead of reading every column of every row first. The rows without a
    `_load_id` come back through a second branch, since `=` never matches them. `under` indents
    every line after the first, for a from-item placed after a clause indented that much."""
    i = sp.indent
    return ("\n" + under).join([
        "(",
        sp.sql("{}select {} from {} as {}", i, columns, relation, alias),
        sp.sql("{}inner join {} as u on u._mapping = {} and u._load_id = {}", i, loads, mapping, load),
        sp.sql("{}union all", i),
        sp.sql("{}select {} from {} as {} where {} is null", i, columns, relation, alias, own_load),
        ")",
    ])


def bronze_rows(sp: Spelling, mapping: Mapping, loads: str, under: str = "") -> str:
    """`rows_in_loads` of `mapping`'s bronze rows, every column (alias `b`)."""
    return rows_in_loads(sp, sp.bronze(mapping.source), "b", "b.*", sp.string(mapping.name), load_id(sp, mapping),
                         raw(mapping, "_load_id"), loads, under)


def ingestion_rows_ctes(sp: Spelling, entity: Entity, mapping: Mapping, ledger: str) -> list[str]:
    """The CTEs ending in `assay_ingestion_rows`: bronze's three metadata columns (raw) of the
    loads of `mapping`'s source that its ledger does not prove clean (decision 0408).

    A settled load's bronze rows are its ledger rows (the raw `_source_row_id` and `_ingested_at`,
    as multisets), so what the ingestion-metadata test asks of them can be read from the ledger:
    a missing `_source_row_id`, a missing or unparseable `_ingested_at` (the ledger's parse is
    NULL), a `_source_row_id` repeated within the load (one of the repeats has `_delivery_rank` >
    1, so only those source rows are grouped). A settled load with none of these is clean; every
    other load (a `_load_id` that is NULL never settles) is read from bronze and tested in full,
    so the test says exactly what it said of all of bronze."""
    i = sp.indent
    name, load = sp.string(mapping.name), load_id(sp, mapping)
    faults = "\n".join([
        "assay_ledger_faults as (",
        sp.sql("{}select l._load_id from {} as l", i, ledger),
        sp.sql("{}where l._mapping = {} and (l._source_row_id is null or l._ingested_at is null)", i, name),
        sp.sql("{}union all", i),
        sp.sql("{}select l._load_id from {} as l", i, ledger),
        sp.sql("{}inner join (select distinct _source_row_id from {} where _mapping = {} and _delivery_rank > 1) as r",
               i, ledger, name),
        sp.sql("{}on r._source_row_id = l._source_row_id", i * 2),
        sp.sql("{}where l._mapping = {}", i, name),
        sp.sql("{}group by l._load_id, l._source_row_id", i),
        sp.sql("{}having count(*) > 1", i),
        ")",
    ])
    clean = _without(sp, "assay_clean_loads", [sp.sql("{}select s._mapping, s._load_id from assay_settled as s", i)],
                     "(select distinct _load_id from assay_ledger_faults) as f", "f._load_id = s._load_id", "f._load_id")
    unclean = _without(sp, "assay_unclean_loads", [sp.sql("{}select n._mapping, n._load_id from assay_bronze_loads as n", i)],
                       "assay_clean_loads as c", "c._mapping = n._mapping and c._load_id = n._load_id", "c._mapping")
    rows = "\n".join([
        "assay_ingestion_rows as (",
        sp.sql("{}select b._load_id, b._ingested_at, b._source_row_id", i),
        sp.sql("{}from {} as b", i, bronze_rows(sp, mapping, "assay_unclean_loads", i)),
        ")",
    ])
    return settled_ctes(sp, entity, ledger, (mapping,), before_write=True) + [faults, clean, unclean, rows]


def _without(sp: Spelling, name: str, head: list[str], other: str, on: str, missing: str) -> str:
    """The CTE `name`: the rows `head` selects that `other` has no match for (a left join kept
    where nothing matched, which every engine plans as an anti-join)."""
    i = sp.indent
    return "\n".join([f"{name} as (", *head, sp.sql("{}left join {} on {}", i, other, on), sp.sql("{}where {} is null", i, missing), ")"])

