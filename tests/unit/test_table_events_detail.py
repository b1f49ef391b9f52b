"""`assay table get` shows a failed check's sentence as 000 words it (checks/recorded.py renders it
from the recorded result), whatever the build wrote as the event's `why`: dbt's package writes a
short sentence of its own for dbt's error message. An audit, which records no result, keeps the
build's own `why`."""

from __future__ import annotations

import json

import duckdb

from assay.runtime.table_states import table_events
from assay.runtime.warehouse import Reader


class _Project:
    @staticmethod
    def schema(role: str) -> str:
        return {"meta": "assay_meta"}[role]


def test_a_recorded_checks_event_says_000s_sentence():
    con = duckdb.connect()
    con.execute("create schema assay_meta")
    con.execute("create table assay_meta.assay_events (event_id varchar, event_type varchar, run_id varchar, "
                "table_name varchar, check_name varchar, why varchar, row_count integer, cutoff timestamp, "
                "occurred_at timestamp)")
    con.execute("create table assay_meta.assay_check_results (run_id varchar, table_name varchar, check_id varchar, "
                "kind varchar, check_spec varchar, measures varchar)")
    spec = {"columns": ["site"], "types": ["string"], "bounds": {"max_null_ppm": 100000}}
    con.execute("insert into assay_meta.assay_check_results values (?, ?, ?, ?, ?, ?)",
                ["r1", "meter", "SITE_FILLED", "null_ceiling", json.dumps(spec), json.dumps({"rows": 4, "nulls": 2})])
    for i, (check, why) in enumerate([("SITE_FILLED", "column 'site' is null on 2 of 4 rows, above the declared ceiling"),
                                      ("KEY_UNIQUE", "2 violating rows")]):
        con.execute("insert into assay_meta.assay_events values (?, 'CHECK_FAILED', 'r1', 'meter', ?, ?, null, null, "
                    "timestamp '2026-12-05 10:00:00' + to_seconds(?))", [f"e{i}", check, why, i])
    events = {e["check"]: e["why"] for e in table_events(_Project(), Reader(con, "duckdb"), "meter")}
    assert events == {"SITE_FILLED": "column 'site' is 500000 ppm null (2 of 4 rows), above the declared ceiling "
                                     "of 100000 ppm",
                      "KEY_UNIQUE": "2 violating rows"}
