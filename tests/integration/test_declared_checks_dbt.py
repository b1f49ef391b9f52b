"""Declared table checks (000) on dbt: all five kinds measured on the candidate in one query,
required failures set the table back, advisory ones do not, every result is recorded in the
meta schema, and `assay checks RUN_ID --json` prints 000's exact sentences."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support import dbtresults
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  reading:
    grain: one row per reading
    key: [reading_id]
    fields:
      reading_id: {type: string, required: true}
      station: {type: string}
      observed_at: {type: timestamp}
      humidity: {type: "decimal(5,1)"}
      temp_c: {type: "decimal(5,1)"}
      seq: {type: int}
    checks:
      - {check_id: grain_unique, kind: key_uniqueness, enforcement: required, columns: [station, observed_at]}
      - {check_id: temp_present, kind: null_ceiling, enforcement: required, columns: [temp_c], max_null_ppm: 250000}
      - {check_id: humidity_in_range, kind: value_range, enforcement: required, columns: [humidity], min_value: "0", max_value: "100"}
      - {check_id: hourly, kind: continuity, enforcement: advisory, columns: [observed_at], max_gap_seconds: 7200}
      - {check_id: seq_steps, kind: continuity, enforcement: advisory, columns: [seq], max_gap_seconds: 1}
      - {check_id: enough_rows, kind: row_expectation, enforcement: required, min_rows: 3, max_rows: 100}
  # a second entity with checks builds in parallel: the results table must not be raced for
  station:
    grain: one row per station
    key: [station_id]
    fields:
      station_id: {type: string, required: true}
    checks:
      - {check_id: station_rows, kind: row_expectation, enforcement: advisory, max_rows: 10}
"""
MAPPING = """\
mapping_version: 1
source: raw_readings
target: reading
key:
  reading_id: {from: "$.id"}
fields:
  station: {from: "$.station"}
  observed_at: {from: "$.at", transform: [{parse_ts: ISO8601}]}
  humidity: {from: "$.rh", transform: [{to_decimal: [5, 1]}]}
  temp_c: {from: "$.temp", transform: [{to_decimal: [5, 1]}]}
  seq: {from: "$.seq", transform: [to_int]}
"""
STATION_MAPPING = """\
mapping_version: 1
source: raw_stations
target: station
key:
  station_id: {from: "$.id"}
"""
STATIONS = Relation("raw_stations", ["id"], [["A"], ["B"]])
STATION_ROWS = (True, "row count 2 satisfies the declared maximum of 10")
COLS = ["id", "station", "at", "rh", "temp", "seq"]
IDS = ["GRAIN_UNIQUE", "TEMP_PRESENT", "HUMIDITY_IN_RANGE", "HOURLY", "SEQ_STEPS", "ENOUGH_ROWS", "STATION_ROWS"]


# What `assay check rows` shows of HUMIDITY_IN_RANGE's rows in the second build below, the same
# text on every engine and both targets (decision 0952: a decimal as `assay checks` writes it, a
# timestamp in UTC ISO form, the table's column order); the lineage values are the test loader's.
HUMIDITY_ROWS = """\
[
  {
    "table": "reading",
    "check_id": "HUMIDITY_IN_RANGE",
    "row_number": 1,
    "row": {
      "reading_id": "r5",
      "station": "A",
      "observed_at": "2026-03-01T00:00:00Z",
      "humidity": 104.5,
      "temp_c": null,
      "seq": 1,
      "_mapping": "raw_readings",
      "_source_row_id": null,
      "_load_id": null,
      "_ingested_at": null
    }
  },
  {
    "table": "reading",
    "check_id": "HUMIDITY_IN_RANGE",
    "row_number": 2,
    "row": {
      "reading_id": "r7",
      "station": "B",
      "observed_at": "2026-03-01T01:00:00Z",
      "humidity": -3,
      "temp_c": 9,
      "seq": 3,
      "_mapping": "raw_readings",
      "_source_row_id": null,
      "_load_id": null,
      "_ingested_at": null
    }
  }
]
"""


def readings(*rows):
    return Relation("raw_readings", COLS, [list(r) for r in rows])


def run_id(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def wire(project, rid: str) -> list[dict]:
    res = CliRunner().invoke(cli, ["checks", rid, "--json", "--project", str(project.path)])
    results = json.loads(res.stdout)
    # exit 2 when any check of the run did not pass (README, "Exit codes")
    assert res.exit_code == (0 if all(r["passed"] for r in results) else 2), res.output
    return results


def expected(sentences: dict[str, tuple[bool, str]]) -> list[dict]:
    sentences = {**sentences, "STATION_ROWS": STATION_ROWS}
    return [{"check_id": i, "passed": sentences[i][0], "detail": sentences[i][1],
             "scope": "station" if i == "STATION_ROWS" else "reading"} for i in IDS]


def _spec(tmp_path_factory):
    spec = tmp_path_factory.mktemp("spec")
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "readings.yml").write_text(MAPPING)
    (spec / "stations.yml").write_text(STATION_MAPPING)
    return spec


