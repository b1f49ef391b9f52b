"""The loads an incremental entity's ledger proves clean, for the ingestion-metadata test
(lower/loads.py, decision 0408), on DuckDB: a settled load is left out only when none of its
ledger rows says its bronze rows would fail the test."""

from __future__ import annotations

from types import SimpleNamespace

import duckdb

from assay.lower.loads import ingestion_rows_ctes
from tests.lower.duck_spelling import DuckSpelling

MAPPING = SimpleNamespace(name="m", source="src", bronze_columns=("_source_row_id", "_load_id", "_ingested_at"))
ENTITY = SimpleNamespace(name="item", mappings=(MAPPING,))

# bronze's rows (raw text), and what the ledger made of each: (load, raw _ingested_at, source row, delivery rank)
ROWS = [
    ("L1", "2026-01-01 00:00:01", "a", 1), ("L1", "2026-01-01 00:00:01", "b", 1),
    ("L1", "2026-01-01 00:00:01", "h", 2), ("L6", "2026-01-06 00:00:00", "h", 1),  # a re-delivery across loads: normal
    ("L2", "2026-01-02 00:00:00", "c1", 1), ("L2", None, "c2", 1),  # a missing _ingested_at
    ("L3", "2026-01-03 00:00:00", "d", 2), ("L3", "2026-01-03 00:00:04", "d", 1),  # d repeated within L3
    ("L4", "2026-01-04 00:00:00", "e", 1),  # bronze only: the ledger has not processed L4
    (None, "2026-01-05 00:00:00", "f", 1),  # no _load_id: never settles
    ("L5", "garbage", "g", 1), ("L5", "2026-01-05 00:00:00", "g2", 1),  # an _ingested_at that does not parse
    ("L7", "2026-01-07 00:00:00", None, 1),  # no _source_row_id
]


def _story() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create table bronze_src (_load_id varchar, _ingested_at varchar, _source_row_id varchar)")
    con.executemany("insert into bronze_src values (?, ?, ?)", [r[:3] for r in ROWS])
    con.execute("create table ledger (_load_id varchar, _raw varchar, _source_row_id varchar, _delivery_rank int)")
    con.executemany("insert into ledger values (?, ?, ?, ?)", [r for r in ROWS if r[0] != "L4"])
    con.execute(
        "create or replace table ledger as select 'm' as _mapping, _source_row_id, _load_id, try_cast(_raw as timestamp) as _ingested_at,"
        " _delivery_rank, hash(cast(_source_row_id as varchar), cast(_raw as varchar)) as _bronze_fp from ledger"
    )
    return con


def _tested_loads(con) -> list:
    query = "with " + ",\n".join(ingestion_rows_ctes(DuckSpelling(), ENTITY, MAPPING, "ledger")) + "\n"
    return sorted({r[0] for r in con.execute(query + "select _load_id from assay_ingestion_rows").fetchall()}, key=str)


def test_only_the_settled_loads_without_a_fault_are_left_out():
    # L1 and L6 are settled and clean; every other load is read from bronze
    assert _tested_loads(_story()) == ["L2", "L3", "L4", "L5", "L7", None]


def test_a_load_that_differs_from_the_ledger_is_read_again():
    con = _story()
    con.execute("insert into bronze_src values ('L1', '2026-01-01 00:00:01', 'a')")  # a repeated within L1, unseen by the ledger
    assert "L1" in _tested_loads(con)
    con = _story()
    con.execute("update bronze_src set _ingested_at = '2026-01-06 00:00:09' where _load_id = 'L6'")  # rewritten in place
    assert "L6" in _tested_loads(con)


def test_a_ledger_row_without_a_fingerprint_unsettles_its_load():
    con = _story()
    con.execute("update ledger set _bronze_fp = null where _source_row_id = 'b'")
    assert _tested_loads(con)[:1] == ["L1"]
