"""The report over large data (an outside tester, probe R6).

The open reject rows by age are counted by the engine: `assay report` fetched every open
row's `last_seen` into Python, twice (an outside tester, probe R6: 900,000 open rows of one entity
held 190 MB of Python heap for a 240 KB report). The buckets are unchanged: a row's age is its
share of retention, bucket by bucket, past retention last, and those past retention that bronze
still delivers are counted apart (decision 0951). And an example shows at most EXAMPLE_CHARS
of a value: one quarantined row with a 5 MB value made a 10 MB page (decision 0991)."""

from __future__ import annotations

import datetime as dt
import json

import duckdb

from assay.api import load_project
from assay.report.gather import EXAMPLE_CHARS, Gatherer
from assay.runtime.warehouse import Reader

ENTITIES = """\
spec_version: 1
entities:
  ev:
    grain: one row per event
    key: [ev_id]
    fields:
      ev_id: {type: string, required: true}
    quarantine: {retention: 10d}
"""
MAPPING = """\
mapping_version: 1
source: raw_ev
target: ev
key:
  ev_id: {from: "$.ev_id", transform: [trim]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
NOW = dt.datetime(2026, 12, 6, 12, 0, 0)
# (hours before NOW, how many open rows, whether bronze still delivers them); retention is 240 hours
AGES = [(None, 3, False), (-5, 2, False), (0, 4, False), (60, 5, False), (61, 6, False), (120, 7, False),
        (180, 8, False), (240, 9, False), (241, 10, False), (241, 11, True), (5000, 12, True)]


def _project(spec_dir, reject_columns: str):
    """The spec, and an in-memory warehouse with schemas bronze and silver and `silver.ev__reject`."""
    (spec_dir / "entities.yml").write_text(ENTITIES)
    (spec_dir / "ev.yml").write_text(MAPPING)
    con = duckdb.connect()
    con.execute("create schema bronze; create schema silver")
    con.execute(f"create table silver.ev__reject ({reject_columns})")
    return load_project(spec_dir), con


def test_open_reject_rows_are_bucketed_by_counts_not_fetched(tmp_path):
    project, con = _project(tmp_path, "source_relation varchar, _source_row_id varchar, last_seen timestamp, resolved_at timestamp")
    con.execute("create table bronze.raw_ev (_source_row_id varchar)")
    for at, (hours, n, held) in enumerate(AGES):
        seen = None if hours is None else NOW - dt.timedelta(hours=hours)
        for i in range(n):
            con.execute("insert into silver.ev__reject values ('raw_ev', ?, ?, null)", (f"r{at}-{i}", seen))
            if held:
                con.execute("insert into bronze.raw_ev values (?)", (f"r{at}-{i}",))
    con.execute("insert into silver.ev__reject values ('raw_ev', 'gone', timestamp '2020-01-01', timestamp '2020-01-02')")
    reader = Reader(con, "duckdb")
    fetched: list[int] = []

    def counted(sql: str, params: tuple = ()) -> list[tuple]:
        rows = reader.query(sql, params)
        fetched.append(len(rows))
        return rows

    gatherer = Gatherer(project, counted, reader.columns, reader.exists, reader.relation)
    rejects = gatherer._open_rejects(project.entity("ev"), NOW, [])
    # share of retention: <= 25% (60 h): NULL, future, 0 h, 60 h; <= 50%: 61, 120 h; then 180 h, 240 h; past: 241 h on
    assert [b["rows"] for b in rejects["by_age"]] == [3 + 2 + 4 + 5, 6 + 7, 8, 9, 10 + 11 + 12]
    assert rejects["open"] == sum(n for _, n, _ in AGES)
    assert rejects["past_retention_in_bronze"] == 11 + 12
    assert max(fetched) == 1, fetched


def test_an_example_shows_a_long_value_cut_and_its_key_whole(tmp_path):
    project, con = _project(tmp_path, "source_relation varchar, _source_row_id varchar, failed_rules varchar[], "
                                      "key_values varchar, raw varchar, last_seen timestamp, resolved_at timestamp")
    key = "K" * 300
    raw = {"ev_id": key, "note": "x" * 1_000_000, "doc": {"deep": "y" * 500}, "short": "kept"}
    con.execute("insert into silver.ev__reject values ('raw_ev', 'r1', ['ev_id_coercible'], ?, ?, ?, null)",
                (json.dumps({"ev_id": key}), json.dumps(raw), NOW))
    reader = Reader(con, "duckdb")
    example, = Gatherer(project, reader.query, reader.columns, reader.exists, reader.relation)._examples(
        project.entity("ev"), ["ev_id_coercible"])["ev_id_coercible"]
    assert example["key"] == {"ev_id": key}
    assert example["raw"]["note"] == "x" * EXAMPLE_CHARS + "... (1,000,000 characters)"
    assert example["raw"]["doc"] == {"deep": "y" * EXAMPLE_CHARS + "... (500 characters)"}
    assert example["raw"]["short"] == "kept" and example["raw"]["ev_id"].endswith("... (300 characters)")
