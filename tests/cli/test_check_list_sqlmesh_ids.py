"""SQLMesh's run ids (`SQLMESH_PLAN: <hex>`, `SQLMESH_RUN: <hex>`) in `assay check list` and
`assay checks` (issue 19 item 4): the short id shown is the start of the part that differs between
runs, and `assay checks` takes it. The results table is written by hand; the SQLMesh build that
records it is run by tests/cli/test_quickstart_sqlmesh.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_check_rows_cmd import invoke, results_warehouse

PLAN = "SQLMESH_PLAN: 455922eb5042489daa098fd0015fc896"
RUN = "SQLMESH_RUN: e7ee787ee0774402aa72650c94f79f41"


@pytest.fixture
def recorded(tmp_path) -> Path:
    """Two SQLMesh evaluations recorded ENOUGH_ORDERS: the plan (5 rows), then a run (6 rows)."""
    project, con = results_warehouse(tmp_path)
    spec = json.dumps({"columns": [], "types": [], "bounds": {"min_rows": 1}})
    for run_id, rows, at in ((PLAN, 5, "2026-12-02 09:51:35"), (RUN, 6, "2026-12-03 00:00:10")):
        con.execute("insert into assay_meta.assay_check_results values "
                    "(?, 'order', 'ENOUGH_ORDERS', 1, 'row_expectation', 'advisory', true, ?, ?, ?, ?)",
                    [run_id, rows, spec, json.dumps({"rows": rows}), at])
    con.close()
    return project


def test_check_list_shows_the_part_of_the_run_id_that_differs(recorded):
    result = invoke("check", "list", "--project", str(recorded))
    assert result.exit_code == 0, result.output
    runs = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert runs == ["e7ee787e", "455922eb"]
    as_json = json.loads(invoke("check", "list", "--json", "--project", str(recorded)).stdout)
    assert [i["run"] for i in as_json] == [RUN, PLAN]  # JSON keeps the full ids


@pytest.mark.parametrize("given, rows", [("e7ee787e", 6), ("455922eb", 5), (PLAN, 5), ("SQLMESH_RUN", 6)])
def test_checks_takes_the_short_id_check_list_shows(recorded, given, rows):
    result = invoke("checks", given, "--project", str(recorded))
    assert result.exit_code == 0, result.output
    assert f"order: ENOUGH_ORDERS: passed: row count {rows} satisfies the declared minimum of 1" in result.stdout


def test_the_shared_prefix_alone_is_still_ambiguous(recorded):
    result = invoke("checks", "SQLMESH_", "--project", str(recorded))
    assert result.exit_code == 3
    assert "'SQLMESH_' is the start of 2 recorded runs" in result.output


def test_check_rows_points_at_the_short_id(recorded):
    result = invoke("check", "rows", "e7ee787e", "NOPE", "--project", str(recorded))
    assert result.exit_code == 1
    assert f"run {RUN} recorded no check NOPE; its checks are ENOUGH_ORDERS. Run `assay checks e7ee787e` to see them." in result.stderr


def test_an_errored_result_says_errored_once(tmp_path):
    project, con = results_warehouse(tmp_path)
    spec = json.dumps({"columns": [], "types": [], "bounds": {"on_failure": "warn"}})
    con.execute("insert into assay_meta.assay_check_results values "
                "(?, 'order', 'silver.order/bad_cast', 1001, 'sql', 'warn', false, 0, ?, ?, '2026-12-01 10:00:00')",
                [RUN, spec, json.dumps({"rows": 0, "failing_rows": None, "error": "Conversion Error: no"})])
    con.close()
    result = invoke("checks", RUN, "--project", str(project))
    [line] = [ln for ln in result.stdout.splitlines() if "bad_cast" in ln]
    # a `warn` check that errored reads `errored` (002: "ERRORED (errored for a warning check)")
    assert line == "order: silver.order/bad_cast: errored: Conversion Error: no", line


def test_an_unknown_run_is_explained_in_the_projects_own_terms(tmp_path):
    from assay.cli.common import run_id_hint

    (tmp_path / "sqlmesh").mkdir()
    (tmp_path / "sqlmesh" / "config.yaml").write_text("model_defaults: {dialect: duckdb}\n")
    assert "SQLMESH_PLAN: " in run_id_hint(tmp_path / "sqlmesh") and "dbt" not in run_id_hint(tmp_path / "sqlmesh")
    (tmp_path / "dbt").mkdir()
    (tmp_path / "dbt" / "dbt_project.yml").write_text("name: x\n")
    assert "invocation_id" in run_id_hint(tmp_path / "dbt")
