"""SQL check files (document 002) on an entity, run on the candidate before publishing:
`block` sets the table back, `warn` publishes, every result is recorded and shown by `assay checks`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.runtime.bronze import load_csv_dir_duckdb
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
    load_csv_dir_duckdb(project.db_path, spec / "bronze")

    proc = project.dbt("build")
    assert proc.returncode != 0
    assert "CHECK_FAILED: silver.order/no_refunds: returned 1 row" in proc.stdout
    assert "assay: check silver.order/no_huge_orders warned: 1 rows" in proc.stdout
    # a first build whose blocking check fails stays unpublished
    assert not project.query("select * from information_schema.tables where table_schema = 'silver' and table_name = 'order'")
    got = {r["check_id"]: (r["passed"], r["detail"]) for r in _results(project)}
    assert got["silver.order/no_refunds"] == (False, "returned 1 row")
    assert got["silver.order/no_huge_orders"] == (True, "returned 1 row (warned)")

    # the blocking check's condition is fixed in the data: the table is published
    orders = spec / "bronze" / "raw_orders.csv"
    orders.write_text(orders.read_text().replace('"O-1","c1","2026-01-04T10:00:00Z","refunded"', '"O-1","c1","2026-01-04T10:00:00Z","paid"'))
    load_csv_dir_duckdb(project.db_path, spec / "bronze")
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert project.query('select count(*) from silver."order"') == [(5,)]
    got = {r["check_id"]: (r["passed"], r["detail"]) for r in _results(project)}
    assert got["silver.order/no_refunds"] == (True, "returned no rows, as expected")

    # `assay check list`: every result of both runs, newest first
    res = CliRunner().invoke(cli, ["check", "list", "--project", str(project.path), "--output", "json"])
    assert res.exit_code == 0, res.output
    listed = [(i["check"], i["outcome"], i["rows"], i["on_failure"]) for i in json.loads(res.output)]
    assert listed[:3] == [
        ("silver.order/no_refunds", "passed", "0", "block"),
        ("silver.order/no_huge_orders", "warned", "1", "warn"),
        ("ENOUGH_ORDERS", "passed", "", "advisory"),
    ]
    assert ("silver.order/no_refunds", "FAILED", "1", "block") in listed[3:]
    text = CliRunner().invoke(cli, ["check", "list", "--project", str(project.path)]).output
    assert text.splitlines()[0].split() == ["run", "table", "check", "outcome", "rows", "on_failure", "finished_at"]
