"""A SQLMesh plan stopped by a blocking audit still records the entity's check results (issue 18).

Reference 000: every result is recorded. On dbt, the key-uniqueness audit of an entity without
`dedupe:` judges the candidate inside the entity's materialization, after the declared checks
and SQL check files were measured and recorded, then sets the table back. On SQLMesh that audit
sits on the staged model (it stops a run before the entity is written), so before decision 0920
a duplicate key stopped the plan before the entity's recorders ran and `assay checks` said "no
check results are recorded".

One spec (tests/sqlmesh/test_checks_sqlmesh.py's `reading`: six declared checks of all five kinds
and two SQL check files) and one bronze load holding a repeated `reading_id`, on both targets
and on DuckDB and PostgreSQL 18: both builds stop, and both record the same results (check ids,
verdicts, 000's sentences), as `assay checks RUN_ID --json` prints them, the key audit that
stopped them among them (decision 0941).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_declared_checks_dbt import STATIONS, readings
from tests.sqlmesh.test_checks_sqlmesh import write_spec
from tests.support.sqlmeshfailures import AuditFailure, plan_fails

pytestmark = pytest.mark.slow

# r2 twice: the key audit stops both targets; station Z fails the block file; r3's humidity is
# out of range (a failing required check); the rest holds.
DUPLICATE_KEY = readings(
    ["r1", "A", "2026-03-01T00:00:00Z", "40.5", "10.0", "1"],
    ["r2", "A", "2026-03-01T01:00:00Z", "50", "11.0", "2"],
    ["r2", "B", "2026-03-01T01:00:00Z", "60", "12.0", "3"],
    ["r3", "Z", "2026-03-01T02:00:00Z", "104", "13.0", "4"],
)
WANT = [
    # the key audit that stopped both builds records no result: its CHECK_FAILED event is one
    # (decision 0941), first among its table's
    ("KEY_UNIQUE", False, "1 violating row"),
    ("GRAIN_UNIQUE", True, "key (station, observed_at) is distinct across all 4 rows, as expected"),
    ("TEMP_PRESENT", True, "column 'temp_c' is 0 ppm null (0 of 4 rows), at or below the declared ceiling of 250000 ppm"),
    ("HUMIDITY_IN_RANGE", False, "column 'humidity' holds '104', above the declared maximum of 100"),
    ("HOURLY", True, "column 'observed_at' never gaps by more than 3600 across 3 distinct values, the widest between "
                     "'2026-03-01T00:00:00Z' and '2026-03-01T01:00:00Z', at or below the declared ceiling of 7200, "
                     "measured in seconds between timestamps"),
    ("SEQ_STEPS", True, "column 'seq' never gaps by more than 1 across 4 distinct values, the widest between '1' and '2', "
                        "at or below the declared ceiling of 1, measured in the column's own units between numbers"),
    ("ENOUGH_ROWS", True, "row count 4 satisfies the declared bounds [3, 100]"),
    ("FEW_B", True, "returned 1 row (warned)"),
    ("NO_STATION_Z", False, "returned 1 row"),
]


def _checks(path, run_id: str) -> tuple[int, list]:
    res = CliRunner().invoke(cli, ["checks", run_id, "--json", "--project", str(path)])
    return res.exit_code, (json.loads(res.stdout) if res.stdout.strip().startswith("[") else res.output)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory, engine):
    if engine.kind not in ("duckdb", "postgres"):
        pytest.skip("DuckDB and PostgreSQL only")
    root = tmp_path_factory.mktemp(f"failed_run_{engine.id}")
    spec = write_spec(root / "spec", block_file=True)
    name = f"failed_run_{engine.id}"
    dbt = engine.dbt_project(root / "dbt", spec, f"{name}_dbt")
    sqlmesh = engine.sqlmesh_project(root / "sqlmesh", spec, f"{name}_sqlmesh")
    out: dict = {}
    try:
        dbt.load_bronze([STATIONS, DUPLICATE_KEY])
        proc = dbt.dbt("build")
        out["dbt_ok"] = proc.returncode == 0
        out["dbt_log"] = proc.stdout[-4000:]
        dbt_run = json.loads((dbt.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
        out["dbt"] = _checks(dbt.path, dbt_run)

        sqlmesh.load_bronze([STATIONS, DUPLICATE_KEY])
        out["failures"] = plan_fails(sqlmesh)
        runs = [r for (r,) in sqlmesh.query("select distinct run_id from assay_meta.assay_check_results "
                                              "where table_name = 'reading'")] \
            if sqlmesh.query("select count(*) from information_schema.tables "
                             "where table_schema = 'assay_meta' and table_name = 'assay_check_results'")[0][0] else []
        out["runs"] = runs
        out["published"] = sqlmesh.query("select count(*) from information_schema.tables "
                                         "where table_schema = 'silver' and table_name = 'reading'")[0][0]
        sqlmesh.close()  # DuckDB: the CLI opens the warehouse read-only
        out["sqlmesh"] = _checks(sqlmesh.path, runs[0]) if runs else (None, "no run recorded")
        res = CliRunner().invoke(cli, ["check", "list", "--json", "--project", str(sqlmesh.path)])
        out["list"] = (res.exit_code, res.stdout, res.output)
        yield out
    finally:
        sqlmesh.close()


def test_both_builds_stop_on_the_repeated_key(stopped):
    assert not stopped["dbt_ok"], stopped["dbt_log"]
    assert "assay_key_unique" in {f.audit for f in stopped["failures"] if isinstance(f, AuditFailure)}, stopped["failures"]
    assert stopped["published"] == 0  # the failing first version was never promoted


def test_sqlmesh_records_the_stopped_runs_results(stopped):
    assert len(stopped["runs"]) == 1 and stopped["runs"][0].startswith("SQLMESH_PLAN: "), stopped["runs"]
    code, results = stopped["sqlmesh"]
    assert code == 2, results  # some check of the run did not pass
    got = [(r["check_id"], r["passed"], r["detail"]) for r in results if not r["check_id"].startswith("STATION")]
    assert got == WANT


def test_dbt_and_sqlmesh_record_the_same_results(stopped):
    code, from_dbt = stopped["dbt"]
    assert code == 2, from_dbt
    assert [(r["check_id"], r["passed"], r["detail"]) for r in from_dbt if not r["check_id"].startswith("STATION")] == WANT
    assert [r for r in stopped["sqlmesh"][1] if not r["check_id"].startswith("STATION")] == \
        [r for r in from_dbt if not r["check_id"].startswith("STATION")]


def test_check_list_shows_the_stopped_run(stopped):
    code, stdout, output = stopped["list"]
    assert code == 0, output
    listed = {i["check"]: i["outcome"] for i in json.loads(stdout) if i["run"] == (stopped["runs"] or [""])[0]}
    assert listed.get("HUMIDITY_IN_RANGE") == "FAILED" and listed.get("silver.reading/no_station_z") == "FAILED", listed
