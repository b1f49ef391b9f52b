"""Declared checks (000) and SQL check files (002) on the SQLMesh target, through real plans.

The spec of tests/integration/test_declared_checks_dbt.py (required and advisory declared checks
of all five kinds on `reading`, an advisory one on `station`) plus two SQL check files on
`reading`: `few_b` (warn) and `no_station_z` (block), and in the story `station_number` (warn),
whose SQL errors on every load (an errored result; the plans go on).

The story, on DuckDB and PG18 (the `engine` fixture):
1. everything holds: the plan applies, every result is recorded under the plan's run id;
2. three required checks and the block file fail: the plan fails, naming exactly those four
   audits of `silver.reading`; the results of the failing plan are recorded; the mart is not
   built, and the entity (the same model version, evaluated in place) holds the new rows;
3. only advisory checks and the warn file fail: the plan applies, the failures are recorded;
4. `sqlmesh run` over failing data: the run fails on the same audits, and the entity holds the
   new rows (SQLMesh audits after writing in place; docs/sqlmesh.md, "Table checks").
And a twin: the same spec's checks pass and fail identically on dbt and SQLMesh (DuckDB).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.checks.recorded import verdict_of_row
from assay.cli.main import cli
from tests.integration.test_declared_checks_dbt import ENTITIES as DBT_ENTITIES
from tests.integration.test_declared_checks_dbt import HUMIDITY_ROWS, MAPPING, STATION_MAPPING, STATION_ROWS, STATIONS, readings
from tests.support.sqlmeshfailures import AuditFailure, collect, plan_fails, planned_with_warnings

pytestmark = pytest.mark.slow

FEW_B = "/* assay\non_failure: warn\n*/\nselect * from silver.reading where station = 'B'\n"
NO_Z = "/* assay\non_failure: block\ndescription: station Z is decommissioned.\n*/\nselect r.reading_id from silver.reading as r where r.station = 'Z'\n"
# `station` gains a required check whose pass is over its 10-byte scan budget (assay.yml): it is
# not_evaluated, and neither plan nor run fails for it (000); its row_expectation still evaluates.
ENTITIES = DBT_ENTITIES.replace(
    "      - {check_id: station_rows, kind: row_expectation, enforcement: advisory, max_rows: 10}\n",
    "      - {check_id: station_rows, kind: row_expectation, enforcement: advisory, max_rows: 10}\n"
    "      - {check_id: station_unique, kind: key_uniqueness, enforcement: required, columns: [station_id]}\n",
)
SETTINGS = "checks:\n  budgets:\n    station: {scan_budget_bytes: 10}\n"
NOT_EVALUATED = "not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: estimated scan of "

# a warn file whose SQL errors on every load here (no station is a number): a result, not a stop
ERRORS = "/* assay\non_failure: warn\n*/\nselect reading_id from silver.reading where cast(station as int) > 5\n"
ERRORED = "silver.reading/station_number"
IDS = ["GRAIN_UNIQUE", "TEMP_PRESENT", "HUMIDITY_IN_RANGE", "HOURLY", "SEQ_STEPS", "ENOUGH_ROWS"]

PASSING = readings(
    ["r1", "A", "2026-03-01T00:00:00Z", "40.5", "10.0", "1"],
    ["r2", "A", "2026-03-01T01:00:00Z", "100", "11.0", "2"],
    ["r3", "B", "2026-03-01T01:00:00Z", "0", None, "3"],
    ["r4", "B", "2026-03-01T02:30:00Z", None, "12.5", "4"],
)
BLOCKING = readings(
    ["r5", "A", "2026-03-01T00:00:00Z", "104.5", None, "1"],
    ["r6", "A", "2026-03-01T00:00:00Z", "50", None, "2"],
    ["r7", "Z", "2026-03-01T01:00:00Z", "-3", "9.0", "3"],
)
ADVISORY = readings(
    ["r8", "A", "2026-03-01T00:00:00Z", "10", "1.0", "1"],
    ["r9", "A", "2026-03-01T05:00:00Z", "20", "2.0", "5"],
    ["r10", "B", "2026-03-01T05:00:00Z", "30", "3.0", "6"],
)

PASS_SENTENCES = {
    "GRAIN_UNIQUE": (True, "key (station, observed_at) is distinct across all 4 rows, as expected"),
    "TEMP_PRESENT": (True, "column 'temp_c' is 250000 ppm null (1 of 4 rows), at or below the declared ceiling of 250000 ppm"),
    "HUMIDITY_IN_RANGE": (True, "column 'humidity' lies within [0, 100] across 3 non-null values of 4 rows"),
    "HOURLY": (True, "column 'observed_at' never gaps by more than 5400 across 3 distinct values, the widest between "
                     "'2026-03-01T01:00:00Z' and '2026-03-01T02:30:00Z', at or below the declared ceiling of 7200, "
                     "measured in seconds between timestamps"),
    "SEQ_STEPS": (True, "column 'seq' never gaps by more than 1 across 4 distinct values, the widest between '1' and '2', "
                        "at or below the declared ceiling of 1, measured in the column's own units between numbers"),
    "ENOUGH_ROWS": (True, "row count 4 satisfies the declared bounds [3, 100]"),
    "silver.reading/few_b": (True, "returned 2 rows (warned)"),
    "silver.reading/no_station_z": (True, "returned no rows, as expected"),
}
BLOCK_SENTENCES = {
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
    "silver.reading/few_b": (True, "returned no rows, as expected"),
    "silver.reading/no_station_z": (False, "returned 1 row"),
}
ADVISORY_SENTENCES = {
    "GRAIN_UNIQUE": (True, "key (station, observed_at) is distinct across all 3 rows, as expected"),
    "TEMP_PRESENT": (True, "column 'temp_c' is 0 ppm null (0 of 3 rows), at or below the declared ceiling of 250000 ppm"),
    "HUMIDITY_IN_RANGE": (True, "column 'humidity' lies within [0, 100] across 3 non-null values of 3 rows"),
    "HOURLY": (False, "column 'observed_at' gaps from '2026-03-01T00:00:00Z' to '2026-03-01T05:00:00Z' by 18000, above "
                      "the declared ceiling of 7200, measured in seconds between timestamps"),
    "SEQ_STEPS": (False, "column 'seq' gaps from '1' to '5' by 4, above the declared ceiling of 1, measured in the "
                         "column's own units between numbers"),
    "ENOUGH_ROWS": (True, "row count 3 satisfies the declared bounds [3, 100]"),
    "silver.reading/few_b": (True, "returned 1 row (warned)"),
    "silver.reading/no_station_z": (True, "returned no rows, as expected"),
}
BLOCKING_AUDITS = {"assay_check__grain_unique", "assay_check__temp_present", "assay_check__humidity_in_range",
                   "assay_sql_check__no_station_z"}


def expected(sentences: dict) -> list[dict]:
    """000's wire shape, in `assay checks` order: table, then check position (SQL files last)."""
    ids = IDS + sorted(k for k in sentences if "/" in k)
    out = [{"check_id": wire_id(i), "passed": sentences[i][0], "detail": sentences[i][1], "scope": "reading"} for i in ids]
    return out + [{"check_id": "STATION_ROWS", "passed": STATION_ROWS[0], "detail": STATION_ROWS[1], "scope": "station"},
                  {"check_id": "STATION_UNIQUE", "passed": False, "detail": NOT_EVALUATED, "scope": "station"}]


