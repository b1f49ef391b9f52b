"""Replay re-delivers a typed bronze column's value as the engine wrote it into `raw`.

`raw` is the bronze row as JSON (`row_json`), and a bronze relation need not be all text: a loader
may write a JSON column, whose value `raw` holds as a nested object, or an exact decimal, whose
value `raw` holds as a JSON number. Replay writes each value back as text the column casts from.
Before decision 0975 it wrote Python's spelling of the parsed value: the object as
`{'city': 'Oslo'}` (not JSON: DuckDB refused the insert and replay stopped on a traceback) and the
number through a float (`-12345678901234.123456` came back as `-12345678901234.123`).

One dbt project on DuckDB: X1 is quarantined (negative weight), ages out of bronze, the rule is
relaxed, `assay replay` re-delivers it and the next build admits it with its city read from the
JSON column and its weight digit for digit.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("replay of typed bronze columns (decision 0975); in the fast loop unit/test_replay_winners.py spells the values"),
]

# DuckDB only: replay's re-delivery is the same Python on every engine (assay.replay); the typed
# columns of this story (JSON, DECIMAL(38,6)) are DuckDB's. test_replay_dbt runs replay's SQL on
# PostgreSQL 18.
ENGINE_IDS = ("duckdb",)

ENTITIES = """\
spec_version: 1
entities:
  parcel:
    grain: one row per parcel
    key: [parcel_id]
    fields:
      parcel_id: {type: string, required: true}
      city: {type: string}
      weight: {type: "decimal(38,6)"}
    quarantine: {retention: 3650d}
"""
MAPPING = """\
mapping_version: 1
source: raw_parcels
target: parcel
key:
  parcel_id: {from: "$.id"}
fields:
  city: {from: "$.payload.city"}
  weight:
    from: "$.w"
    quality:
      - {rule: range, min: 0, on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
RELAXED = MAPPING.replace("min: 0,", "min: -100000000000000,")
TABLE = ('create or replace table bronze.raw_parcels (_load_id varchar, _ingested_at varchar, '
         '_source_row_id varchar, id varchar, payload json, w decimal(38,6))')
X0 = "('l1', '2026-03-01T09:00:00Z', 'r0', 'X0', '{\"city\": \"Rome\"}', 1.5)"
X1 = "('l1', '2026-03-01T09:00:00Z', 'r1', 'X1', '{\"city\": \"Oslo\", \"zip\": \"0150\"}', -12345678901234.123456)"
W1 = "('l1', '2026-03-01T09:00:00Z', 's1', 'W1', '{\"city\": \"Bern\"}', -2.5)"  # quarantined too; fits decimal(10,2)


def _write(spec, mapping: str):
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "parcels.yml").write_text(mapping)
    return spec


def _bronze(project, *rows: str) -> None:
    conn = project.connect()
    try:
        conn.execute("create schema if not exists bronze")
        conn.execute(TABLE)
        for row in rows:
            conn.execute(f"insert into bronze.raw_parcels values {row}")
    finally:
        conn.close()


def test_replay_writes_back_a_json_column_and_an_exact_decimal(tmp_path, engine):
    spec = _write(tmp_path / "spec", MAPPING)
    project = engine.dbt_project(tmp_path / "proj", spec, "replay_typed")
    _bronze(project, X0, X1, W1)
    project.dbt("build", check=True)
    assert project.query("select _source_row_id from silver.parcel__reject where resolved_at is null order by 1") == [
        ("r1",), ("s1",)]
    _bronze(project, X0)  # bronze's retention drops X1's and W1's deliveries (replay needs no build between)

    relaxed = _write(tmp_path / "relaxed", RELAXED)
    generate_dbt_project(relaxed, project.path)
    # A column narrowed since (decimal(10,2) holds W1's weight, not X1's): the replay is refused as
    # a whole, and nothing of it is written (an outside tester, session 44: W1 was committed, and
    # the message said 2 rows could not be re-delivered)
    conn = project.connect()
    conn.execute("alter table bronze.raw_parcels alter w type decimal(10,2)")
    conn.close()
    res = CliRunner().invoke(cli, ["replay", "parcel", "--spec", str(relaxed), "--project", str(project.path)])
    assert res.exit_code == 1 and "cannot re-deliver 2 rows" in res.output, res.output
    assert project.query("select count(*) from bronze.raw_parcels where _load_id = '__replay__'") == [(0,)]
    conn = project.connect()
    conn.execute("alter table bronze.raw_parcels alter w type decimal(38,6)")
    conn.close()
    res = CliRunner().invoke(cli, ["replay", "parcel", "--spec", str(relaxed), "--project", str(project.path), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["redelivered"] == {"raw_parcels": 2}
    # bronze holds the replayed delivery with the values the loader wrote
    assert project.query("select cast(payload as varchar), w from bronze.raw_parcels where _load_id = '__replay__' "
                         "order by id") == [('{"city":"Bern"}', Decimal("-2.500000")),
                                            ('{"city":"Oslo","zip":"0150"}', Decimal("-12345678901234.123456"))]

    project.dbt("build", check=True)
    assert project.query("select parcel_id, city, weight, _load_id from silver.parcel order by parcel_id") == [
        ("W1", "Bern", Decimal("-2.500000"), "__replay__"), ("X0", "Rome", Decimal("1.500000"), "l1"),
        ("X1", "Oslo", Decimal("-12345678901234.123456"), "__replay__")]
    assert project.query("select resolution from silver.parcel__reject where _source_row_id = 'r1'") == [("admitted",)]
