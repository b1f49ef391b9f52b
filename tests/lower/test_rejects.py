"""Reject history and resolution are decided once (lower/rejects.py) and hold on a real engine.

The same decision reaches the engine two ways: SQLMesh's model resolves in its own query
(`resolve=True`), dbt's model does not and the package stamps `resolving_query`'s rows after the
entity publishes. Both are run here on DuckDB over one story and must leave the same table.
"""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import duckdb

from assay.lower.rejects import Prior, reject_query, resolving_query
from tests.lower.duck_spelling import NOW, RUN, DuckSpelling


ENTITY = SimpleNamespace(name="item", key=("item_id",), redact=(), mappings=(SimpleNamespace(name="m", source="src"),),
                         materialized="table")
COLUMNS = ("reject_id", "first_seen", "last_seen", "failed_rules", "resolved_at", "resolution", "last_evaluated_at",
           "last_run_id")


def _story() -> duckdb.DuckDBPyConnection:
    """Four source rows with an open reject row each, and this build's staged routes.

    r1 is diverted again by a newer delivery; r2's latest delivery is kept; r3's latest delivery
    lost its key; r4's newer delivery is kept but an older one is superseded (`deduped`, rank 2)
    and must not resolve anything beyond what the latest says; r5 is newly diverted."""
    con = duckdb.connect()
    con.execute(
        """
        create table staged as select * from (values
          ('m', 'r1', 'L2', timestamp '2026-01-02', 'i1', 1, 'quarantined', ['rule_a']),
          ('m', 'r2', 'L2', timestamp '2026-01-02', 'i2', 1, 'kept', []::varchar[]),
          ('m', 'r3', 'L2', timestamp '2026-01-02', 'i3', 1, 'deduped', []::varchar[]),
          ('m', 'r4', 'L1', timestamp '2026-01-01', 'i4', 2, 'deduped', []::varchar[]),
          ('m', 'r4', 'L2', timestamp '2026-01-02', 'i4', 1, 'quarantined', ['rule_b']),
          ('m', 'r5', 'L2', timestamp '2026-01-02', 'i5', 1, 'failed', ['rule_c'])
        ) as t(_mapping, _source_row_id, _load_id, _ingested_at, item_id, _delivery_rank, _route, _failed_rules)
        """
    )
    con.execute(
        "create table bronze_src as select _source_row_id, _load_id, item_id from staged"
    )
    _open_rows(con, "r1", "r2", "r3", "r4")
    return con


def _open_rows(con, *ids: str) -> None:
    """The reject table holding an open row of mapping `m` per source row id, diverted on 2026-01-01
    by load L1, under the id a relation one mapping reads has."""
    values = ", ".join(f"('{i}')" for i in ids)
    con.execute(
        f"""
        create table item__reject as select
          md5('src|' || id) as reject_id, 'item' as entity, 'm' as mapping, 'src' as source_relation,
          id as _source_row_id, 'L1' as _load_id, timestamp '2026-01-01' as first_seen,
          timestamp '2026-01-01' as last_seen, ['old'] as failed_rules, 'quarantine' as disposition,
          '{{}}' as key_values, '{{}}' as raw, cast(null as timestamp) as resolved_at,
          cast(null as varchar) as resolution, timestamp '2026-01-01' as last_evaluated_at,
          'run-1' as last_run_id
        from (values {values}) as v(id)
        """
    )


def _table(con) -> dict:
    rows = con.execute(f"select {', '.join(COLUMNS)} from item__reject order by _source_row_id").fetchall()
    return {r[0]: r[1:] for r in rows}


def _upsert(con, query: str) -> None:
    """What both tools do with the query's rows: replace the rows of the same reject_id."""
    con.execute(f"create temp table fresh as {query}")
    con.execute("delete from item__reject where reject_id in (select reject_id from fresh)")
    con.execute("insert into item__reject by name select * from fresh")
    con.execute("drop table fresh")


def test_history_and_resolution_on_duckdb():
    con = _story()
    sp = DuckSpelling()
    _upsert(con, reject_query(sp, ENTITY, Prior("item__reject"), resolve=True))
    got = {con.execute(f"select md5('src|{k}')").fetchone()[0]: k for k in ("r1", "r2", "r3", "r4", "r5")}
    table = {got[k]: v for k, v in _table(con).items()}
    t1, t2, now = "2026-01-01 00:00:00", "2026-01-02 00:00:00", "2026-01-03 00:00:00"
    as_text = {k: tuple(str(x) if x is not None else None for x in v) for k, v in table.items()}
    run = RUN.strip("'")
    # first_seen sticky, last_seen follows the delivery, rules re-stamped, still open; every row
    # this build wrote names it (decision 0944)
    assert as_text["r1"] == (t1, t2, "['rule_a']", None, None, now, run)
    # admitted / deduped by this build's latest delivery: resolved, history untouched
    assert as_text["r2"] == (t1, t1, "['old']", now, "admitted", now, run)
    assert as_text["r3"] == (t1, t1, "['old']", now, "deduped", now, run)
    # the superseded earlier delivery speaks for nothing: the latest one diverts it again
    assert as_text["r4"] == (t1, t2, "['rule_b']", None, None, now, run)
    # newly diverted: first seen now
    assert as_text["r5"] == (t2, t2, "['rule_c']", None, None, now, run)


