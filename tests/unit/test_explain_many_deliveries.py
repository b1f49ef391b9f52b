"""`assay explain` of a key delivered many times reads bronze and the reject table once for all
its deliveries, not once per delivery (an outside tester, probe R6: a key delivered 200,000 times
in a 2,000,000-row bronze ran for over ten minutes without an answer, one bronze scan per
delivery). The explanation itself is unchanged: every delivery with its bronze row, the winner,
the reject rows of the diverted ones."""

from __future__ import annotations

import json

import duckdb
import pytest

from assay.api import load_project
from assay.explain import Explainer
from assay.runtime.warehouse import Reader

ENTITIES = """\
spec_version: 1
entities:
  ev:
    grain: one row per event, latest delivery wins
    key: [ev_id]
    fields:
      ev_id: {type: string, required: true}
      amount: {type: "decimal(12,2)"}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 30d}
"""
MAPPING = """\
mapping_version: 1
source: raw_ev
target: ev
key:
  ev_id: {from: "$.ev_id"}
fields:
  amount: {from: "$.amount", transform: [{to_decimal: [12, 2]}], quality: [{rule: range, min: 0, on_fail: quarantine}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def _warehouse(project, n: int) -> duckdb.DuckDBPyConnection:
    """Key HOT delivered `n` times (row h<i>, load l<i % 3>; h0 wins, negative, quarantined),
    key COLD once, and one delivery of HOT's row h1 in an earlier load, superseded."""
    mapping = project.entity("ev").mappings[0].name
    con = duckdb.connect()
    con.execute("create schema bronze; create schema silver")
    con.execute(f"""create table bronze.raw_ev as
        select 'l' || (i % 3)::varchar as _load_id, '2026-01-01T00:00:00Z' as _ingested_at, 'h' || i::varchar as _source_row_id,
               'HOT' as ev_id, case when i = 0 then '-1.00' else i::varchar || '.00' end as amount from range({n}) t(i)
        union all select 'l0', '2026-01-01T00:00:00Z', 'c1', 'COLD', '1.00'
        union all select 'l00', '2025-12-31T00:00:00Z', 'h1', 'HOT', '7.00'""")
    con.execute(f"""create table silver.ev__staged as
        select b.ev_id, try_cast(b.amount as decimal(12,2)) as amount, '{mapping}' as _mapping, b._source_row_id, b._load_id,
               cast(b._ingested_at as timestamp) as _ingested_at,
               case when b._load_id = 'l00' then 2 else 1 end as _delivery_rank,
               case when b._source_row_id = 'h0' or b.ev_id = 'COLD' then 1 else 2 end as _dedupe_rank,
               case when b._source_row_id = 'h0' then 'quarantined' when b.ev_id = 'COLD' then 'kept' else 'deduped' end as _route,
               case when b._source_row_id = 'h0' then ['amount_range_min'] else []::varchar[] end as _failed_rules,
               false as _late
        from bronze.raw_ev b""")
    con.execute("create table silver.ev as select ev_id, amount from silver.ev__staged where _route = 'kept'")
    con.execute(f"""create table silver.ev__reject as
        select 'j' || _source_row_id as reject_id, 'raw_ev' as source_relation, '{mapping}' as mapping, _source_row_id, _load_id,
               timestamp '2026-01-01' as first_seen, timestamp '2026-01-01' as last_seen, _failed_rules as failed_rules,
               'quarantine' as disposition, null::timestamp as resolved_at, null::varchar as resolution, 'run1' as last_run_id
        from silver.ev__staged where _route = 'quarantined'""")
    return con


def _project(tmp_path):
    """The spec above, loaded."""
    (tmp_path / "entities.yml").write_text(ENTITIES)
    (tmp_path / "ev.yml").write_text(MAPPING)
    return load_project(tmp_path)


def _stage(con, select: str) -> None:
    """Add the rows of `select` to the staged table, in its column order."""
    con.execute("insert into silver.ev__staged (ev_id, amount, _mapping, _source_row_id, _load_id, _ingested_at, "
                "_delivery_rank, _dedupe_rank, _route, _failed_rules, _late) " + select)