def wire_id(name: str) -> str:
    """000's check_id of a recorded check (decision 0948): a SQL check file's stem, upper-cased."""
    return name.rsplit("/", 1)[-1].upper()


def same(got: list[dict], want: list[dict]) -> bool:
    """Equal, except that the estimated bytes of a not_evaluated sentence are the engine's."""
    def norm(results):
        return [{**r, "detail": NOT_EVALUATED} if r["detail"].startswith(NOT_EVALUATED) else r for r in results]
    return norm(got) == norm(want)


def write_spec(spec: Path, block_file: bool, error_file: bool = False) -> Path:
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "assay.yml").write_text(SETTINGS)
    (spec / "readings.yml").write_text(MAPPING)
    (spec / "stations.yml").write_text(STATION_MAPPING)
    checks = spec / "checks" / "silver" / "reading"
    checks.mkdir(parents=True, exist_ok=True)
    (checks / "few_b.sql").write_text(FEW_B)
    if block_file:
        (checks / "no_station_z.sql").write_text(NO_Z)
    if error_file:
        (checks / "station_number.sql").write_text(ERRORS)
    return spec


def wire(project, run_id: str) -> list[dict]:
    """The recorded results of one run as `assay checks RUN_ID --json` prints them (its order, the
    recorded verdict, the sentence rendered from the recorded numbers by assay.checks.recorded)."""
    rows = project.query(
        "select table_name, check_id, kind, passed, check_spec, measures, check_position "
        f"from assay_meta.assay_check_results where run_id = '{run_id}'"
    )
    return [{"check_id": wire_id(r[1]), "passed": bool(r[3]), "detail": verdict_of_row(r[2], r[4], r[5]).detail, "scope": r[0]}
            for r in sorted(rows, key=lambda r: (r[0], r[6], r[1]))]


