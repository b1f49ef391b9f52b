"""Which open reject rows `assay replay` re-delivers (decision 0920), without a warehouse."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from assay.api import load_project
from assay import exactjson
from assay.replay import Candidate, bronze_text, key_of, key_text, winners
from tests.integration.test_replay_superseded import ENTITIES, MAPPING, _write


def _candidate(rid, srid, seen, key, load_id="l1"):
    return Candidate(rid, "raw_customers", srid, load_id, seen, "{}", key)


def _entity(tmp_path, dedupe: bool):
    entities = ENTITIES
    if dedupe:
        entities = entities.replace("    quarantine:", "    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}\n    quarantine:")
    spec = _write(tmp_path / "spec", MAPPING)
    (spec / "entities.yml").write_text(entities)
    return load_project(spec).entity("customer")


def test_key_text_compares_json_and_typed_values_alike():
    assert key_text(Decimal("10.50")) == key_text(10.5) == "10.5"
    assert key_text(7) == key_text(Decimal("7")) == "7"
    assert key_text(dt.date(2026, 3, 1)) == key_text("2026-03-01")
    assert key_text(dt.datetime(2026, 3, 1, 10, 0)) == key_text("2026-03-01 10:00:00")
    assert key_text(True) == "true" and key_text(None) is None
    assert key_of(["a", None]) is None and key_of(["a", 1]) == ("a", "1")


def test_without_dedupe_a_held_key_takes_nothing_and_a_free_key_takes_the_latest(tmp_path):
    entity = _entity(tmp_path, dedupe=False)
    k1 = _candidate("r1", "k1", dt.datetime(2026, 3, 1, 10), ("K",))
    j1 = _candidate("r2", "j1", dt.datetime(2026, 3, 1, 11), ("J",))
    j2 = _candidate("r3", "j2", dt.datetime(2026, 3, 2, 10), ("J",))
    n1 = _candidate("r4", "n1", dt.datetime(2026, 3, 1, 9), None)  # a NULL key part: no identity
    n2 = _candidate("r5", "n2", dt.datetime(2026, 3, 1, 8), None)
    back, lost = winners(entity, [k1, j1, j2, n1, n2], held={("K",)})
    assert sorted(c.source_row_id for c in back) == ["j2", "n1", "n2"]
    assert sorted(c.source_row_id for c in lost) == ["j1", "k1"]


def test_without_dedupe_ties_fall_to_load_id_then_source_row_id(tmp_path):
    entity = _entity(tmp_path, dedupe=False)
    seen = dt.datetime(2026, 3, 1, 10)
    a = _candidate("r1", "a", seen, ("K",), load_id="l1")
    b = _candidate("r2", "b", seen, ("K",), load_id="l2")
    c = _candidate("r3", "c", seen, ("K",), load_id="l2")
    nothing = _candidate("r4", "d", None, ("K",), load_id="l9")  # NULLS LAST
    back, _lost = winners(entity, [a, b, c, nothing], held=set())
    assert [x.source_row_id for x in back] == ["c"]


def test_with_dedupe_every_candidate_goes_back_for_the_build_to_rank(tmp_path):
    entity = _entity(tmp_path, dedupe=True)
    k1 = _candidate("r1", "k1", dt.datetime(2026, 3, 1, 10), ("K",))
    k2 = _candidate("r2", "k2", dt.datetime(2026, 3, 2, 10), ("K",))
    back, lost = winners(entity, [k1, k2], held={("K",)})
    assert (sorted(c.source_row_id for c in back), lost) == (["k1", "k2"], [])


def test_a_raw_member_goes_back_as_the_text_its_column_casts_from():
    """Decision 0975: `raw` holds a JSON column's value as a document and a number as a number."""
    raw = exactjson.loads('{"id": "x", "payload": {"city": "Oslo", "n": 1.10}, "tags": ["a", "é"], '
                          '"w": -12345678901234.123456, "big": 9007199254740993, "ok": true, "gone": null}')
    assert {k: bronze_text(v) for k, v in raw.items()} == {
        "id": "x", "payload": '{"city":"Oslo","n":1.10}', "tags": '["a","é"]',
        "w": "-12345678901234.123456", "big": "9007199254740993", "ok": "true", "gone": None}


def test_a_timestamp_key_with_a_fraction_reads_alike_from_key_values_and_staged():
    """`key_values` is DuckDB's `json_object` of the typed key (fraction trimmed: `.5`), the staged
    key a Python datetime (`.500000`): replay must see one key in both, or a candidate whose key
    bronze delivers goes back beside it and the next build stops on the key audit (0920)."""
    import duckdb

    conn = duckdb.connect()
    for literal in ("2026-03-01 09:00:00.5", "2026-03-01 09:00:00.120", "2026-03-01 09:00:00.000001", "2026-03-01 09:00:00"):
        text, typed = conn.execute(f"select cast(json_object('t', timestamp '{literal}') as varchar), timestamp '{literal}'").fetchone()
        assert key_of([exactjson.loads(text)["t"]]) == key_of([typed]), (literal, text, typed)
    # PostgreSQL's to_json spells the instant with a `T`
    assert key_text("2026-03-01T09:00:00.5") == key_text(dt.datetime(2026, 3, 1, 9, 0, 0, 500000))


def test_a_value_bronze_refuses_is_reported_without_the_value(tmp_path):
    """A bronze column retyped since the row was quarantined refuses the kept value: the engine's
    message quotes it (a pii field's, perhaps), so replay's error names the refusal, not the value."""
    import duckdb
    import pytest

    from assay.errors import WarehouseError
    from assay.replay import ReplayReport, _redeliver

    spec = _write(tmp_path / "spec", MAPPING)
    (spec / "entities.yml").write_text(ENTITIES)
    project = load_project(spec)
    conn = duckdb.connect()
    bronze = project.schema("bronze")
    conn.execute(f"create schema {bronze}")
    conn.execute(f"create table {bronze}.raw_customers (_load_id varchar, _ingested_at varchar, _source_row_id varchar, id varchar, tier integer)")
    secret = "jane.doe@example.com"
    cand = Candidate("r1", "raw_customers", "s1", "l1", dt.datetime(2026, 3, 1), '{"id": "K", "tier": "%s"}' % secret, ("K",))
    with pytest.raises(WarehouseError) as err:
        _redeliver(conn.cursor(), "duckdb", project, "raw_customers", [cand], ReplayReport("customer"), dry_run=False)
    assert secret not in str(err.value) and "ConversionException" in str(err.value)