@pytest.mark.parametrize("n", [30, 300])
def test_a_key_delivered_many_times_is_explained_in_a_few_queries(tmp_path, n):
    project = _project(tmp_path)
    reader = Reader(_warehouse(project, n), "duckdb")
    asked: list[str] = []

    def counted(sql: str, params: tuple = ()) -> list[tuple]:
        asked.append(sql)
        return reader.query(sql, params)

    # every delivery listed (`--limit 0`; decision 0995 lists the first 100 by default)
    explanation = Explainer(project, project.entity("ev"), counted, reader.columns, reader.relation).explain({"ev_id": "HOT"}, limit=0)
    # every delivery (n, and the superseded earlier one) is told with its own bronze row
    assert len(explanation.deliveries) == n + 1
    assert all(d.in_bronze for d in explanation.deliveries)
    assert {d.bronze["amount"] for d in explanation.deliveries if d.source_row_id == "h1"} == {"1.00", "7.00"}
    # the superseded one is told by the delivery order, not by which load came later
    [older] = [d for d in explanation.deliveries if d.load_id == "l00"]
    assert older.why[0] == ("superseded: the same source row has a later delivery, by _ingested_at and then _load_id "
                            "(decision 0014), so only that latest delivery is judged"), older.why
    winner = explanation.deliveries[0]
    assert (winner.source_row_id, winner.route, winner.bronze["amount"]) == ("h0", "quarantined", "-1.00")
    assert [r["_source_row_id"] for r in explanation.rejects] == ["h0"]
    assert not explanation.in_entity
    # a handful of queries whatever the number of deliveries (it was two or more per delivery)
    assert len(asked) <= 6, asked[:10]


