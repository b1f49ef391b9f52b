"""A SQLMesh model whose SQL errors is recorded as dbt records it (decision 1164).

Bronze loses a column the mapping reads, so the entity's staged model fails in the engine (no
audit: SQLMesh rolls the model back and runs nothing after it). The config's `after_all`
statement records `TABLE_BUILD_FAILED` `node_errored: <model>`, and `assay table get` says what
it says of dbt's same failure (tests/integration/test_stopped_builds_dbt.py): set back, naming the
model, exit 2; the entity that reads it was skipped and says so; a fixing run publishes both.
Real plans and runs on DuckDB and PostgreSQL 18 (whose models run in transactions, which the
failing model's rolls back: what began is counted in the process, not in the warehouse). A failed plan runs no
`after_all` statement, so only `sqlmesh run` is recorded (docs/sqlmesh.md).
"""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner

from assay.cli.main import cli

from tests.integration.test_stopped_builds_dbt import report, shops_and_items, table_get_of, write_upstream_spec
from tests.sqlmesh.test_table_states_sqlmesh import OPEN
from tests.support.corpus import Relation
from tests.support.sqlmeshfailures import collect

pytestmark = pytest.mark.slow


def without(rel: Relation, column: str) -> Relation:
    """The relation without one of its columns: a bronze that lost a column the mapping reads."""
    i = rel.columns.index(column)
    return Relation(rel.name, rel.columns[:i] + rel.columns[i + 1:], [r[:i] + r[i + 1:] for r in rel.rows])


def failed_builds(sm) -> list[tuple]:
    return sm.query("select run_id, table_name, check_name, why from assay_meta.assay_events "
                    "where event_type = 'TABLE_BUILD_FAILED' order by occurred_at, table_name")


def engine_errors(found: list) -> list[str]:
    """The node errors SQLMesh logged that are no audit's (tests.support.sqlmeshfailures)."""
    from tests.support.sqlmeshfailures import AuditFailure

    return [str(e) for e in found if not isinstance(e, AuditFailure)]


def test_a_staged_model_that_errors_sets_the_entity_back_and_skips_its_reader(tmp_path, engine):
    spec = write_upstream_spec(tmp_path / "spec")
    sm = engine.sqlmesh_project(tmp_path / "sqlmesh", spec, "model_errors")
    OPEN[sm.path] = sm

    def get(table: str):
        sm.close()  # assay opens the DuckDB file itself
        return table_get_of(sm, spec, table)

    try:
        sm.load_bronze(shops_and_items("S1", "S2"))
        sm.plan()
        assert failed_builds(sm) == []  # a build whose models all ran records nothing
        assert get("shop")[:2] == (0, "shop: published") and get("item")[:2] == (0, "item: published")

        shops, items = shops_and_items("S1", "S2", "S3")
        sm.load_bronze([without(shops, "city"), items])
        with collect() as found:
            assert not sm.run()
        assert any("city" in e for e in engine_errors(found)), found  # the engine's error, no audit's
        run = sm.query("select run_id from assay_meta.assay_events where event_type = 'TABLE_BUILD_FAILED'")[0][0]
        assert run.startswith("SQLMESH_RUN: "), run
        assert failed_builds(sm) == [(run, "shop", None, "node_errored: shop__staged")]  # once, names only
        assert sm.query("select count(*) from silver.shop")[0][0] == 2  # the previous version
        code, line, got = get("shop")
        assert code == 2, line
        assert line == (f"shop: set back by the latest build (run {run}): it was not written: its model shop__staged "
                        "errored (SQLMesh's output says why); the previous version is still published"), line
        assert {k: got[k] for k in ("state", "run", "why", "node")} == {
            "state": "set_back", "run": run, "why": "node_errored", "node": "shop__staged"}, got
        code, line, got = get("item")
        assert code == 2, line
        assert line == (f"item: set back by the latest build (run {run}): it was not written because its upstream "
                        "entity shop failed in that run (SQLMesh's output says why); the previous version is still "
                        "published"), line
        assert (got["state"], got["why"], got["upstream"]) == ("set_back", "upstream_failed", "shop"), got
        # `assay checks RUN` does not pass the run: the errored model is one of its results
        checks = CliRunner().invoke(cli, ["checks", run, "--project", str(sm.path), "--spec", str(spec)])
        assert checks.exit_code == 2, checks.output
        assert ("shop: MODEL_ERRORED: ERRORED: its model shop__staged errored (SQLMesh's output says why)"
                in checks.stdout.splitlines()), checks.stdout
        # the report reads the same states: not healthy (an outside tester read "healthy" before)
        sm.close()
        page = report(sm, spec)
        health = {x["entity"]: x for x in page["health"]["lines"] if x.get("entity")}
        assert health["shop"]["headline"].startswith(f"shop: set back by the latest build (run {run})"), health["shop"]
        assert health["shop"]["level"] == "fail" and "healthy" not in page["health"]["sentence"], page["health"]

        # the column is back: a run publishes both (`end` too, or it only retries the failed interval)
        sm.load_bronze(shops_and_items("S1", "S2", "S3"))
        sm.clock += dt.timedelta(days=1)
        from sqlmesh.utils import CompletionStatus

        assert sm.context().run(execution_time=sm.clock, end=sm.clock) == CompletionStatus.SUCCESS
        assert len(failed_builds(sm)) == 1
        assert get("shop")[:2] == (0, "shop: published") and get("item")[:2] == (0, "item: published")
    finally:
        sm.close()
