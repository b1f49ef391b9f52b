"""The package's on-run-end hook on Apache Spark (local mode, parquet; decision 0935): a build that
a `fail` rule's test or the ingestion-metadata test stopped before the entity was written records
CHECK_FAILED and TABLE_BUILD_FAILED `not_written` in assay_meta.assay_events, under the build's
invocation id, as tests/integration/test_stopped_builds_dbt.py proves on DuckDB and PostgreSQL
18 (same spec, same deliveries, same rows).

The events are read from the table, not through `assay table get`: the warehouse's in-memory
catalog is this process's own Spark's, which the CLI's child Spark could not see (as in
test_spark_checks); DuckDB and PostgreSQL judge the state `table get` derives from these rows.
Three builds in the test process's shared Spark process (tests/support/spark.py); two more for an
entity dbt skipped because the entity it reads was set back (decision 0940).
"""

from __future__ import annotations

import json

import pytest

from tests.integration.test_stopped_builds_dbt import (RULE, SHOP_CHECK, UPSTREAM, broken_metadata, shops_and_items,
                                                       upstream_events, write_upstream_spec)
from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, write_spec
from tests.support import spark
from tests.support.engines import SPARK, Engine

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def invocation(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def stops(project, run: str) -> list[tuple]:
    return project.query("select event_type, table_name, check_name, why, row_count from assay_meta.assay_events "
                         f"where run_id = '{run}' and event_type <> 'CHECK_PASSED' order by event_type, check_name")


def test_a_stopped_build_is_recorded_by_the_hook(tmp_path):
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    try:
        spec = write_spec(tmp_path / "spec")
        project = Engine(SPARK).dbt_project(tmp_path / "dbt", spec, "stopped_builds")
        project.load_bronze([meters("M1", "M2", "M3")])
        project.dbt("build", check=True)
        assert stops(project, invocation(project)) == []  # a build that stopped nothing records no event

        # a row fails the rule: the staged model's test stops the run, the entity keeps its rows
        project.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",))])
        assert project.dbt("build").returncode != 0
        assert [r[0] for r in project.query("select meter_id from silver.meter order by meter_id")] == ["M1", "M2", "M3"]
        stopped = invocation(project)
        assert stops(project, stopped) == [
            ("CHECK_FAILED", "meter", RULE, f"1 row failed rule {RULE} (on_fail: fail)", 1),
            ("TABLE_BUILD_FAILED", "meter", RULE, "not_written", None)]
        # its judged rows are in the quality history, appended by the hook to the parquet mart (decision 1162)
        assert project.query("select rows_evaluated, rows_quarantined from gold.mart_data_quality "
                             f"where run_id = '{stopped}' and rule = '(entity)'") == [(4, 1)]

        # a delivery without an `_ingested_at`: the ingestion-metadata test stops the run
        project.load_bronze([broken_metadata("M1", "M2", "M3", "M4")])
        assert project.dbt("build").returncode != 0
        assert stops(project, invocation(project)) == [
            ("CHECK_FAILED", "meter", "INGESTION_METADATA", "1 violating row", 1),
            ("TABLE_BUILD_FAILED", "meter", "INGESTION_METADATA", "not_written", None)]
        # its rows were not judged: nothing of the run in the quality history
        assert project.query(f"select count(*) from gold.mart_data_quality where run_id = '{invocation(project)}'") == [(0,)]
    finally:
        spark.close_all()


def test_an_entity_skipped_for_its_upstream_is_recorded_by_the_hook(tmp_path):
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    try:
        spec = write_upstream_spec(tmp_path / "spec")
        project = Engine(SPARK).dbt_project(tmp_path / "dbt", spec, "upstream_set_back")
        project.load_bronze(shops_and_items("S1", "S2"))
        project.dbt("build", check=True)
        assert upstream_events(project, invocation(project)) == []  # a build that skipped nothing records no event

        # one shop only: `shop` is set back, dbt skips `item`, which records that it was not written
        project.load_bronze(shops_and_items("S1"))
        assert project.dbt("build").returncode != 0
        assert [e[:4] for e in upstream_events(project, invocation(project))] == [
            ("TABLE_BUILD_FAILED", "item", None, UPSTREAM),
            ("CHECK_FAILED", "shop", SHOP_CHECK, "row count 1 is below the declared minimum of 2"),
            ("TABLE_ROLLED_BACK", "shop", SHOP_CHECK, "previous_version_kept")]
        # dbt skipped the mart (item__staged was skipped): the hook records shop's row of the run,
        # judged before it was set back, and none of item's (decision 0942)
        run = invocation(project)
        rows = project.query("select entity, rows_evaluated from gold.mart_data_quality "
                             f"where run_id = '{run}' and rule = '(entity)'")
        assert [(e, int(n)) for e, n in rows] == [("shop", 1)], rows
    finally:
        spark.close_all()