def published(project) -> list[str]:
    return [r[0] for r in project.query("select reading_id from silver.reading order by reading_id")]


def failed_audits(found) -> set[tuple[str, str]]:
    return {(f.model_name, f.audit) for f in found if isinstance(f, AuditFailure)}


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine):
    root = tmp_path_factory.mktemp(f"checks_sqlmesh_{engine.id}")
    spec = write_spec(root / "spec", block_file=True, error_file=True)
    project = engine.sqlmesh_project(root / "project", spec, f"checks_sqlmesh_{engine.id}".replace("-", "_"))
    out: dict = {}
    try:
        project.load_bronze([STATIONS, PASSING])
        out["plan1"], out["warnings1"] = planned_with_warnings(project)
        out["published1"] = published(project)
        out["mart1"] = project.query("select count(*) from gold.mart_data_quality")

        project.load_bronze([STATIONS, BLOCKING])
        out["failures2"] = plan_fails(project)
        out["published2"] = published(project)
        out["mart2"] = project.query("select count(*) from gold.mart_data_quality")
        runs = [r[0] for r in project.query("select distinct run_id from assay_meta.assay_check_results")]
        out["plan2"] = next(r for r in runs if r != out["plan1"])

        project.load_bronze([STATIONS, ADVISORY])
        out["plan3"], out["warnings3"] = planned_with_warnings(project)
        out["published3"] = published(project)

        project.load_bronze([STATIONS, BLOCKING])
        with collect() as found:
            out["run4_ok"] = project.run()
        out["failures4"] = found
        out["published4"] = published(project)
        out["runs"] = {r[0] for r in project.query("select distinct run_id from assay_meta.assay_check_results")}
        out["wire"], out["errored"] = {}, {}
        for k, v in out.items():
            if k.startswith("plan") and isinstance(v, str):
                results = wire(project, v)
                out["errored"][k] = [r for r in results if r["check_id"] == wire_id(ERRORED)]
                out["wire"][k] = [r for r in results if r["check_id"] != wire_id(ERRORED)]
        out["columns"] = project.query(
            "select run_id, table_name, check_id, check_position, kind, enforcement, passed, row_count "
            f"from assay_meta.assay_check_results where run_id = '{out['plan2']}' and table_name = 'reading' "
            "order by check_position"
        )
        out["project"] = project.path
        project.close()  # DuckDB: the CLI opens the warehouse read-only, which one process cannot mix
        out["cli"] = {}
        for plan in ("plan1", "plan2", "plan3"):
            res = CliRunner().invoke(cli, ["checks", out[plan], "--json", "--project", str(project.path)])
            out["cli"][plan] = (res.exit_code, res.stdout, res.stderr)
        res = CliRunner().invoke(cli, ["check", "list", "--json", "--project", str(project.path)])
        out["cli"]["list"] = (res.exit_code, res.stdout, res.stderr)
        out["rows"] = {}
        for plan, check in ROWS_FOUND:
            res = CliRunner().invoke(cli, ["check", "rows", out[plan], check, "--json", "--project", str(project.path),
                                           "--spec", str(spec)])
            out["rows"][(plan, check)] = (res.exit_code, res.stdout, res.stderr)
        yield out
    finally:
        project.close()


