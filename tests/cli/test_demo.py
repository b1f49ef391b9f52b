"""`assay demo DIR` as a newcomer runs it: a real dbt on DuckDB, a relative DIR from another
working directory, dbt's own error when a step fails, exit 2 when blocking checks fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("`assay demo` from a shell; .ci/run runs the README's demo command, and test_operator_commands_dbt.py builds the example in the fast loop"),
]

BLOCK = """/* assay
on_failure: block
description: every order is refunded first (so, with the example's orders, this fails)
*/
select o.order_id from silver."order" as o where o.amount > 0
"""


def _run_id(project: Path) -> str:
    return json.loads((project / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def _demo_from(cwd: Path, directory: str):
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        return CliRunner().invoke(cli, ["demo", directory])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo run from a sibling directory with a relative path, as `cd elsewhere; assay demo ../there/demo`."""
    base = tmp_path_factory.mktemp("newcomer")
    (base / "elsewhere").mkdir()
    result = _demo_from(base / "elsewhere", "../there/demo")
    return base, result


def test_a_relative_directory_from_another_working_directory(demo):
    base, result = demo
    assert result.exit_code == 0, result.output
    project = base / "there" / "demo"
    # every file the manifest owns was written (the count follows the dbt package's layout)
    owned = len(json.loads((project / ".assay" / "manifest.json").read_text())["files"])
    assert result.stdout.splitlines()[:6] == [
        f"1. generate: {owned} files written, 0 unchanged (2 entities)",
        "2. bronze: raw_customers 6 rows, raw_orders 10 rows",
        "3. dbt deps: ok",
        "4. dbt build: ok Done. PASS=14 WARN=1 ERROR=0 SKIP=0 NO-OP=0 TOTAL=15",
        f"   run id: {_run_id(project)}",  # the id `assay checks` takes
        "5. dbt source freshness: ok",
    ]
    # Not a terminal: the progress display is plain lines on stderr, one per step.
    assert result.stderr.splitlines() == [
        "assay demo [1/6] init and generate",
        "assay demo [2/6] loading the bronze sample",
        "assay demo [3/6] dbt deps",
        "assay demo [4/6] dbt build",
        "assay demo [5/6] dbt source freshness",
        "assay demo [6/6] reading what landed where",
    ]
    assert result.stdout.splitlines()[-1] == (
        f"next: assay checks --project {project}   (this build's check results); "
        f"assay report --project {project}   (an HTML page of what the build did)")
    assert "entity    bronze  kept  flagged  quarantined  deduped\n" in result.stdout
    assert "customer  6       3     1        2            1\n" in result.stdout
    assert "order     10      5     3        4            1\n" in result.stdout
    assert "PASS freshness of bronze.raw_orders" in result.output  # dbt's own line for the source
    assert f"(in {project / 'warehouse.duckdb'})" in result.stdout
    assert (project / "warehouse.duckdb").is_file()
    assert list((base / "elsewhere").iterdir()) == []  # nothing landed where the command ran
    # The run's checks passed, so `assay checks` exits 0; without a run id it reads the latest run.
    checks = CliRunner().invoke(cli, ["checks", _run_id(project), "--project", str(project)])
    assert checks.exit_code == 0, checks.output
    assert checks.stdout == "order: ENOUGH_ORDERS: passed: row count 5 satisfies the declared minimum of 1\n"
    latest = CliRunner().invoke(cli, ["checks", "--project", str(project)])
    assert (latest.exit_code, latest.stdout) == (0, checks.stdout)
    assert latest.stderr == f"run {_run_id(project)} (the latest)\n"


def test_a_build_whose_blocking_check_fails_exits_2_with_dbts_report(demo):
    base, _first = demo
    project = base / "there" / "demo"
    check = project / "checks" / "silver" / "order" / "all_refunded.sql"
    check.parent.mkdir(parents=True)
    check.write_text(BLOCK)
    try:
        result = _demo_from(base / "there", "demo")
    finally:
        check.unlink()
    assert result.exit_code == 2, result.output
    assert "4. dbt build: FAILED Done. PASS=13 WARN=0 ERROR=1 SKIP=1 NO-OP=0 TOTAL=15" in result.stdout
    # (the mart reads the staged rows, so it is built although the order entity failed: decision 0413)
    assert "What landed where" not in result.stdout  # nothing downstream of a failed build
    assert "CHECK_FAILED: silver.order/all_refunded: returned 5 rows." in result.stderr
    assert "`dbt build` ran, but checks did not pass (dbt's report is above)" in result.stderr
    assert "Traceback" not in result.output
    # and the recorded results say so too
    checks = CliRunner().invoke(cli, ["checks", _run_id(project), "--project", str(project)])
    assert checks.exit_code == 2
    assert "order: silver.order/all_refunded: FAILED: returned 5 rows\n" in checks.stdout


def test_a_failing_dbt_step_prints_dbts_own_error_and_exits_1(tmp_path, monkeypatch):
    project = tmp_path / "demo"
    # dbt removes its download directory only after a successful `dbt deps`; this one fails, so the
    # directory is named here (under the test's own tmp_path) instead of a new one in /tmp per run.
    monkeypatch.setenv("DBT_DOWNLOADS_DIR", str(tmp_path / "dbt-downloads"))
    assert CliRunner().invoke(cli, ["init", str(project)]).exit_code == 0
    # A package entry of the user's that does not exist: `dbt deps` cannot install it.
    (project / "packages.yml").write_text("packages:\n  - local: vendored/not_there\n")
    result = CliRunner().invoke(cli, ["demo", str(project)])
    assert result.exit_code == 1, result.output
    assert "3. dbt deps: FAILED" in result.stdout
    assert f"No dbt_project.yml found at expected path {project}/vendored/not_there/dbt_project.yml" in result.stderr
    assert f"Error: `dbt deps` failed in {project} (dbt exit code 2); dbt's own error is above." in result.stderr
    assert "Traceback" not in result.output
