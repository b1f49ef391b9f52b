"""`assay checks` without a run id names this project's latest build (an outside tester, session 45).

Two projects that share one warehouse's meta schema (assay's schema macro in both), and a DuckDB
path relative to the dbt project that dbt, run from another folder, resolved elsewhere: `assay
checks` named the other project's newer run as the latest, and said of its own last build, which
had recorded results, that it "built no table that records checks". The warehouse here holds the
results tables as the dbt package writes them (no dbt run); run_results.json is dbt's last build.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.test_check_rows_cmd import invoke, results_warehouse

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
SPEC = json.dumps({"columns": [], "types": [], "bounds": {"min_rows": 1}})


def _project(tmp_path: Path):
    project, con = results_warehouse(tmp_path)
    shutil.copytree(EXAMPLE / "spec", project / "spec")
    shutil.copy(EXAMPLE / "assay.yml", project / "assay.yml")
    return project, con


def _result(con, run: str, table: str, check: str, at: str) -> None:
    con.execute("insert into assay_meta.assay_check_results values (?, ?, ?, 1, 'row_expectation', 'advisory', true, 2, ?, ?, ?)",
                [run, table, check, SPEC, json.dumps({"rows": 2}), at])


def _last_build(project: Path, invocation: str) -> None:
    (project / "target" / "run_results.json").write_text(json.dumps({
        "metadata": {"invocation_id": invocation}, "args": {"which": "build"},
        "results": [{"unique_id": "model.shop.order__staged", "status": "success"},
                    {"unique_id": "model.shop.order", "status": "success"}]}))


def _checks(project: Path, *args: str):
    return invoke("checks", *args, "--project", str(project), "--spec", str(project))


def test_a_newer_run_of_another_project_in_the_same_results_is_not_this_ones_latest(tmp_path):
    project, con = _project(tmp_path)
    _result(con, "ours-1111", "order", "ENOUGH_ORDERS", "2026-12-01 10:00:00")
    _result(con, "theirs-2222", "book", "ENOUGH_BOOKS", "2026-12-01 11:00:00")  # the other project, later
    con.close()
    _last_build(project, "ours-1111")
    res = _checks(project)
    assert res.exit_code == 0, res.output
    assert res.stdout == "order: ENOUGH_ORDERS: passed: row count 2 satisfies the declared minimum of 1\n", res.stdout
    assert res.stderr.splitlines()[0] == "run ours-1111 (the latest)", res.stderr


def test_a_build_whose_results_the_warehouse_read_lacks_is_not_said_to_build_no_checked_table(tmp_path):
    project, con = _project(tmp_path)
    _result(con, "older-1111", "order", "ENOUGH_ORDERS", "2026-12-01 10:00:00")
    con.close()
    _last_build(project, "elsewhere-3333")  # built `order`, whose checks record on every build
    res = _checks(project)
    assert res.exit_code == 1, res.output
    assert "run elsewhere-3333 (dbt's last build, the latest) passed and recorded no check results: the warehouse " \
           "read here (" in res.stderr, res.stderr
    assert "although it built order, whose checks record a result on every build, so the build wrote another " \
           "warehouse" in res.stderr, res.stderr
    assert "built no table that records checks" not in res.stderr, res.stderr


def test_check_list_shows_this_projects_tables_and_says_it_left_the_others_out(tmp_path):
    project, con = _project(tmp_path)
    _result(con, "ours-1111", "order", "ENOUGH_ORDERS", "2026-12-01 10:00:00")
    _result(con, "theirs-2222", "book", "ENOUGH_BOOKS", "2026-12-01 11:00:00")  # the other project's
    con.close()
    res = invoke("check", "list", "--project", str(project), "--spec", str(project))
    assert res.exit_code == 0, res.output
    assert [line.split()[:3] for line in res.stdout.splitlines()[1:]] == [["ours-111", "order", "ENOUGH_ORDERS"]], res.stdout
    assert res.stderr == ("note: 1 result of tables this spec does not name left out (another project records into "
                          "the same meta schema)\n"), res.stderr
    got = invoke("check", "list", "--json", "--project", str(project), "--spec", str(project))
    assert [(i["run"], i["table"]) for i in json.loads(got.stdout)] == [("ours-1111", "order")], got.stdout


def test_check_list_json_has_the_error_and_the_rollback_outcome(tmp_path):
    """002: `check list`'s JSON has every field, the error and the rollback outcome among them (an
    outside tester, session 48)."""
    project, con = _project(tmp_path)
    _result(con, "ours-1111", "order", "ENOUGH_ORDERS", "2026-12-01 10:00:00")  # passed: neither
    con.execute("insert into assay_meta.assay_check_results values ('ours-2222', 'order', 'ENOUGH_ORDERS', 1, "
                "'row_expectation', 'required', false, 0, ?, ?, '2026-12-02 10:00:00')",
                [SPEC, json.dumps({"rows": 0})])
    con.execute("insert into assay_meta.assay_check_results values ('ours-2222', 'order', 'silver.order/odd', 2, "
                "'sql', 'warn', false, null, '{}', ?, '2026-12-02 10:00:01')",
                [json.dumps({"error": "Binder Error: column x not found"})])
    con.execute("create table assay_meta.assay_events (event_id varchar, event_type varchar, run_id varchar, "
                "table_name varchar, check_name varchar, why varchar, row_count bigint, cutoff timestamp, "
                "occurred_at timestamp)")
    con.execute("insert into assay_meta.assay_events values ('e1', 'TABLE_ROLLED_BACK', 'ours-2222', 'order', "
                "'ENOUGH_ORDERS', 'previous_version_kept', null, null, '2026-12-02 10:00:02')")
    con.close()
    got = {(i["run"], i["check"]): i for i in json.loads(
        invoke("check", "list", "--json", "--project", str(project), "--spec", str(project)).stdout)}
    assert {k: (v["outcome"], v["error"], v["rollback"]) for k, v in got.items()} == {
        ("ours-1111", "ENOUGH_ORDERS"): ("passed", None, None),
        ("ours-2222", "ENOUGH_ORDERS"): ("FAILED", None, "previous_version_kept"),
        # a warn file that errored blocked nothing: its error, no rollback
        ("ours-2222", "silver.order/odd"): ("errored", "Binder Error: column x not found", None)}, got
