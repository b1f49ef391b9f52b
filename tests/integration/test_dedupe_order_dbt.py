"""A value that does not cast in a column the dedupe order reads stops the run, also when that
row loses the dedupe (decision 0018), on DuckDB and PostgreSQL, as the oracle says.

Before 0018 the failed cast made the row's `seq` NULL, NULLs sort last, so the row lost its key
and was never judged: an older delivery won silently, which 001's forced `fail` exists to stop.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support import dbtresults
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project
from tests.support.oracle import Oracle

pytestmark = pytest.mark.slow

ENTITY = """spec_version: 1
entities:
  reading:
    grain: one row per reading
    key: [reading_id]
    fields:
      reading_id: {type: string}
      seq: {type: int}
      value: {type: "decimal(10,2)"}
    dedupe: {keep: latest_by, field: seq, tie_break: [_load_id]}
    quarantine: {retention: 30d}
"""
MAPPING = """mapping_version: 1
source: raw_readings
target: reading
key:
  reading_id: {from: "$.id"}
fields:
  seq: {from: "$.seq", transform: [to_int]}
  value: {from: "$.value", transform: [{to_decimal: [10, 2]}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "seq", "value"]
T0 = "2026-02-01T10:00:00Z"
GOOD = [["l1", T0, "s1", "R1", "9", "1.00"], ["l1", T0, "s2", "R2", "3", "2.00"]]
# R1 again, with a sequence number that does not cast: it would be the newest if it did.
BAD_LOSER = ["l2", "2026-02-02T10:00:00Z", "s3", "R1", "ten", "5.00"]
TEST = "test.assay_it.assay_fail_rule__reading__seq_coercible"


def _scenario(tmp_path, engine, pg=None):
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entity.yaml").write_text(ENTITY)
    (spec / "mapping.yaml").write_text(MAPPING)
    project = make_project(tmp_path / "proj", spec, engine=engine, pg=pg)

    oracle = Oracle(spec)
    project.load_bronze([Relation("raw_readings", COLS, GOOD)])
    project.dbt("build", check=True)
    assert oracle.build({"raw_readings": [dict(zip(COLS, r)) for r in GOOD]})["reading"].blocked == []
    before = sorted(project.query('select reading_id, seq, _source_row_id from silver."reading"'))
    assert before == [("R1", 9, "s1"), ("R2", 3, "s2")]

    rows = GOOD + [BAD_LOSER]
    expected = oracle.build({"raw_readings": [dict(zip(COLS, r)) for r in rows]})["reading"]
    assert expected.blocked == ["reading: fail rule seq_coercible fired"]
    assert {(s.srid, s.route, s.failed_rules) for s in expected.rows} == {
        ("s1", "kept", ()), ("s2", "kept", ()), ("s3", "deduped", ("seq_coercible",))}

    project.load_bronze([Relation("raw_readings", COLS, rows)])
    proc = project.dbt("build")
    assert proc.returncode != 0
    failed = dbtresults.not_ok(project)
    assert failed.get(TEST) == "fail", failed
    # the losing delivery is the row the test found, still routed deduped
    found = dbtresults.failing_rows(project, TEST)
    assert len(found) == 1 and all(v in found[0] for v in ("R1", "s3", "l2", "deduped")), found
    # nothing downstream was built: the published entity is the first build's
    assert failed.get("model.assay_it.reading") == "skipped", failed
    assert sorted(project.query('select reading_id, seq, _source_row_id from silver."reading"')) == before
    # explain names the cast that failed and the verdict on the losing delivery (an outside tester,
    # session 36: it said only "lost the dedupe", with no coercion and no verdict)
    said = CliRunner().invoke(cli, ["explain", "reading", "R1", "--json", "--spec", str(spec), "--project", str(project.path)])
    assert said.exit_code == 0, said.output
    loser = next(d for d in json.loads(said.stdout)["deliveries"] if d["source_row_id"] == "s3")
    assert loser["route"] == "deduped" and loser["coercions"] == ["seq: bronze $.seq = 'ten' did not become an int"], loser
    assert [(v["rule"], v["verdict"]) for v in loser["verdicts"]] == [("seq_coercible", "fired")], loser
    assert any("decision 0018" in w for w in loser["why"]), loser["why"]


def test_dedupe_column_cast_failure_on_a_loser_stops_the_run_on_duckdb(tmp_path):
    _scenario(tmp_path, "duckdb")


@pytest.mark.postgres
def test_dedupe_column_cast_failure_on_a_loser_stops_the_run_on_postgres(tmp_path, postgres_database):
    _scenario(tmp_path, "postgres", postgres_database("dedupe_order"))