def test_holding_checks_pass_the_plan_and_are_recorded(story):
    assert story["published1"] == ["r1", "r2", "r3", "r4"]
    assert same(story["wire"]["plan1"], expected(PASS_SENTENCES)), story["wire"]["plan1"]
    # over the budget: not evaluated, the plan applied all the same (000: no run fails for it)
    [unique] = [r for r in story["wire"]["plan1"] if r["check_id"] == "STATION_UNIQUE"]
    assert unique["detail"].endswith(" bytes exceeds the 10-byte ceiling"), unique


def test_a_failing_blocking_check_fails_the_plan_naming_its_audit(story):
    # exactly the required declared checks and the block file that failed, on the entity
    assert failed_audits(story["failures2"]) == {("silver.reading", a) for a in BLOCKING_AUDITS}, story["failures2"]
    assert all(isinstance(f, AuditFailure) for f in story["failures2"]), story["failures2"]
    # the audit's row carries 000's sentence, so SQLMesh's error shows what was measured, once per
    # row the check found failing (decision 0945): SQLMesh's "N rows failed" is `assay checks`' count
    [grain] = [f for f in story["failures2"] if f.audit == "assay_check__grain_unique"]
    assert "GRAIN_UNIQUE: key (station, observed_at) repeats on 2 of 3 rows" in grain.sql
    counts = {f.audit: f.count for f in story["failures2"]}
    assert counts == {"assay_check__grain_unique": 2, "assay_check__temp_present": 2,
                      "assay_check__humidity_in_range": 2, "assay_sql_check__no_station_z": 1}, counts
    # the same model version is evaluated in place, as `sqlmesh run` does: the rows are written
    # before the audits judge them (docs/sqlmesh.md, "Table checks")
    assert story["published2"] == ["r5", "r6", "r7"]
    # the mart reads the staged rows, not the entity: the stopped plan's judgement is recorded too
    assert story["mart2"] == [(2 * story["mart1"][0][0],)]
    # the failing plan's results are recorded, under its own run id
    assert story["plan2"].startswith("SQLMESH_PLAN: ")
    assert same(story["wire"]["plan2"], expected(BLOCK_SENTENCES)), story["wire"]["plan2"]
    assert story["columns"] == [
        (story["plan2"], "reading", "GRAIN_UNIQUE", 1, "key_uniqueness", "required", False, 3),
        (story["plan2"], "reading", "TEMP_PRESENT", 2, "null_ceiling", "required", False, 3),
        (story["plan2"], "reading", "HUMIDITY_IN_RANGE", 3, "value_range", "required", False, 3),
        (story["plan2"], "reading", "HOURLY", 4, "continuity", "advisory", True, 3),
        (story["plan2"], "reading", "SEQ_STEPS", 5, "continuity", "advisory", True, 3),
        (story["plan2"], "reading", "ENOUGH_ROWS", 6, "row_expectation", "required", True, 3),
        (story["plan2"], "reading", "silver.reading/few_b", 1001, "sql", "warn", True, 0),
        (story["plan2"], "reading", "silver.reading/no_station_z", 1002, "sql", "block", False, 1),
        (story["plan2"], "reading", ERRORED, 1003, "sql", "warn", False, 0),
    ]


def test_a_warn_file_whose_sql_errors_is_an_errored_result_and_the_plans_go_on(story):
    # plans 1 and 3 applied with it (above); each plan recorded it errored, with the engine's message
    for plan in ("plan1", "plan2", "plan3"):
        [result] = story["errored"][plan]
        assert result["passed"] is False and result["detail"].startswith("errored: "), result
        assert "station" in result["detail"].lower() or "integer" in result["detail"].lower(), result
    assert "'assay_sql_check__station_number' audit error: 1 row failed" in story["warnings3"]


