"""A SQLMesh model whose SQL errors is recorded as dbt records it (decision 1164).

Bronze loses a column the mapping reads, so the entity's staged model fails in the engine (no
audit: SQLMesh rolls the model back and runs nothing after it). The config's `after_all`
statement records `TABLE_BUILD_FAILED` `node_errored: <model>`, and `assay table get` says what
it says of dbt's same failure (tests/integration/test_stopped_builds_dbt.py): set back, naming the
model, exit 2; the entity that reads it was skipped and says so; a fixing run publishes both.
Real plans and runs on DuckDB and PostgreSQL 18 (whose models run in transactions, which the
failing model's rolls back: what began is counted in the process, not in the warehouse). A failed plan runs no
`after_all` statement: its model error is recorded when the SQLMesh process exits (`sqlmesh plan` on the
command line), or by the next plan of the same process (decision 1166).
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

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


def load_bronze_apart(sm, relations) -> None:
    """Load bronze without holding the warehouse: a DuckDB file admits one process, and the plan
    below is another one."""
    if sm.engine == "postgres":
        sm.load_bronze(relations)
        return
    import duckdb

    con = duckdb.connect(str(sm.path / "warehouse.duckdb"))
    try:
        con.execute("create schema if not exists bronze")
        for rel in relations:
            con.execute(f'create or replace table bronze."{rel.name}" (' + ", ".join(f'"{c}" text' for c in rel.columns) + ")")
            con.executemany(f'insert into bronze."{rel.name}" values (' + ", ".join("?" for _ in rel.columns) + ")",
                            rel.rows)
    finally:
        con.close()


def query_apart(sm, sql: str) -> list[tuple]:
    """`sql`'s rows, read without a SQLMesh context of this process (see load_bronze_apart)."""
    if sm.engine == "postgres":
        return sm.query(sql)
    import duckdb

    con = duckdb.connect(str(sm.path / "warehouse.duckdb"))
    try:
        return [tuple(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


def test_a_failed_plan_on_the_command_line_records_its_errored_model(tmp_path, engine):
    """`sqlmesh plan` runs no after_all statement once a model failed; the process's exit records it."""
    spec = write_upstream_spec(tmp_path / "spec")
    sm = engine.sqlmesh_project(tmp_path / "sqlmesh", spec, "plan_errors")
    shops, items = shops_and_items("S1", "S2")
    load_bronze_apart(sm, [without(shops, "city"), items])
    plan = subprocess.run([sys.executable, "-c", "from sqlmesh.cli.main import cli; cli()", "plan", "--auto-apply",
                           "--no-prompts"], cwd=sm.path, capture_output=True, text=True, timeout=600)
    assert plan.returncode == 1 and "Plan application failed" in plan.stdout + plan.stderr, plan.stdout + plan.stderr
    assert "city" in plan.stdout + plan.stderr  # the engine's own error, in SQLMesh's output
    assert "could not record" not in plan.stderr, plan.stderr
    events = query_apart(sm, "select event_type, run_id, table_name, why from assay_meta.assay_events order by occurred_at")
    run = events[0][1]
    assert run.startswith("SQLMESH_PLAN: ") and events == [
        ("RUN_ENVIRONMENT", run, None, "prod"), ("TABLE_BUILD_FAILED", run, "shop", "node_errored: shop__staged")], events
    code, line, got = table_get_of(sm, spec, "shop")
    assert code == 2 and line == (f"shop: not published: run {run} did not write it: its model shop__staged errored "
                                  "(SQLMesh's output says why)"), line
    checks = CliRunner().invoke(cli, ["checks", "--project", str(sm.path), "--spec", str(spec)])
    assert checks.exit_code == 2, checks.output
    assert "shop: MODEL_ERRORED: ERRORED: its model shop__staged errored (SQLMesh's output says why)" in checks.stdout


@pytest.mark.duckdb_only("the recording is the after_all's, whose engine side the run test covers on PostgreSQL 18")
def test_a_failed_plan_of_a_python_runner_is_recorded_by_its_next_plan(tmp_path, engine):
    """In one process (a Python runner, an orchestrator), the next plan's before_all records what the
    failed one left, under the failed plan's run id and before anything of its own."""
    from sqlmesh.utils.errors import PlanError

    spec = write_upstream_spec(tmp_path / "spec")
    sm = engine.sqlmesh_project(tmp_path / "sqlmesh", spec, "plan_errors_runner")
    OPEN[sm.path] = sm
    try:
        sm.load_bronze(shops_and_items("S1", "S2"))
        sm.plan()
        shops, items = shops_and_items("S1", "S2", "S3")
        sm.load_bronze([without(shops, "city"), items])
        with pytest.raises(PlanError), collect():
            sm.plan(restate_models=["silver.shop__staged"])
        failed = [r for r, in sm.query("select run_id from assay_meta.assay_events where event_type = 'RUN_ENVIRONMENT' "
                                        "order by occurred_at")][-1]
        assert failed_builds(sm) == []  # not yet: the plan's process goes on
        sm.load_bronze(shops_and_items("S1", "S2", "S3"))
        sm.plan(restate_models=["silver.shop__staged"])
        assert failed_builds(sm) == [(failed, "shop", None, "node_errored: shop__staged")]
        assert get_published(sm, spec, "shop")
    finally:
        sm.close()


def get_published(sm, spec, table: str) -> bool:
    sm.close()
    code, line, _ = table_get_of(sm, spec, table)
    assert (code, line) == (0, f"{table}: published"), line
    return True
