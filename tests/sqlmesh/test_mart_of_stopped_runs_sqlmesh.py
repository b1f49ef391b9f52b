"""What the quality history of a SQLMesh run holds when one entity's `fail` rule stops it, and that
the report says when the history it shows is older than an entity's latest build (decision 0942).

Real plans and runs of SQLMesh on DuckDB, with tests/integration/test_mart_of_stopped_runs_dbt.py's
spec: `meter` stops on its rule, `gauge` is judged.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.integration.test_mart_of_stopped_runs_dbt import gauges, write_spec
from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters
from tests.sqlmesh.test_table_states_sqlmesh import OPEN, _release

pytestmark = pytest.mark.slow


def report(path, spec) -> dict:
    from assay.cli.main import cli

    _release(path)
    got = CliRunner().invoke(cli, ["report", "--project", str(path), "--spec", str(spec), "--json"])
    assert got.exit_code == 0 and "Traceback" not in got.output, got.output
    return json.loads(got.stdout)


def anomalies(path, spec) -> list[dict]:
    """`assay anomalies --json`'s entities whose history is older than their latest build."""
    from assay.cli.main import cli

    _release(path)
    got = CliRunner().invoke(cli, ["anomalies", "--project", str(path), "--spec", str(spec), "--json"])
    assert got.exit_code == 0 and "Traceback" not in got.output, got.output
    return json.loads(got.stdout)["history_behind"]


def test_a_run_a_fail_rule_stops_and_the_report(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    try:
        sm.load_bronze([meters("M1", "M2", "M3"), gauges(1, ("G1", "1.5"), ("G2", "x"))])
        sm.plan()
        first = sm.query("select distinct run_id from gold.mart_data_quality")[0][0]
        sm.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",)),
                        gauges(2, ("G1", "1.5"), ("G2", "x"), ("G3", "2"), ("G4", "y"))])
        assert not sm.run()  # meter's staged audit fails the run
        # SQLMesh evaluates nothing downstream of the failed audit, the mart among them: the run
        # recorded no quality history for any entity, gauge's included
        history = sm.query("select entity, run_id from gold.mart_data_quality where rule = '(entity)'")
        assert {r for _, r in history} == {first}, history
        failed = sm.query("select run_id from assay_meta.assay_events where event_type = 'TABLE_BUILD_FAILED'")[0][0]
        assert failed.startswith("SQLMESH_RUN: "), failed
        data = report(sm.path, spec)
        by = {e["entity"]: e for e in data["entities"]}
        # the report says the counts it shows are older than the failed run, for the entity that
        # stopped (its state) and for the one that has no checks to tell of its build
        assert by["gauge"]["latest"]["run_id"] == first, by["gauge"]
        assert by["gauge"]["history_behind"]["run"] == failed and by["gauge"]["history_behind"]["failed_on"] == "meter"
        assert by["meter"]["outcome"]["state"] == "set_back" and by["meter"]["latest"]["run_id"] == first, by["meter"]
        line = next(h for h in data["health"]["lines"] if h["entity"] == "gauge")
        assert any(r.startswith(f"quality history is older than the latest run: the latest run {failed} failed on meter")
                   for r in line["reasons"]), line
        # `assay anomalies` says it of both entities, gauge's in the report's words (decision 0945);
        # meter's latest build is its own failed one (its state names it)
        behind = anomalies(sm.path, spec)
        assert [(b["entity"], b["run"], b.get("failed_on"), b["recorded_run"]) for b in behind] == \
            [("gauge", failed, "meter", first), ("meter", failed, None, first)], behind
        assert behind[0]["warning"] in line["reasons"], (behind, line)

        # a fixing run records every entity again: nothing is older any more
        sm.load_bronze([meters("M1", "M2", "M3", "M4"), gauges(3, ("G1", "1.5"))])
        assert sm.run()
        by = {e["entity"]: e for e in report(sm.path, spec)["entities"]}
        assert by["gauge"]["history_behind"] is None and by["meter"]["history_behind"] is None, by
        assert anomalies(sm.path, spec) == []
    finally:
        sm.close()
