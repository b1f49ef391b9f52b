"""SQL check files (document 002) on an entity, run on the candidate before publishing:
`block` sets the table back, `warn` publishes, every result is recorded and shown by `assay checks`."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.runtime.bronze import load_csv_dir_duckdb
from tests.support import dbtresults
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
BLOCK = """/* assay
on_failure: block
description: A refunded order waits for finance.
*/
select o.order_id from silver."order" as o where o.status = 'refunded'
"""
WARN = """/* assay
on_failure: warn
*/
select * from silver.order where amount > 10000
"""


def _results(project) -> list[dict]:
    run_id = json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
    res = CliRunner().invoke(cli, ["checks", run_id, "--project", str(project.path), "--json"])
    results = json.loads(res.stdout)
    # exit 2 when any check of the run did not pass (README, "Exit codes")
    assert res.exit_code == (0 if all(r["passed"] for r in results) else 2), res.output
    return results


def test_block_sets_back_warn_publishes_and_both_are_recorded(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    checks = spec / "checks" / "silver" / "order"
    checks.mkdir(parents=True)
    (checks / "no_refunds.sql").write_text(BLOCK)
    (checks / "no_huge_orders.sql").write_text(WARN)
    project = make_project(tmp_path / "proj", spec)
    # a session zone that is not UTC, as a profile may set it (and DuckDB's default is the machine's)
    profiles = project.path / "profiles.yml"
    profiles.write_text(profiles.read_text() + "      settings:\n        TimeZone: America/Los_Angeles\n")
    load_csv_dir_duckdb(project.db_path, spec / "bronze")

    before = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    proc = project.dbt("build")
    after = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert proc.returncode != 0
    # what the build recorded is dated in UTC, not in the session's zone (decision 0992), and so
    # are the versions of the type-2 customer (dbt's snapshot clock, decision 0992)
    for table, column in (("assay_meta.assay_check_results", "recorded_at"), ("assay_meta.assay_events", "occurred_at"),
                          ("silver.customer", "dbt_valid_from"), ("silver.customer", "dbt_updated_at")):
        times = project.query(f"select {column} from {table}")
        assert times and all(before - dt.timedelta(seconds=1) <= t <= after for (t,) in times), (table, times, before, after)
    # only the order entity failed, and only because of the blocking SQL check
    assert dbtresults.not_ok(project) == {"model.assay_it.order": "error",
                                          "test.assay_it.assay_coverage__every_customer_ordered": "skipped"}, dbtresults.not_ok(project)
    detail, candidate = dbtresults.check_failed(project, "model.assay_it.order")
    assert detail == "silver.order/no_refunds: returned 1 row"
    # the candidate holds the refunded order the check returned
    assert project.query(f"select order_id, status from {candidate} where status = 'refunded'") == [("O-1", "refunded")]
    assert "assay: check silver.order/no_huge_orders warned: 1 row" in proc.stdout
    first_run = json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
    # a first build whose blocking check fails stays unpublished
    assert not project.query("select * from information_schema.tables where table_schema = 'silver' and table_name = 'order'")
    got = {r["check_id"]: (r["passed"], r["detail"]) for r in _results(project)}
    assert got["NO_REFUNDS"] == (False, "returned 1 row")
    assert got["NO_HUGE_ORDERS"] == (True, "returned 1 row (warned)")

    # the blocking check's condition is fixed in the data: the table is published
    orders = spec / "bronze" / "raw_orders.csv"
    orders.write_text(orders.read_text().replace('"O-1","c1","2026-01-04T10:00:00Z","refunded"', '"O-1","c1","2026-01-04T10:00:00Z","paid"'))
    load_csv_dir_duckdb(project.db_path, spec / "bronze")
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert project.query('select count(*) from silver."order"') == [(5,)]
    got = {r["check_id"]: (r["passed"], r["detail"]) for r in _results(project)}
    assert got["NO_REFUNDS"] == (True, "returned no rows, as expected")

    # `assay check list`: every result of both runs, newest first. The clock is injected: the
    # first run's results are dated a day back, so the order never relies on time passing
    # between the two builds.
    conn = project.connect()
    try:
        conn.execute("update assay_meta.assay_check_results set recorded_at = recorded_at - interval 1 day "
                     f"where run_id = '{first_run}'")
    finally:
        conn.close()
    res = CliRunner().invoke(cli, ["check", "list", "--project", str(project.path), "--output", "json"])
    assert res.exit_code == 0, res.output
    second_run = json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
    listed = [(i["run"], i["check"], i["outcome"], i["rows"], i["on_failure"]) for i in json.loads(res.output)]
    assert listed == [
        (second_run, "silver.order/no_refunds", "passed", 0, "block"),
        (second_run, "silver.order/no_huge_orders", "warned", 1, "warn"),
        (second_run, "ENOUGH_ORDERS", "passed", None, "advisory"),
        (first_run, "silver.order/no_refunds", "FAILED", 1, "block"),
        (first_run, "silver.order/no_huge_orders", "warned", 1, "warn"),
        (first_run, "ENOUGH_ORDERS", "passed", None, "advisory"),
    ]
    text = CliRunner().invoke(cli, ["check", "list", "--project", str(project.path)]).output
    assert text.splitlines()[0].split() == ["run", "table", "check", "outcome", "rows", "kept", "on_failure", "finished_at"]


# DuckDB's own syntax in check files (an outside tester, session 37): each was written back in
# PostgreSQL's spelling, which DuckDB refuses (`* EXCEPT`, `JSON_OBJECT('k': x)`), and recorded
# errored. Each returns the one refunded order, so each must read `returned 1 row (warned)`.
DUCKDB_SYNTAX = {
    "star_exclude": "select * exclude (amount) from silver.order where status = 'refunded'",
    "struct_literal": "select {'id': order_id, 'st': status} as s from silver.order where status = 'refunded'",
    "json_object": "select json_object('id', order_id) as j from silver.order where status = 'refunded'",
}


def test_duckdb_syntax_in_a_check_runs_as_written_on_duckdb(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    checks = spec / "checks" / "silver" / "order"
    checks.mkdir(parents=True)
    for name, sql in DUCKDB_SYNTAX.items():
        (checks / f"{name}.sql").write_text("/* assay\non_failure: warn\n*/\n" + sql + "\n")
    project = make_project(tmp_path / "proj", spec)
    load_csv_dir_duckdb(project.db_path, spec / "bronze")
    project.dbt("build")
    got = {r["check_id"]: (r["passed"], r["detail"]) for r in _results(project)}
    assert {k: got[k.upper()] for k in DUCKDB_SYNTAX} == {k: (True, "returned 1 row (warned)") for k in DUCKDB_SYNTAX}, got