def test_a_warn_file_s_audit_counts_the_rows_it_returned(story):
    # few_b returned 2 rows on the first load (r3, r4: `returned 2 rows (warned)`): SQLMesh's
    # warning says 2 rows, as `assay checks` does (decision 0945), not the one recorded result
    [few_b] = [r for r in story["wire"]["plan1"] if r["check_id"] == wire_id("silver.reading/few_b")]
    assert few_b["detail"] == "returned 2 rows (warned)", few_b
    assert "'assay_sql_check__few_b' audit error: 2 rows failed" in story["warnings1"], story["warnings1"]


def test_advisory_and_warn_failures_publish_and_are_recorded(story):
    assert story["published3"] == ["r10", "r8", "r9"]
    assert same(story["wire"]["plan3"], expected(ADVISORY_SENTENCES)), story["wire"]["plan3"]
    # the non-blocking audits report them, by name
    for audit in ("assay_check__hourly", "assay_check__seq_steps", "assay_sql_check__few_b"):
        assert f"'{audit}' audit error: 1 row failed" in story["warnings3"], story["warnings3"]


def test_sqlmesh_run_stops_downstream_but_the_entity_holds_the_new_rows(story):
    # `sqlmesh run` audits a model after writing it in place: the run fails on the same audits,
    # and what it cannot do is keep the previous rows (docs/sqlmesh.md, "Table checks").
    assert story["run4_ok"] is False
    assert failed_audits(story["failures4"]) == {("silver.reading", a) for a in BLOCKING_AUDITS}
    assert story["published4"] == ["r5", "r6", "r7"]
    run_ids = story["runs"] - {story["plan1"], story["plan2"], story["plan3"]}
    assert len(run_ids) == 1 and next(iter(run_ids)).startswith("SQLMESH_RUN: ")


# The rows each failing check found (decision 0532), by reading_id, written by hand from the loads:
# the repeated key (A, 00:00), the humidities outside [0, 100], station Z, and the warn file's B rows.
ROWS_FOUND = {
    ("plan2", "GRAIN_UNIQUE"): ["r5", "r6"],
    ("plan2", "HUMIDITY_IN_RANGE"): ["r5", "r7"],
    ("plan2", "silver.reading/no_station_z"): ["r7"],
    ("plan3", "silver.reading/few_b"): ["r10"],
}


def test_check_rows_shows_what_each_failing_check_found(story):
    for (plan, check), expected_ids in ROWS_FOUND.items():
        code, stdout, stderr = story["rows"][(plan, check)]
        assert code == 0, (check, stdout, stderr)
        kept = json.loads(stdout)
        assert sorted(i["row"]["reading_id"] for i in kept) == expected_ids, (check, kept)
        assert [i["row_number"] for i in kept] == list(range(1, len(kept) + 1)), kept
        if check == "HUMIDITY_IN_RANGE":
            # the whole rows, the same text on every engine and as dbt shows its own (decision 0952;
            # the dbt story's r7 is at station B with 9.0)
            assert stdout == HUMIDITY_ROWS.replace('"station": "B"', '"station": "Z"'), stdout
        if check == "silver.reading/no_station_z":  # a SQL check's column passed through
            assert [i["row"] for i in kept] == [{"reading_id": "r7"}], kept


def test_docstring_examples_of_the_check_macros_run():
    import doctest

    from assay_sqlmesh import check_audits, checks

    for module in (checks, check_audits):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module