def _resolve_as_the_package_does(con, entity) -> None:
    """The default__reject_resolution_sql UPDATE of the dbt package, spelled for this test."""
    con.execute(
        f"""
        update item__reject set resolved_at = {NOW}, resolution = s.resolution, last_evaluated_at = {NOW},
          last_run_id = {RUN}
        from ({resolving_query(DuckSpelling(), entity)}) as s
        where item__reject.resolved_at is null
          and s._source_row_id = item__reject._source_row_id and s.source_relation = item__reject.source_relation
          and s.mapping = item__reject.mapping
        """
    )


def test_resolving_after_publishing_leaves_the_same_table():
    """dbt's way (model without resolution, then the package's UPDATE over `resolving_query`)
    and SQLMesh's way (resolution inside the model's query) give one table."""
    sp = DuckSpelling()
    in_query = _story()
    _upsert(in_query, reject_query(sp, ENTITY, Prior("item__reject"), resolve=True))
    after = _story()
    _upsert(after, reject_query(sp, ENTITY, Prior("item__reject", lambda when, otherwise: when), resolve=False))
    _resolve_as_the_package_does(after, ENTITY)
    assert _table(after) == _table(in_query)
    assert sorted(r[4] for r in _table(after).values() if r[4]) == ["admitted", "deduped"]


def test_a_first_build_has_no_prior():
    """dbt's first build: the table does not exist, so nothing is read from it."""
    sp = DuckSpelling()
    con = _story()
    query = reject_query(sp, ENTITY, Prior("no_such_table", lambda when, otherwise: otherwise), resolve=False)
    assert "no_such_table" not in query
    rows = con.execute(f"select _source_row_id, first_seen, last_seen from ({query}) order by 1").fetchall()
    assert [r[0] for r in rows] == ["r1", "r4", "r5"]
    assert all(r[1] == r[2] for r in rows)


def test_an_incremental_entity_writes_only_the_reject_rows_behind_its_ledger():
    """Decision 0407: an incremental entity's ledger stamps a row `_processed_at` only when it
    writes it, so the reject rows to write are the diverted ledger rows written after their open
    reject row was, or that have none. The others are left as they are (their last_evaluated_at
    too); a ledger row a run wrote without its reject step is caught up by the next build."""
    con = duckdb.connect()
    t1, t2 = "timestamp '2026-01-01'", "timestamp '2026-01-02'"
    con.execute(f"""
        create table staged as select * from (values
          ('m', 'r1', 'L2', {t2}, 'i1', 1, 'quarantined', ['rule_a'], {t2}),  -- written after its reject row
          ('m', 'r6', 'L1', {t1}, 'i6', 1, 'quarantined', ['rule_a'], {t1}),  -- its reject row is up to date
          ('m', 'r7', 'L1', {t1}, 'i7', 1, 'quarantined', ['rule_a'], {t1}),  -- its reject row was resolved
          ('m', 'r8', 'L1', {t1}, 'i8', 1, 'failed', ['rule_c'], {t1}),       -- no reject row yet
          ('m', 'r9', 'L2', {t2}, 'i9', 1, 'kept', []::varchar[], {t2})
        ) as t(_mapping, _source_row_id, _load_id, _ingested_at, item_id, _delivery_rank, _route, _failed_rules, _processed_at)""")
    con.execute("create table bronze_src as select _source_row_id, _load_id, item_id from staged")
    con.execute(f"""
        create table item__reject as select
          md5('src|' || id) as reject_id, 'item' as entity, 'm' as mapping, 'src' as source_relation,
          id as _source_row_id, 'L1' as _load_id, {t1} as first_seen, {t1} as last_seen, ['rule_a'] as failed_rules,
          'quarantine' as disposition, '{{}}' as key_values, '{{}}' as raw,
          case when id = 'r7' then {t2} end as resolved_at, case when id = 'r7' then 'admitted' end as resolution,
          case when id = 'r6' then {t2} else {t1} end as last_evaluated_at, 'run-1' as last_run_id
        from (values ('r1'), ('r6'), ('r7')) as v(id)""")
    entity = SimpleNamespace(**{**vars(ENTITY), "materialized": "incremental"})
    query = reject_query(DuckSpelling(), entity, Prior("item__reject"), resolve=False)
    assert [r[0] for r in con.execute(f"select _source_row_id from ({query}) order by 1").fetchall()] == ["r1", "r7", "r8"]
    before = _table(con)
    _upsert(con, query)
    after = {k: tuple(str(x) if x is not None else None for x in v) for k, v in _table(con).items()}
    now = "2026-01-03 00:00:00"  # NOW, this build's run_timestamp
    assert after[md5(con, "r1")] == ("2026-01-01 00:00:00", "2026-01-02 00:00:00", "['rule_a']", None, None, now, "run-3")
    assert after[md5(con, "r7")][3:] == (None, None, now, "run-3")  # diverted again: reopened
    assert after[md5(con, "r8")][0] == "2026-01-01 00:00:00"
    assert _table(con)[md5(con, "r6")] == before[md5(con, "r6")]  # untouched, its stamp too
    # the same ledger, the table now up to date: nothing to write
    assert con.execute(f"select count(*) from ({query})").fetchone()[0] == 0


