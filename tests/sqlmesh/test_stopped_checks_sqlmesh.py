"""`assay checks` and `assay check list` show the `fail` rule that stopped a SQLMesh run, as on dbt
(decision 0941; tests/integration/test_stopped_checks_dbt.py).

The staged model's recorder records a fired `fail` rule as CHECK_FAILED (decision 0932) and no
check result: `assay checks` printed nothing for the run and exited 0 (or named an older run).
Real plans and runs of SQLMesh on DuckDB.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, rule_name, write_spec
from tests.sqlmesh.test_table_states_sqlmesh import OPEN, _release

pytestmark = pytest.mark.slow


def cli(path, spec, *args: str):
    from assay.cli.main import cli as main

    _release(path)
    got = CliRunner().invoke(main, [*args, "--project", str(path), "--spec", str(spec)])
    assert "Traceback" not in got.output, got.output
    return got


def test_a_fail_rule_that_stops_the_run_is_a_failed_result_of_it(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    rule = rule_name(sm)
    try:
        sm.load_bronze([meters("M1", "M2", "M3")])
        sm.plan()
        assert cli(sm.path, spec, "checks").exit_code == 0

        sm.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",))])
        assert not sm.run()
        sentence = f"1 row failed rule {rule} (on_fail: fail)"
        said = cli(sm.path, spec, "checks")
        assert said.exit_code == 2, said.output
        assert said.stdout.splitlines() == [f"meter: {rule}: FAILED: {sentence}"], said.output
        got = cli(sm.path, spec, "checks", "--json")
        assert got.exit_code == 2 and json.loads(got.stdout) == [
            {"check_id": rule.upper(), "passed": False, "detail": sentence, "scope": "meter"}], got.output
        listed = json.loads(cli(sm.path, spec, "check", "list", "--json").stdout)
        newest = listed[0]
        assert newest["run"].startswith("SQLMESH_RUN: "), listed
        assert {k: newest[k] for k in ("table", "check", "outcome", "rows", "kept", "on_failure")} == {
            "table": "meter", "check": rule, "outcome": "FAILED", "rows": 1, "kept": 0, "on_failure": "fail"}, listed
        # the run by the short id `check list` shows
        short = newest["run"][len("SQLMESH_RUN: "):][:8]
        assert cli(sm.path, spec, "checks", short).exit_code == 2
    finally:
        sm.close()