def test_a_delivery_without_its_source_row_id_is_explained(tmp_path):
    """A build the ingestion-metadata check stopped has staged a row with a NULL `_source_row_id`
    (and one with a NULL `_load_id`); explaining its key told `unsupported operand type(s) for +:
    'NoneType' and 'str'` as if the tables could not be read (probe R6)."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    _stage(con, """select ev_id, amount, _mapping, null, 'l9', _ingested_at, 1, 1, 'kept', [], false
                   from silver.ev__staged where _source_row_id = 'c1'
                   union all select ev_id, amount, _mapping, 'c2', null, _ingested_at, 1, 2, 'deduped', [], false
                   from silver.ev__staged where _source_row_id = 'c1'""")
    con.execute("update silver.ev__staged set _dedupe_rank = 3, _route = 'deduped' where _source_row_id = 'c1'")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "COLD"})
    assert [(d.source_row_id, d.load_id, d.route) for d in explanation.deliveries] == [
        (None, "l9", "kept"), ("c2", None, "deduped"), ("c1", "l0", "deduped")]
    assert explanation.deliveries[1].why[0].startswith("lost the dedupe to the delivery without a _source_row_id")
    nameless = explanation.deliveries[0]
    assert nameless.in_bronze and "no _source_row_id" in nameless.why[0]
    assert nameless.label().startswith("raw_ev row without a _source_row_id (load l9")


def test_a_source_row_twice_in_one_load_is_two_deliveries_told_apart_by_their_key(tmp_path):
    """A load that repeats a `_source_row_id` (for keys COLD and WARM) stops the build at the
    ingestion-metadata check after the staged table is built. `--source-row-id` called both
    deliveries "of another key (COLD)", since a delivery was told by (mapping, source row, load)
    alone, and said no delivery was judged (an outside tester, session 44)."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    _stage(con, """select 'WARM', amount, _mapping, 'c1', 'l0', _ingested_at, 1, 1, 'kept', [], false
                   from silver.ev__staged where _source_row_id = 'c1'""")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain(
        {"ev_id": "COLD"}, source_row_id="c1")
    cold, warm = sorted(explanation.deliveries, key=lambda d: d.key_values)
    twice = "its source row c1 is delivered more than once in load l0: broken ingestion metadata"
    assert cold.why[0].startswith(twice) and "won" not in " ".join(cold.why[1:]) and "another key" not in " ".join(cold.why)
    assert warm.why[0].startswith(twice) and warm.why[1].startswith("a delivery of another key (ev_id='WARM')")
    assert explanation.summary[1].startswith("It is in the entity (published).")
    # the head counts the source row's deliveries of another key apart (session 44)
    assert explanation.summary[0] == "ev ev_id='COLD': 2 deliveries in bronze (1 of another key, by the same source row)."


def test_a_row_twice_in_one_load_is_not_told_as_superseded_by_a_later_delivery(tmp_path):
    """Two copies of one row in one load (same source row, load, key): one is deduped, and explain
    said it was "superseded: the same source row has a later delivery" although neither is later
    (an outside tester, session 49): the two copies were one entry where repeats were counted."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    _stage(con, """select ev_id, amount, _mapping, _source_row_id, _load_id, _ingested_at, 2, 1, 'deduped', [], false
                   from silver.ev__staged where _source_row_id = 'c1'""")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "COLD"})
    assert [d.route for d in explanation.deliveries] == ["kept", "deduped"]
    twice = "its source row c1 is delivered more than once in load l0: broken ingestion metadata"
    for d in explanation.deliveries:
        assert d.why[0].startswith(twice), d.why
        assert not any("superseded" in w or "later delivery" in w for w in d.why), d.why


def test_a_key_with_more_deliveries_than_the_limit_lists_the_first_and_counts_the_rest(tmp_path):
    """Decision 0995 (probe R6: a key delivered 400,000 times printed 130 MB and held 1.6 GB): only
    the first `limit` deliveries in the dedupe order are read and listed, the judged one first;
    the rest are counted, and so are the open reject rows of every delivery, listed or not."""
    project = _project(tmp_path)
    con = _warehouse(project, 300)
    # a second diverted delivery far down the order (rank 2, row h250): counted, not listed
    con.execute("update silver.ev__staged set _route = 'quarantined', _failed_rules = ['amount_range_min'] "
                "where _source_row_id = 'h250' and _load_id <> 'l00'")
    mapping = project.entity("ev").mappings[0].name
    con.execute(f"""insert into silver.ev__reject values ('jh250', 'raw_ev', '{mapping}', 'h250', 'l1', timestamp '2026-01-01',
                    timestamp '2026-01-01', ['amount_range_min'], 'quarantine', null, null, 'run1')""")
    reader = Reader(con, "duckdb")
    asked: list[tuple[str, tuple]] = []

    def counted(sql: str, params: tuple = ()) -> list[tuple]:
        asked.append((sql, params))
        return reader.query(sql, params)

    explainer = Explainer(project, project.entity("ev"), counted, reader.columns, reader.relation)
    explanation = explainer.explain({"ev_id": "HOT"}, limit=10)
    assert len(explanation.deliveries) == 10 and explanation.deliveries_total == 301
    # the judged delivery first (h0 won the dedupe and was quarantined), then by rank and row
    assert [d.source_row_id for d in explanation.deliveries[:3]] == ["h0", "h1", "h10"]
    assert explanation.summary == [
        "ev ev_id='HOT': 301 deliveries, 10 of them listed below (the judged one first, then in the dedupe order; "
        "`--limit 0` lists every one).",
        "It is not in the entity: its judged delivery h0 was quarantined to the reject table. 2 open reject rows."]
    # the reject rows listed are the listed deliveries'; the count is every delivery's
    assert [r["_source_row_id"] for r in explanation.rejects] == ["h0"]
    # bronze is read for the listed deliveries only, by their source row ids
    # (beside the one query asking which loads bronze holds that the build did not judge)
    bronze_reads = [params for sql, params in asked if "bronze" in sql and "raw_ev" in sql and "distinct" not in sql]
    assert len(bronze_reads) == 1 and len(bronze_reads[0]) == 10
    lines = explanation.render()
    assert "... and 291 more deliveries of this key, not listed (`--limit 0` lists every one; the reject rows below are " \
           "the listed deliveries')" in lines
    assert explanation.as_dict()["deliveries_total"] == 301 and len(explanation.as_dict()["deliveries"]) == 10
    # limit 0, or a limit above the count: every delivery, as before
    assert len(explainer.explain({"ev_id": "HOT"}, limit=0).deliveries) == 301
    fresh = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation)
    every = fresh.explain({"ev_id": "HOT"}, limit=301)
    assert len(every.deliveries) == every.deliveries_total == 301
    assert every.summary[0] == "ev ev_id='HOT': 301 deliveries in bronze."


PG_TABLES = {
    "bronze.raw_ev": "_load_id text, _ingested_at text, _source_row_id text, ev_id text, amount text",
    "silver.ev__staged": "ev_id text, amount numeric(12,2), _mapping text, _source_row_id text, _load_id text, "
                         "_ingested_at timestamp, _delivery_rank int, _dedupe_rank int, _route text, _failed_rules text[], _late boolean",
    "silver.ev": "ev_id text, amount numeric(12,2)",
    "silver.ev__reject": "reject_id text, source_relation text, mapping text, _source_row_id text, _load_id text, first_seen timestamp, "
                         "last_seen timestamp, failed_rules text[], disposition text, resolved_at timestamp, resolution text, last_run_id text",
}


@pytest.mark.postgres
def test_the_listed_deliveries_and_the_counts_on_postgres(tmp_path, postgres_database):
    """The same warehouse on PostgreSQL: the listing order, the limited bronze read and the
    correlated count of open reject rows are the engine's SQL, not DuckDB's alone."""
    import psycopg2

    project = _project(tmp_path)
    source = _warehouse(project, 40)
    params = postgres_database("explain_limit")
    conn = psycopg2.connect(**params)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("create schema bronze; create schema silver")
    for table, columns in PG_TABLES.items():
        cur.execute(f"create table {table} ({columns})")
        rows = source.execute(f"select * from {table}").fetchall()
        marks = ", ".join(["%s"] * len(rows[0]))
        cur.executemany(f"insert into {table} values ({marks})", rows)
    explanation = Explainer(project, project.entity("ev"), *_reader_parts(Reader(conn, "postgres"))).explain({"ev_id": "HOT"}, limit=5)
    assert [d.source_row_id for d in explanation.deliveries] == ["h0", "h1", "h10", "h11", "h12"]
    assert explanation.deliveries_total == 41 and explanation.deliveries[0].bronze["amount"] == "-1.00"
    assert explanation.summary[1].endswith("quarantined to the reject table. 1 open reject row.")
    conn.close()


def _reader_parts(reader: Reader):
    return reader.query, reader.columns, reader.relation


def test_an_entity_without_dedupe_names_no_dedupe_order(tmp_path):
    """An outside tester (session 36): on an entity without `dedupe:` the kept delivery of a
    re-delivered source row was said to have "won the dedupe ... under the dedupe order", an order
    the entity does not have. It is the latest delivery of its source row (decision 0014)."""
    (tmp_path / "entities.yml").write_text(ENTITIES.replace(
        "    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}\n", ""))
    (tmp_path / "ev.yml").write_text(MAPPING)
    project = load_project(tmp_path)
    assert not project.entity("ev").dedupe
    con = _warehouse(project, 3)
    # COLD's row c1 delivered again in an earlier load: that delivery is superseded
    _stage(con, """select ev_id, amount, _mapping, _source_row_id, 'l00', _ingested_at - interval 1 day, 2, 1, 'deduped', [], false
                   from silver.ev__staged where _source_row_id = 'c1'""")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "COLD"})
    kept = explanation.deliveries[0]
    assert (kept.load_id, kept.route) == ("l0", "kept")
    assert not any("dedupe order" in w for d in explanation.deliveries for w in d.why), [d.why for d in explanation.deliveries]
    assert kept.why[0].startswith("the other deliveries of this key were superseded by a later delivery of their source row")
    # two source rows of one key: the key audit's to stop, said so
    _stage(con, """select ev_id, amount, _mapping, 'c9', 'l0', _ingested_at, 1, 2, 'kept', [], false
                   from silver.ev__staged where _source_row_id = 'c1' and _load_id = 'l0'""")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "COLD"})
    assert "stops the build (the key audit)" in explanation.deliveries[0].why[0]


def test_a_pii_key_is_never_shown(tmp_path):
    """An outside tester (session 36): `explain` of an entity whose key is classified pii printed
    the key's value on its first line and in `--json`, asked by the key or by `--source-row-id`."""
    (tmp_path / "entities.yml").write_text(ENTITIES.replace("ev_id: {type: string, required: true}",
                                                            "ev_id: {type: string, required: true, classification: pii}"))
    (tmp_path / "ev.yml").write_text(MAPPING)
    project = load_project(tmp_path)
    reader = Reader(_warehouse(project, 3), "duckdb")
    explainer = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation)
    for explanation in (explainer.explain({"ev_id": "COLD"}), explainer.explain(None, source_row_id="c1")):
        said = json.dumps(explanation.as_dict()) + "\n".join(explanation.render())
        assert "COLD" not in said, said
        assert explanation.key == {"ev_id": "(pii: not shown)"}
        assert explanation.in_entity and explanation.deliveries[0].source_row_id == "c1"