def md5(con, srid: str) -> str:
    return con.execute(f"select md5('src|{srid}')").fetchone()[0]


SHARED = SimpleNamespace(**{**vars(ENTITY), "mappings": (SimpleNamespace(name="m", source="src"), SimpleNamespace(name="m2", source="src"))})


def _shared_story() -> duckdb.DuckDBPyConnection:
    """Decision 0947: a second mapping `m2` of `src` is added to an entity whose only mapping `m`
    read it. Each bronze row is a source row of both. The table holds what `m` alone wrote: r1 and
    r2 open, under the ids a relation read by one mapping has (`md5('src|' || id)`).

    This build: r1 diverted by both; r2 kept by `m`, diverted by `m2`; r3 kept by `m2`, diverted by
    `m` (new to both)."""
    con = duckdb.connect()
    con.execute(
        """
        create table staged as select * from (values
          ('m', 'r1', 'L2', timestamp '2026-01-02', 'a1', 1, 'quarantined', ['rule_a']),
          ('m2', 'r1', 'L2', timestamp '2026-01-02', 'b1', 1, 'quarantined', ['rule_b']),
          ('m', 'r2', 'L2', timestamp '2026-01-02', 'a2', 1, 'kept', []::varchar[]),
          ('m2', 'r2', 'L2', timestamp '2026-01-02', 'b2', 1, 'failed', ['rule_c']),
          ('m', 'r3', 'L2', timestamp '2026-01-02', 'a3', 1, 'quarantined', ['rule_a']),
          ('m2', 'r3', 'L2', timestamp '2026-01-02', 'b3', 1, 'kept', []::varchar[])
        ) as t(_mapping, _source_row_id, _load_id, _ingested_at, item_id, _delivery_rank, _route, _failed_rules)
        """
    )
    con.execute("create table bronze_src as select distinct _source_row_id, _load_id from staged")
    _open_rows(con, "r1", "r2")
    return con


def test_two_mappings_of_one_relation_keep_their_reject_rows_apart():
    """One reject row per (mapping, source row); the rows `m` wrote keep their ids (no re-minting
    when a mapping of the same relation is added); `m2`'s new rows get `md5('src:m2|' || id)` and
    `m`'s new ones `md5('src:m|' || id)`; a mapping that keeps a row resolves only its own reject
    row of it. Both targets' ways (resolution in the query, or the package's UPDATE after) agree."""
    sp = DuckSpelling()
    in_query = _shared_story()
    _upsert(in_query, reject_query(sp, SHARED, Prior("item__reject"), resolve=True))
    after = _shared_story()
    _upsert(after, reject_query(sp, SHARED, Prior("item__reject"), resolve=False))
    _resolve_as_the_package_does(after, SHARED)
    for con in (in_query, after):
        rows = con.execute("select mapping, _source_row_id, reject_id, first_seen, last_seen, failed_rules, resolution, "
                           "resolved_at is null from item__reject order by 1, 2").fetchall()
        md5 = lambda text: con.execute("select md5(?)", [text]).fetchone()[0]  # noqa: E731
        t1, t2 = dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 2)
        assert rows == [
            ("m", "r1", md5("src|r1"), t1, t2, ["rule_a"], None, True),  # kept its id, first_seen sticky
            ("m", "r2", md5("src|r2"), t1, t1, ["old"], "admitted", False),  # m kept r2: resolved, its id kept
            ("m", "r3", md5("src:m|r3"), t2, t2, ["rule_a"], None, True),
            ("m2", "r1", md5("src:m2|r1"), t2, t2, ["rule_b"], None, True),
            ("m2", "r2", md5("src:m2|r2"), t2, t2, ["rule_c"], None, True),  # m kept r2; m2's row stays open
        ]
