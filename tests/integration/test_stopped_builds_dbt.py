"""`assay table get` on dbt after a blocking test stopped the entity before it was written
(decision 0935).

A `fail` rule's test on `<entity>__staged` and the ingestion-metadata test on its bronze relation
run before the entity: when one fails dbt skips the entity, so its materialization never runs.
The package's on-run-end hook records the stop as SQLMesh's recorders do (decision 0932): one
CHECK_FAILED per stopping test, named by the rule (or INGESTION_METADATA), and TABLE_BUILD_FAILED
`not_written`; so `table get` says set back (not published on a first build), naming the check,
exit 2, under the run id the build's other records carry. A fixing delivery publishes again.

Real `dbt build` on DuckDB, with the SQLMesh fail-rule test's spec (tests/sqlmesh/
test_table_states_fail_rule_sqlmesh.py), so that both targets are held to the same lines. The
first test also runs on PostgreSQL 18 (the `engine` fixture): the hook's insert and commit in
the warehouse's own SQL; the hook is the same Jinja on every adapter, so the other two, which
differ from it in the stopping test only, run on DuckDB. On Spark, test_spark_stopped_builds
reads the same stops' events from the table.
"""

from __future__ import annotations

import json

import pytest

from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, write_spec
from tests.sqlmesh.test_table_states_sqlmesh import table_get
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

RULE = "site_not_null"  # the spec's fail rule, as the generator names it


def published(project) -> list[str]:
    return [r[0] for r in project.query("select meter_id from silver.meter order by meter_id")]


def invocation(project) -> str:
    """The run id of the last dbt invocation (what every node of the build records)."""
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def events(project) -> list[tuple]:
    return project.query("select event_type, run_id, table_name, check_name, why, row_count "
                         "from assay_meta.assay_events order by event_type, check_name")


def broken_metadata(*ids: str) -> Relation:
    """A delivery whose last row has no `_ingested_at`: the ingestion-metadata test fails."""
    rel = meters(*ids)
    rows = [list(r) for r in rel.rows]
    rows[-1][rel.columns.index("_ingested_at")] = None
    return Relation(rel.name, rel.columns, rows)


def test_a_fail_rule_stop_sets_the_table_back_and_a_fix_publishes(tmp_path, engine):
    spec = write_spec(tmp_path / "spec")
    project = engine.dbt_project(tmp_path / "dbt", spec, "stopped_builds")
    project.load_bronze([meters("M1", "M2", "M3")])
    project.dbt("build", check=True)
    assert table_get(project.path, spec)[:2] == (0, "meter: published")
    # a build that stopped nothing records no event
    assert not project.query("select * from assay_meta.assay_events where event_type <> 'CHECK_PASSED'")

    # a delivery whose row fails the rule: the staged model's test stops the run
    project.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",))])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    assert published(project) == ["M1", "M2", "M3"]  # the entity keeps its previous rows
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == (f"meter: set back by the latest build (run {run}): check {RULE} did not pass; "
                    "the previous version is still published"), line
    assert (got["state"], got["check"], got["why"], got["run"]) == ("set_back", RULE, "previous_version_kept", run), got
    assert [(e["event"], e["check"], e["why"]) for e in got["events"][:2]] == [
        ("TABLE_BUILD_FAILED", RULE, "not_written"),
        ("CHECK_FAILED", RULE, f"1 row failed rule {RULE} (on_fail: fail)")], got["events"]
    assert events(project) == [("CHECK_FAILED", run, "meter", RULE, f"1 row failed rule {RULE} (on_fail: fail)", 1),
                               ("TABLE_BUILD_FAILED", run, "meter", RULE, "not_written", None)]

    # a fixing delivery publishes: its check results, recorded later, end the state
    project.load_bronze([meters("M1", "M2", "M3", "M4")])
    project.dbt("build", check=True)
    assert published(project) == ["M1", "M2", "M3", "M4"]
    assert table_get(project.path, spec)[:2] == (0, "meter: published")


def test_a_fail_rule_stop_of_the_first_build_leaves_the_table_not_published(tmp_path):
    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze([meters("M1", "M2", "M3", without_site=("M2", "M3"))])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == f"meter: not published: run {run} set it back, check {RULE} did not pass", line
    assert got["events"][1]["why"] == f"2 rows failed rule {RULE} (on_fail: fail)", got["events"]


def test_an_ingestion_metadata_stop_sets_the_table_back(tmp_path):
    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    # first build: the metadata test stops it, the table is not published
    project.load_bronze([broken_metadata("M1", "M2", "M3")])
    assert project.dbt("build").returncode != 0
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == f"meter: not published: run {invocation(project)} set it back, check INGESTION_METADATA did not pass"
    assert [(e["event"], e["check"], e["why"]) for e in got["events"][:2]] == [
        ("TABLE_BUILD_FAILED", "INGESTION_METADATA", "not_written"),
        ("CHECK_FAILED", "INGESTION_METADATA", "1 violating row")], got["events"]

    project.load_bronze([meters("M1", "M2", "M3")])
    project.dbt("build", check=True)
    assert table_get(project.path, spec)[:2] == (0, "meter: published")

    # a later build stopped by the metadata test (and by the rule): set back, naming the
    # metadata test, which runs first; the rule's own test is skipped behind it
    project.load_bronze([broken_metadata("M1", "M2", "M3", "M4")])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    assert published(project) == ["M1", "M2", "M3"]
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == (f"meter: set back by the latest build (run {run}): check INGESTION_METADATA did not pass; "
                    "the previous version is still published"), line