def test_a_delivery_of_a_named_mapping_says_which_mapping():
    """One bronze relation feeding two mappings: each row is a delivery of each, and the text said
    only `raw_beta row b1` (an outside tester, session 37); a default mapping (named after its
    relation) reads as before."""
    from assay.explanation import Delivery

    def delivery(mapping):
        return Delivery(mapping, "raw_beta", "b1", "L1", "2026-01-01 00:00:00", "kept", 1, False, {}, [])
    assert delivery("beta_ret").label() == "raw_beta row b1 via mapping beta_ret (load L1, ingested 2026-01-01 00:00:00)"
    assert delivery("raw_beta").label() == "raw_beta row b1 (load L1, ingested 2026-01-01 00:00:00)"


def test_superseded_deliveries_are_listed_in_the_delivery_order_not_by_load_id(tmp_path):
    """docs/operating.md: the judged delivery first, then in the dedupe order. Three deliveries of
    one source row whose load ids sort the other way round from their delivery order (an outside
    tester saw d01, d06, d10 where the order is d10, d06, d01)."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    _stage(con, """select ev_id, amount, _mapping, 'c1', l, _ingested_at - interval (r) day, r, null, 'deduped', [], false
                   from silver.ev__staged, (values ('a-first', 3), ('b-second', 2)) as v(l, r) where _source_row_id = 'c1'""")
    reader = Reader(con, "duckdb")
    for limit in (0, 2):  # read whole, and listed from the staged table in its order
        explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain(
            {"ev_id": "COLD"}, limit=limit)
        assert [d.load_id for d in explanation.deliveries][:3 if limit == 0 else 2] == ["l0", "b-second", "a-first"][:3 if limit == 0 else 2]


def test_a_key_whose_only_delivery_was_superseded_says_its_open_rejects(tmp_path):
    """A source row re-sent with another key leaves the old key a superseded delivery and, when it
    had been quarantined, an open reject row: the answer's second line said neither that the key is
    not in the entity nor its open reject rows (an outside tester, session 42)."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    mapping = project.entity("ev").mappings[0].name
    _stage(con, f"""select 'GONE', -5.00, '{mapping}', 'g1', 'l0', timestamp '2025-12-30', 2, null, 'deduped', [], false""")
    con.execute(f"""insert into silver.ev__reject values ('jg1', 'raw_ev', '{mapping}', 'g1', 'l0', timestamp '2025-12-30',
                    timestamp '2025-12-30', ['amount_range_min'], 'quarantine', null, null, 'run1')""")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "GONE"})
    assert explanation.summary[1] == ("No delivery is judged: every one was superseded or deduped, so it is not in the entity. "
                                      "1 open reject row."), explanation.summary