def test_assay_checks_and_check_list_read_the_sqlmesh_results_through_the_gateway(story):
    for plan in ("plan1", "plan2", "plan3"):
        code, stdout, stderr = story["cli"][plan]
        printed = json.loads(stdout)
        # every run has a result that did not pass (the errored warn file): exit 2
        assert code == 2, (stdout, stderr)
        assert [r for r in printed if r["check_id"] != wire_id(ERRORED)] == story["wire"][plan]
        assert [r for r in printed if r["check_id"] == wire_id(ERRORED)] == story["errored"][plan]
    code, stdout, stderr = story["cli"]["list"]
    assert code == 0, stderr
    listed = json.loads(stdout)
    runs = {i["run"] for i in listed}
    assert {story["plan1"], story["plan2"], story["plan3"]} <= runs
    plan2 = {i["check"]: (i["outcome"], i["on_failure"]) for i in listed if i["run"] == story["plan2"]}
    assert plan2["silver.reading/no_station_z"] == ("FAILED", "block")
    assert plan2["GRAIN_UNIQUE"][0] == "FAILED"
    # rows: what each check found failing; kept: what `assay check rows` prints (decision 1121)
    counted = {i["check"]: (i["rows"], i["kept"]) for i in listed if i["run"] == story["plan2"]}
    for (plan, check), ids in ROWS_FOUND.items():
        if plan == "plan2":
            assert counted[check] == (len(ids), len(ids)), (check, counted)


# --------------------------------------------------------------------------- the twin


@pytest.mark.long("dbt and SQLMesh built side by side; in the fast loop each target's own check tests run: this module's others and test_declared_checks_dbt.py")
def test_dbt_and_sqlmesh_agree_on_the_same_checks(tmp_path):
    """The same spec and bronze on both targets (DuckDB): same check ids, verdicts and sentences.

    The block file arrives with the failing load, so on SQLMesh that plan changes the entity: the
    new version fails its audits and is not promoted, and readers keep the rows of the first
    load, as dbt's set-back keeps them. (A changed entity planned on PostgreSQL:
    tests/sqlmesh/test_regenerate_sqlmesh.py.)"""
    from assay.api import generate_dbt_project
    from assay.api_sqlmesh import generate_sqlmesh_project
    from tests.support.dbtproject import make_project as make_dbt
    from tests.support.sqlmeshproject import make_project as make_sqlmesh

    spec = write_spec(tmp_path / "spec", block_file=False)
    dbt = make_dbt(tmp_path / "dbt", spec)
    sqlmesh = make_sqlmesh(tmp_path / "sqlmesh", spec)
    try:
        for data, blocked in ((PASSING, False), (BLOCKING, True), (ADVISORY, False)):
            if blocked:  # the block file changes the entity model on both targets
                write_spec(spec, block_file=True)
                assert not generate_dbt_project(spec, dbt.path).report.conflicts
                assert not generate_sqlmesh_project(spec, sqlmesh.path, dialect=sqlmesh.dialect).report.conflicts
                sqlmesh.context(fresh=True)
            dbt.load_bronze([STATIONS, data])
            sqlmesh.load_bronze([STATIONS, data])
            proc = dbt.dbt("build")
            assert (proc.returncode != 0) == blocked, proc.stdout[-3000:]
            dbt_run = json.loads((dbt.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
            res = CliRunner().invoke(cli, ["checks", dbt_run, "--json", "--project", str(dbt.path)])
            from_dbt = json.loads(res.stdout)
            if blocked:
                failures = plan_fails(sqlmesh)
                assert failed_audits(failures) == {("silver.reading", a) for a in BLOCKING_AUDITS}
                runs = {r[0] for r in sqlmesh.query("select run_id from assay_meta.assay_check_results")}
                sm_run = max(runs, key=lambda r: sqlmesh.query(
                    f"select max(recorded_at) from assay_meta.assay_check_results where run_id = '{r}'")[0][0])
                # dbt set the table back; SQLMesh did not promote the failing version
                assert published(dbt) == published(sqlmesh) == ["r1", "r2", "r3", "r4"]
            else:
                sm_run = f"SQLMESH_PLAN: {sqlmesh.plan().plan_id}"
            assert wire(sqlmesh, sm_run) == from_dbt
            assert [r["check_id"] for r in from_dbt][:len(IDS)] == IDS
        assert published(dbt) == published(sqlmesh) == ["r10", "r8", "r9"]
    finally:
        sqlmesh.close()
