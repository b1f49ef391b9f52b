"""A SQLMesh build its staged key audit or a `fail` rule stops records the entity's counts, as dbt
does (decisions 1143, 1162).

On dbt the key among the kept rows of an entity without `dedupe:` is judged on the entity's
candidate after its staged table was built: the table is set back and the run's counts are
recorded (0413, 0942); an entity its `fail` rule stopped is recorded by the package's on-run-end
hook (1162). On SQLMesh the same audits sit on the staged model (0921) and SQLMesh skips the
entity's mart part below them, so the run had no counts of the entity there. The staged model's
last post-statement writes them into `<meta>.assay_stopped_counts`, which `gold.mart_data_quality`
reads beside the parts, when the key or a `fail` rule stops the build. The ingestion metadata
stopping it records nothing, on both targets (its rows were not judged).

Real `sqlmesh plan` and `sqlmesh run` on DuckDB and PostgreSQL 18, and real `dbt build` on DuckDB,
against counts taken by hand: `meter` (no dedupe, a `fail` rule on `site`) stops; `gauge` is judged.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.integration.test_mart_of_stopped_runs_dbt import gauges, mart, write_spec
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

# Not PostgreSQL 15, to keep the module short: the recorder runs the parts' own query (planned on 15
# by test_regenerate_sqlmesh) and plain CREATE TABLE IF NOT EXISTS / INSERT ... SELECT.
ENGINE_IDS = ("duckdb", "pg18")

COLUMNS = ["id", "site", "_source_row_id", "_load_id", "_ingested_at"]
CLEAN = [["M1", "a", "M1", "L1", "2024-01-01 00:00:01"], ["M2", "b", "M2", "L1", "2024-01-01 00:00:01"],
         ["M3", "c", "M3", "L1", "2024-01-01 00:00:01"]]
REPEATED_KEY = [["M2", "z", "M2b", "L2", "2024-01-01 00:00:02"]]  # a second source row of key M2


def meters(*rows: list) -> Relation:
    return Relation("raw_meters", COLUMNS, [*CLEAN, *rows])


# What each build holds, by hand: {(entity, rule): (evaluated, failed, quarantined, deduped)}.
FIRST = {
    ("meter", "(entity)"): (3, 0, 0, 0), ("meter", "meter_id_coercible"): (0, 0, 0, 0),
    ("meter", "site_coercible"): (0, 0, 0, 0), ("meter", "site_not_null"): (0, 0, 0, 0),
    ("gauge", "(entity)"): (2, 0, 1, 0), ("gauge", "gauge_id_coercible"): (0, 0, 0, 0),
    ("gauge", "reading_coercible"): (0, 1, 0, 0),
}
# meter: 5 bronze rows, each its source row's only delivery, none diverted; M2 twice among the
# kept rows, so the key stops it. gauge: 3 judged, G2 ('x') quarantined by its coercible rule.
KEY_STOP = {
    ("meter", "(entity)"): (5, 0, 0, 0), ("meter", "meter_id_coercible"): (0, 0, 0, 0),
    ("meter", "site_coercible"): (0, 0, 0, 0), ("meter", "site_not_null"): (0, 0, 0, 0),
    ("gauge", "(entity)"): (3, 0, 1, 0), ("gauge", "gauge_id_coercible"): (0, 0, 0, 0),
    ("gauge", "reading_coercible"): (0, 1, 0, 0),
}
# the key repeats and M4 has no site (a `fail` rule): meter's 5 rows judged, M4 failing its
# `fail` rule and diverted (decision 1162); gauge, one clean row
GAUGE_CLEAN = {
    ("gauge", "(entity)"): (1, 0, 0, 0), ("gauge", "gauge_id_coercible"): (0, 0, 0, 0),
    ("gauge", "reading_coercible"): (0, 0, 0, 0),
}
KEY_AND_FAIL_STOP = {
    ("meter", "(entity)"): (5, 0, 1, 0), ("meter", "meter_id_coercible"): (0, 0, 0, 0),
    ("meter", "site_coercible"): (0, 0, 0, 0), ("meter", "site_not_null"): (0, 1, 0, 0), **GAUGE_CLEAN,
}
# the ingestion metadata stops meter before its rows are judged: nothing of meter
INGESTION_STOP = GAUGE_CLEAN
KEY_AND_FAIL = REPEATED_KEY + [["M4", None, "M4", "L2", "2024-01-01 00:00:02"]]
# the key repeats and M5 repeats M4's source row in one load (the ingestion metadata): nothing
KEY_AND_INGESTION = REPEATED_KEY + [["M4", "d", "M4", "L2", "2024-01-01 00:00:02"],
                                    ["M5", "e", "M4", "L2", "2024-01-01 00:00:02"]]
# the key fixed: every entity recorded once, by its part
FIXED = {
    ("meter", "(entity)"): (4, 0, 0, 0), ("meter", "meter_id_coercible"): (0, 0, 0, 0),
    ("meter", "site_coercible"): (0, 0, 0, 0), ("meter", "site_not_null"): (0, 0, 0, 0),
    ("gauge", "(entity)"): (1, 0, 0, 0), ("gauge", "gauge_id_coercible"): (0, 0, 0, 0),
    ("gauge", "reading_coercible"): (0, 0, 0, 0),
}


def run(project) -> bool:
    """`sqlmesh run` of the next day's interval; True when every model and audit passed. The run's
    end is its execution time (SQLMesh's default end is the wall clock, which a day ahead would
    leave with no new interval for the models that passed before)."""
    project.clock += timedelta(days=1)
    status = project.context().run(execution_time=project.clock, end=project.clock)
    return getattr(status, "is_success", bool(status))


def rows_per_run(project, run: str) -> int:
    return int(project.query(f"select count(*) from gold.mart_data_quality where run_id = '{run}'")[0][0])


def new_run(project, seen: set) -> str:
    """The one run id the mart or the events hold that `seen` does not; added to it."""
    runs = {r for (r,) in project.query("select run_id from gold.mart_data_quality union "
                                        "select run_id from assay_meta.assay_events where run_id is not null "
                                        "and event_type <> 'RUN_ENVIRONMENT'")} - seen
    assert len(runs) == 1, runs
    seen |= runs
    return runs.pop()


def test_sqlmesh_records_the_counts_of_a_build_the_key_stops(tmp_path, engine):
    spec = write_spec(tmp_path / "spec")
    sm = engine.sqlmesh_project(tmp_path / "sqlmesh", spec, f"stopped_counts_{engine.id}")
    seen: set = set()
    try:
        sm.load_bronze([meters(), gauges(1, ("G1", "1.5"), ("G2", "x"))])
        sm.plan()
        build = new_run(sm, seen)
        assert mart(sm, build) == FIRST and rows_per_run(sm, build) == len(FIRST)

        sm.load_bronze([meters(*REPEATED_KEY, ["M4", "d", "M4", "L2", "2024-01-01 00:00:02"]),
                        gauges(2, ("G1", "1.5"), ("G2", "x"), ("G3", "2"))])
        assert not run(sm)  # meter's staged key audit stops the run
        build = new_run(sm, seen)
        assert sm.query("select check_name from assay_meta.assay_events where event_type = 'TABLE_BUILD_FAILED' "
                        f"and run_id = '{build}'") == [("KEY_UNIQUE",)]
        # meter's counts of the stopped run, as dbt records them, once each; gauge's from its part
        assert mart(sm, build) == KEY_STOP and rows_per_run(sm, build) == len(KEY_STOP)
        assert len({t for (t,) in sm.query(f"select run_started_at from gold.mart_data_quality where run_id = '{build}'")}) == 1

        for bronze, want in ((KEY_AND_FAIL, KEY_AND_FAIL_STOP), (KEY_AND_INGESTION, INGESTION_STOP)):
            sm.load_bronze([meters(*bronze), gauges(3, ("G1", "1.5"))])
            assert not run(sm)
            build = new_run(sm, seen)
            assert mart(sm, build) == want and rows_per_run(sm, build) == len(want)

        sm.load_bronze([meters(["M4", "d", "M4", "L2", "2024-01-01 00:00:02"]), gauges(4, ("G1", "1.5"))])
        assert run(sm)
        build = new_run(sm, seen)
        assert mart(sm, build) == FIXED and rows_per_run(sm, build) == len(FIXED)
        # only the builds the key and the `fail` rule stopped wrote outside the parts
        assert sm.query("select count(distinct run_id), count(*) from assay_meta.assay_stopped_counts") == [(2, 8)]

        # gauge declares no check: its own recorder records the stop, as dbt's set-back (a run
        # that recorded nothing read as all clear: an outside tester, session 44)
        sm.load_bronze([meters(["M4", "d", "M4", "L2", "2024-01-01 00:00:02"]),
                        Relation("raw_gauges", ["id", "reading", "_source_row_id", "_load_id", "_ingested_at"],
                                 [["G1", "1.5", "g1", "G5", "2024-01-01 00:00:05"], ["G1", "2.5", "g2", "G5", "2024-01-01 00:00:05"]])])
        assert not run(sm)
        build = new_run(sm, seen)
        assert sorted(sm.query(f"select table_name, event_type, check_name, why from assay_meta.assay_events "
                               f"where run_id = '{build}' and event_type <> 'RUN_ENVIRONMENT'")) == [
            ("gauge", "CHECK_FAILED", "KEY_UNIQUE", "1 violating row"), ("gauge", "TABLE_BUILD_FAILED", "KEY_UNIQUE", "not_written")]
    finally:
        sm.close()


@pytest.mark.duckdb_only("the mart's rows are the same SQL on every adapter (test_multiload, test_corpus on PostgreSQL); "
                         "which entities a stopped build records is the hook's, run on PostgreSQL by test_stopped_builds_dbt")
def test_dbt_records_the_same_counts(tmp_path, engine):
    """The expectations above are dbt's: the key sets meter back after its staged table was built
    and the run's counts are recorded; a `fail` rule beside it skips meter, whose judged rows the
    hook records (decision 1162); the ingestion metadata skips it unjudged, and nothing is."""
    from tests.integration.test_stopped_builds_dbt import invocation

    spec = write_spec(tmp_path / "spec")
    project = engine.dbt_project(tmp_path / "dbt", spec, "stopped_counts_dbt")
    project.load_bronze([meters(), gauges(1, ("G1", "1.5"), ("G2", "x"))])
    project.dbt("build", check=True)
    assert mart(project, invocation(project)) == FIRST
    project.load_bronze([meters(*REPEATED_KEY, ["M4", "d", "M4", "L2", "2024-01-01 00:00:02"]),
                         gauges(2, ("G1", "1.5"), ("G2", "x"), ("G3", "2"))])
    assert project.dbt("build").returncode != 0
    assert mart(project, invocation(project)) == KEY_STOP
    for bronze, want in ((KEY_AND_FAIL, KEY_AND_FAIL_STOP), (KEY_AND_INGESTION, INGESTION_STOP)):
        project.load_bronze([meters(*bronze), gauges(3, ("G1", "1.5"))])
        assert project.dbt("build").returncode != 0
        assert mart(project, invocation(project)) == want
