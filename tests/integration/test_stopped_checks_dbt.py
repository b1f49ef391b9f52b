"""`assay checks RUN_ID` and `assay check list` show the checks that stopped or set back a table on
dbt (decision 0941).

A `fail` rule's test, the ingestion-metadata test and the conservation audit record no check
result: the build records each failure as a CHECK_FAILED event (the package's on-run-end hook,
decision 0935; the `assay_entity` materialization, decision 0510). `assay table get` names them;
`assay checks` printed only the passing results of the run (or said the run recorded none) and
exited 0, so a CI gate on it passed a failed build. Now each is a failed result of its run: its
table, its name, the build's sentence (names and counts only), exit 2; `check list` lists it with
the rows the build counted.

Real `dbt build`: the fail rule on DuckDB and PostgreSQL 18 (the `engine` fixture), the
ingestion-metadata test and the conservation audit on DuckDB (the reader is the same Python).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.integration.test_stopped_builds_dbt import RULE, broken_metadata, invocation
from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, write_spec
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow


def checks(project_path, spec, *args: str) -> tuple[int, list[str], list[dict]]:
    """`assay checks ARGS` (exit code, stdout lines) and its `--json` (the results)."""
    from assay.cli.main import cli

    base = ["--project", str(project_path), "--spec", str(spec)]
    said = CliRunner().invoke(cli, ["checks", *args, *base])
    got = CliRunner().invoke(cli, ["checks", *args, *base, "--json"])
    assert "Traceback" not in said.output + got.output, said.output + got.output
    assert said.exit_code == got.exit_code and got.stdout.strip(), (said.output, got.output)
    return said.exit_code, said.stdout.splitlines(), json.loads(got.stdout)


def report(project_path, spec) -> dict:
    from assay.cli.main import cli

    got = CliRunner().invoke(cli, ["report", "--project", str(project_path), "--spec", str(spec), "--json"])
    assert got.exit_code == 0 and "Traceback" not in got.output, got.output
    return json.loads(got.stdout)


def check_list(project_path, spec) -> list[dict]:
    from assay.cli.main import cli

    got = CliRunner().invoke(cli, ["check", "list", "--project", str(project_path), "--spec", str(spec), "--json"])
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout)


@pytest.mark.duckdb_only("the on-run-end hook records the stopped checks with the same Jinja on every adapter; test_stopped_builds_dbt's first test runs its insert and commit on PostgreSQL 18")
def test_a_fail_rule_that_stopped_the_table_is_a_failed_result_of_its_run(tmp_path, engine):
    spec = write_spec(tmp_path / "spec")
    project = engine.dbt_project(tmp_path / "dbt", spec, "stopped_checks")
    project.load_bronze([meters("M1", "M2", "M3")])
    project.dbt("build", check=True)
    first = invocation(project)
    code, lines, results = checks(project.path, spec, first)
    assert code == 0 and all(r["passed"] for r in results), lines

    project.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",))])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    sentence = f"1 row failed rule {RULE} (on_fail: fail)"
    for asked in (run, run[:8], None):  # the run by its id, by the start of it, and as the latest
        code, lines, results = checks(project.path, spec, *([asked] if asked else []))
        assert code == 2, lines
        assert lines == [f"meter: {RULE}: FAILED: {sentence}"], lines
        assert results == [{"check_id": RULE.upper(), "passed": False, "detail": sentence, "scope": "meter"}], results

    listed = [i for i in check_list(project.path, spec) if i["run"] == run]
    assert [{k: i[k] for k in ("table", "check", "outcome", "rows", "kept", "on_failure")} for i in listed] == [
        {"table": "meter", "check": RULE, "outcome": "FAILED", "rows": 1, "kept": 0, "on_failure": "fail"}], listed
    assert listed[0]["finished_at"].endswith("Z"), listed
    # the report's checks of the table's latest build are the same, counted as `assay checks` counts
    data = report(project.path, spec)
    assert [(c["table"], c["check_id"], c["outcome"], c["detail"]) for c in data["checks"]] == [
        ("meter", RULE, "FAILED", sentence)], data["checks"]
    line = next(h for h in data["health"]["lines"] if h["entity"] == "meter")
    assert line["checks_tally"] == "0 of 1 passed; 1 did not: 1 failed", line

    # a fixing build passes again; the stopped run keeps its failure
    project.load_bronze([meters("M1", "M2", "M3", "M4")])
    project.dbt("build", check=True)
    assert checks(project.path, spec)[0] == 0
    assert checks(project.path, spec, run)[0] == 2


def test_an_ingestion_metadata_stop_is_a_failed_result_of_its_run(tmp_path):
    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze([broken_metadata("M1", "M2", "M3")])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    code, lines, results = checks(project.path, spec, run)
    assert code == 2, lines
    assert lines == ["meter: INGESTION_METADATA: FAILED: 1 violating row"], lines
    assert results == [{"check_id": "INGESTION_METADATA", "passed": False,
                        "detail": "1 violating row", "scope": "meter"}], results
    listed = check_list(project.path, spec)
    assert [(i["run"], i["check"], i["outcome"], i["rows"], i["on_failure"]) for i in listed] == [
        (run, "INGESTION_METADATA", "FAILED", 1, "required")], listed


def test_a_conservation_failure_is_a_failed_result_of_its_run(tmp_path):
    from tests.integration.test_incremental_dbt import SPEC
    from tests.integration.test_incremental_loads_dbt import L1, L2, L3, execute, load

    project = make_project(tmp_path / "p", SPEC)
    load(project, L1)
    project.dbt("build", check=True)  # in a dbt process of its own: assay reads the DuckDB file after it
    load(project, L1 + L2)
    project.dbt("build", check=True)
    # a kept row of a settled load removed from the published entity by hand: the conservation
    # audit stops the build (tests/integration/test_incremental_loads_dbt.py)
    execute(project, "delete from silver.orders where _source_row_id = 'a2'")
    load(project, L1 + L2 + L3)
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    code, lines, results = checks(project.path, SPEC, run)
    assert code == 2, lines
    assert "orders: CONSERVATION: FAILED: 1 violating row" in lines, lines
    assert {"check_id": "CONSERVATION", "passed": False, "detail": "1 violating row", "scope": "orders"} in results
    listed = [i for i in check_list(project.path, SPEC) if i["run"] == run and i["check"] == "CONSERVATION"]
    assert [(i["table"], i["outcome"], i["rows"], i["on_failure"]) for i in listed] == [
        ("orders", "FAILED", 1, "required")], listed