def published(project) -> list[str]:
    return [r[0] for r in project.query("select reading_id from silver.reading order by reading_id")]


class DeclaredChecks:
    def test_pass_then_required_failure_then_advisory_failure(self, project):
        # 1. Everything holds (both range bounds sit on the data, the null share sits on the ceiling).
        project.load_bronze([STATIONS, readings(
            ["r1", "A", "2026-03-01T00:00:00Z", "40.5", "10.0", "1"],
            ["r2", "A", "2026-03-01T01:00:00Z", "100", "11.0", "2"],
            ["r3", "B", "2026-03-01T01:00:00Z", "0", None, "3"],
            ["r4", "B", "2026-03-01T02:30:00Z", None, "12.5", "4"],
        )])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        first = run_id(project)
        assert published(project) == ["r1", "r2", "r3", "r4"]
        assert wire(project, first) == expected({
            "GRAIN_UNIQUE": (True, "key (station, observed_at) is distinct across all 4 rows, as expected"),
            "TEMP_PRESENT": (True, "column 'temp_c' is 250000 ppm null (1 of 4 rows), at or below the declared ceiling of 250000 ppm"),
            "HUMIDITY_IN_RANGE": (True, "column 'humidity' lies within [0, 100] across 3 non-null values of 4 rows"),
            "HOURLY": (True, "column 'observed_at' never gaps by more than 5400 across 3 distinct values, the widest between "
                             "'2026-03-01T01:00:00Z' and '2026-03-01T02:30:00Z', at or below the declared ceiling of 7200, "
                             "measured in seconds between timestamps"),
            "SEQ_STEPS": (True, "column 'seq' never gaps by more than 1 across 4 distinct values, the widest between '1' and '2', "
                                "at or below the declared ceiling of 1, measured in the column's own units between numbers"),
            "ENOUGH_ROWS": (True, "row count 4 satisfies the declared bounds [3, 100]"),
        })

        # 2. Three required checks fail: the run fails with CHECK_FAILED, the table keeps build 1.
        project.load_bronze([STATIONS, readings(
            ["r5", "A", "2026-03-01T00:00:00Z", "104.5", None, "1"],
            ["r6", "A", "2026-03-01T00:00:00Z", "50", None, "2"],
            ["r7", "B", "2026-03-01T01:00:00Z", "-3", "9.0", "3"],
        )])
        proc = project.dbt("build")
        assert proc.returncode != 0
        # the entity alone failed, with CHECK_FAILED naming exactly the three required checks
        # (the mart reads the staged rows, not the entity: it records the run that was set back)
        assert dbtresults.not_ok(project) == {"model.assay_it.reading": "error"}
        detail, candidate = dbtresults.check_failed(project, "model.assay_it.reading")
        # each in the sentence `assay checks` says of it (decision 0945; the same sentences below)
        assert detail == (
            "GRAIN_UNIQUE: key (station, observed_at) repeats on 2 of 3 rows, first at ('A', '2026-03-01T00:00:00Z'), "
            "where 0 repeats were expected; "
            "TEMP_PRESENT: column 'temp_c' is 666667 ppm null (2 of 3 rows), above the declared ceiling of 250000 ppm; "
            "HUMIDITY_IN_RANGE: column 'humidity' holds '-3', below the declared minimum of 0"
        ), detail
        # the candidate holds the failing rows
        assert sorted(project.query(f"select reading_id, humidity, temp_c from {candidate} order by reading_id")) == [
            ("r5", Decimal("104.5"), None), ("r6", Decimal("50.0"), None), ("r7", Decimal("-3.0"), Decimal("9.0"))]
        second = run_id(project)
        assert second != first
        assert published(project) == ["r1", "r2", "r3", "r4"]
        assert wire(project, second) == expected({
            "GRAIN_UNIQUE": (False, "key (station, observed_at) repeats on 2 of 3 rows, first at ('A', '2026-03-01T00:00:00Z'), "
                                    "where 0 repeats were expected"),
            "TEMP_PRESENT": (False, "column 'temp_c' is 666667 ppm null (2 of 3 rows), above the declared ceiling of 250000 ppm"),
            "HUMIDITY_IN_RANGE": (False, "column 'humidity' holds '-3', below the declared minimum of 0"),
            "HOURLY": (True, "column 'observed_at' never gaps by more than 3600 across 2 distinct values, the widest between "
                             "'2026-03-01T00:00:00Z' and '2026-03-01T01:00:00Z', at or below the declared ceiling of 7200, "
                             "measured in seconds between timestamps"),
            "SEQ_STEPS": (True, "column 'seq' never gaps by more than 1 across 3 distinct values, the widest between '1' and '2', "
                                "at or below the declared ceiling of 1, measured in the column's own units between numbers"),
            "ENOUGH_ROWS": (True, "row count 3 satisfies the declared bounds [3, 100]"),
        })
        # the rows the range check found, spelled alike on every engine and target (decision 0952;
        # tests/sqlmesh/test_checks_sqlmesh.py holds SQLMesh's to the same text)
        rows = CliRunner().invoke(cli, ["check", "rows", second, "HUMIDITY_IN_RANGE", "--json", "--project", str(project.path),
                                        "--spec", str(project.spec_dir)])
        assert rows.exit_code == 0, rows.output
        assert rows.stdout == HUMIDITY_ROWS, rows.stdout
        # the set-back run's judgement is history too: its accounting row is in the mart
        assert project.query("select rows_evaluated, rows_quarantined, rows_deduped from gold.mart_data_quality "
                             f"where run_id = '{second}' and entity = 'reading' and rule = '(entity)'") == [(3, 0, 0)]

        # 3. Only advisory checks fail: the build publishes and the failures are recorded.
        project.load_bronze([STATIONS, readings(
            ["r8", "A", "2026-03-01T00:00:00Z", "10", "1.0", "1"],
            ["r9", "A", "2026-03-01T05:00:00Z", "20", "2.0", "5"],
            ["r10", "B", "2026-03-01T05:00:00Z", "30", "3.0", "6"],
        )])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        third = run_id(project)
        assert published(project) == ["r10", "r8", "r9"]
        assert wire(project, third) == expected({
            "GRAIN_UNIQUE": (True, "key (station, observed_at) is distinct across all 3 rows, as expected"),
            "TEMP_PRESENT": (True, "column 'temp_c' is 0 ppm null (0 of 3 rows), at or below the declared ceiling of 250000 ppm"),
            "HUMIDITY_IN_RANGE": (True, "column 'humidity' lies within [0, 100] across 3 non-null values of 3 rows"),
            "HOURLY": (False, "column 'observed_at' gaps from '2026-03-01T00:00:00Z' to '2026-03-01T05:00:00Z' by 18000, above "
                              "the declared ceiling of 7200, measured in seconds between timestamps"),
            "SEQ_STEPS": (False, "column 'seq' gaps from '1' to '5' by 4, above the declared ceiling of 1, measured in the "
                                 "column's own units between numbers"),
            "ENOUGH_ROWS": (True, "row count 3 satisfies the declared bounds [3, 100]"),
        })

        # The results table: one row per run, table and check, failing runs included.
        rows = project.query(
            "select run_id, table_name, check_id, kind, enforcement, passed, row_count "
            "from assay_meta.assay_check_results where table_name = 'reading' order by run_id, check_position"
        )
        by_run = {}
        for r in rows:
            by_run.setdefault(r[0], []).append(r[1:])
        assert set(by_run) == {first, second, third}
        assert by_run[second] == [
            ("reading", "GRAIN_UNIQUE", "key_uniqueness", "required", False, 3),
            ("reading", "TEMP_PRESENT", "null_ceiling", "required", False, 3),
            ("reading", "HUMIDITY_IN_RANGE", "value_range", "required", False, 3),
            ("reading", "HOURLY", "continuity", "advisory", True, 3),
            ("reading", "SEQ_STEPS", "continuity", "advisory", True, 3),
            ("reading", "ENOUGH_ROWS", "row_expectation", "required", True, 3),
        ]
        text = CliRunner().invoke(cli, ["checks", third, "--project", str(project.path)])
        assert text.exit_code == 2  # an advisory check did not pass; it reads warned (decision 0949)
        assert text.stdout.splitlines()[3] == (
            "reading: HOURLY: warned: column 'observed_at' gaps from '2026-03-01T00:00:00Z' to '2026-03-01T05:00:00Z' by "
            "18000, above the declared ceiling of 7200, measured in seconds between timestamps"
        )

    def test_unknown_run_reports_nothing(self, project):
        # a build of its own first, so the results table exists whatever order the tests run in
        project.load_bronze([STATIONS, readings(
            ["r1", "A", "2026-03-01T00:00:00Z", "40.5", "10.0", "1"],
            ["r2", "A", "2026-03-01T01:00:00Z", "100", "11.0", "2"],
            ["r3", "B", "2026-03-01T01:00:00Z", "0", "9.0", "3"],
        )])
        project.dbt("build", check=True)
        assert project.query("select count(*) from assay_meta.assay_check_results")[0][0] > 0
        res = CliRunner().invoke(cli, ["checks", "no-such-run", "--json", "--project", str(project.path)])
        assert res.exit_code == 1
        assert json.loads(res.stdout) == []
        assert "no check results are recorded for run no-such-run" in res.stderr


class TestDeclaredChecksDuckDB(DeclaredChecks):
    @pytest.fixture(scope="class")
    @classmethod
    def project(cls, tmp_path_factory):
        spec = _spec(tmp_path_factory)
        made = make_project(tmp_path_factory.mktemp("declared"), spec)
        made.spec_dir = spec  # `assay check rows --spec`: the types it spells values by (decision 0952)
        return made


@pytest.mark.postgres
class TestDeclaredChecksPostgres(DeclaredChecks):
    @pytest.fixture(scope="class")
    @classmethod
    def project(cls, tmp_path_factory, postgres_database):
        spec = _spec(tmp_path_factory)
        made = make_project(tmp_path_factory.mktemp("declared_pg"), spec, engine="postgres", pg=postgres_database("declared_checks"))
        made.spec_dir = spec
        return made