def test_loads_the_last_build_did_not_judge_are_said(tmp_path):
    """An outside tester (session 43): a build skipped the entity (its parent's `fail` rule stopped
    it) after a load re-delivered a key; explain said `1 delivery in bronze` of a key bronze held
    twice, from the staged table of the build before, without saying so."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    reader = Reader(con, "duckdb")
    said = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "COLD"})
    assert not any("did not judge" in line for line in said.summary)
    con.execute("insert into bronze.raw_ev values ('l9', '2026-01-02T00:00:00Z', 'c1', 'COLD', '2.00')")
    said = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "COLD"})
    assert said.summary[1] == (
        "Bronze holds 1 load (l9) that the last build of ev did not judge (it ran before it, or a build since did not "
        "write the entity): what follows is as of that build; the next build judges them.")
    assert said.unjudged
    # a key only an unjudged load delivers: found nowhere the build looked, and `assay explain` says
    # to build first rather than "not in bronze" under the sentence above (an outside tester, session 45)
    con.execute("insert into bronze.raw_ev values ('l9', '2026-01-02T00:00:00Z', 'n1', 'NEW', '2.00')")
    new = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain({"ev_id": "NEW"})
    assert (new.deliveries, new.rejects, new.unjudged) == ([], [], True)


def test_another_keys_command_is_one_a_shell_runs_and_a_null_key_names_none(tmp_path):
    """`assay explain permit None` was offered for a delivery whose key is NULL, and found nothing
    (an outside tester, session 45); a key with a quote is shell-quoted, as the report quotes it."""
    project = _project(tmp_path)
    con = _warehouse(project, 3)
    _stage(con, """select null, amount, _mapping, 'c1', 'l0', _ingested_at, 1, 1, 'kept', [], false
                   from silver.ev__staged where _source_row_id = 'c1'""")
    _stage(con, """select 'O''Brien', amount, _mapping, 'c1', 'l0', _ingested_at, 1, 1, 'kept', [], false
                   from silver.ev__staged where _source_row_id = 'c1' and ev_id = 'COLD'""")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, project.entity("ev"), reader.query, reader.columns, reader.relation).explain(
        {"ev_id": "COLD"}, source_row_id="c1")
    whys = {d.key_values: " ".join(d.why) for d in explanation.deliveries}
    null = next(w for w in whys.values() if "ev_id=NULL" in w)
    assert "a delivery of another key (ev_id=NULL), not of the key explained" in null and "assay explain" not in null, null
    quoted = next(w for w in whys.values() if "O\\'Brien" in w or "O'Brien" in w)
    assert "`assay explain ev 'O'\"'\"'Brien'` explains it" in quoted, quoted
