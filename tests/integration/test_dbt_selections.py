"""The dbt commands and selections teams use do not publish an unaudited entity, and the mart does
not record a run of an entity the invocation did not build (decision 0987). Real dbt on DuckDB.

- `dbt run --select mart_data_quality` judges nothing: it records no row (it recorded every
  entity's counts from the staged tables an earlier build left, under its own run id).
- `dbt build --exclude gauge` rebuilds `gauge__staged` but not `gauge`: no `gauge` row for the run
  (the mart said the run judged the new bronze while the published table was the old one), also
  when another entity's stop makes dbt skip the mart and the on-run-end hook records the run.
- `dbt build --select gauge` after a load is set back by the conservation audit (its staged table
  is the first build's); the error now names the model to select (decision 0988).
- `dbt run` runs no test, so the ingestion-metadata test never stopped it: an entity whose bronze
  repeats a `_source_row_id` within one load was published. The entity's own audits now run the
  metadata audit when the invocation did not select the test.

The SQL is the same on every adapter (a WHERE clause of `1 = 1` / `1 = 0`, the package test's query),
so DuckDB only; the ingestion test itself runs on PostgreSQL 18 in every dbt story there.
"""

from __future__ import annotations

import pytest

from tests.integration.test_mart_of_stopped_runs_dbt import accounting, gauges, mart, write_spec
from tests.integration.test_stopped_builds_dbt import invocation
from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow


def test_selections_record_and_publish_only_what_they_built_and_audited(tmp_path):
    from tests.support.dbtproject import make_project

    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze([meters("M1", "M2"), gauges(1, ("G1", "1.5"), ("G2", "x"))])
    project.dbt("build", check=True)
    first = invocation(project)
    assert accounting(mart(project, first), "gauge") == (2, 0, 1, 0)

    # the mart alone: nothing was judged, so nothing is recorded
    project.dbt("run", "--select", "mart_data_quality", check=True)
    assert mart(project, invocation(project)) == {}

    # gauge alone after a load: built from the staged table of the first build, which the
    # conservation audit finds older than bronze; the error says which model to select (0988)
    project.load_bronze([meters("M1", "M2", "M3"), gauges(2, ("G1", "1.5"), ("G2", "x"), ("G3", "2"))])
    proc = project.dbt("build", "--select", "gauge")
    assert proc.returncode != 0
    assert ("CHECK_FAILED: CONSERVATION: 1 violating row." in proc.stdout
            and "gauge__staged was not built by this invocation, so it may be older than bronze: "
                "build gauge__staged+ (dbt build --select gauge__staged+)" in " ".join(proc.stdout.split())), proc.stdout
    assert project.query("select gauge_id from silver.gauge") == [("G1",)]

    # gauge excluded: its staged model is rebuilt from the new bronze, the entity is not
    project.dbt("build", "--exclude", "gauge", check=True)
    rows = mart(project, invocation(project))
    assert accounting(rows, "meter") == (3, 0, 0, 0) and not [k for k in rows if k[0] == "gauge"], rows
    assert project.query("select gauge_id from silver.gauge") == [("G1",)]

    # the same when meter's `fail` rule makes dbt skip the mart and the on-run-end hook records it
    project.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",)),
                         gauges(2, ("G1", "1.5"), ("G2", "x"), ("G3", "2"))])
    assert project.dbt("build", "--exclude", "gauge").returncode != 0
    # meter stopped, its judged rows recorded (decision 1162); gauge not built
    rows = mart(project, invocation(project))
    assert accounting(rows, "meter") == (4, 0, 1, 0) and not [k for k in rows if k[0] == "gauge"], rows

    # `dbt run` with a source row delivered twice in one load: gauge is not published
    twice = Relation("raw_gauges", ["id", "reading", "_source_row_id", "_load_id", "_ingested_at"],
                     [["G1", "1.5", "G1", "G3", "2024-01-01 00:00:03"], ["G4", "4", "G4", "G3", "2024-01-01 00:00:03"],
                      ["G5", "5", "G4", "G3", "2024-01-01 00:00:03"]])
    project.load_bronze([meters("M1", "M2", "M3"), twice])
    proc = project.dbt("run")
    assert proc.returncode != 0, proc.stdout
    assert "CHECK_FAILED: INGESTION_METADATA: 2 violating rows" in proc.stdout  # both deliveries of G4, proc.stdout
    assert project.query("select gauge_id from silver.gauge") == [("G1",)]
    run = invocation(project)
    assert project.query("select event_type, check_name from assay_meta.assay_events "
                         f"where run_id = '{run}' and table_name = 'gauge' order by 1") == [
        ("CHECK_FAILED", "INGESTION_METADATA"), ("TABLE_ROLLED_BACK", "INGESTION_METADATA")]
    assert project.query("select count(*) from silver.meter")[0][0] == 3  # the other entity published
