"""What the quality history of a SQLMesh run holds when one entity's `fail` rule stops it, or a
parent set back skips its child, and that the report says when the history it shows is older
than an entity's latest build (decisions 0942, 0969).

Each entity's runs append to a mart part of their own that reads only its staged model, so the
run SQLMesh stops on one entity still records every entity it judged, as dbt's on-run-end hook
does. Real plans and runs of SQLMesh on DuckDB, with tests/integration/test_mart_of_stopped_runs_dbt.py's
specs: `meter` stops on its rule, `gauge` is judged; `shop` is set back, `item` is skipped.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.integration.test_mart_of_stopped_runs_dbt import accounting, failed_by_rule, gauges, mart, write_spec
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
        failed = sm.query("select run_id from assay_meta.assay_events where event_type = 'TABLE_BUILD_FAILED'")[0][0]
        assert failed.startswith("SQLMESH_RUN: "), failed
        # gauge was judged: its part recorded the run, with the counts dbt records (by hand: 4
        # gauges, G2 and G4 quarantined by the coercible rule); meter's rows were judged before
        # its rule stopped it, and its staged model's recorder wrote them, as dbt's hook does
        # (decision 1162: 4 read, M4 failing the rule and diverted)
        rows = mart(sm, failed)
        assert accounting(rows, "gauge") == (4, 0, 2, 0), rows
        assert list(failed_by_rule(rows, "gauge").values()) == [2], rows
        assert accounting(rows, "meter") == (4, 0, 1, 0) and list(failed_by_rule(rows, "meter").values()) == [1], rows
        data = report(sm.path, spec)
        by = {e["entity"]: e for e in data["entities"]}
        # both latest runs are the failed one, whose counts they have; meter's state says so
        assert by["gauge"]["latest"]["run_id"] == failed and by["gauge"]["history_behind"] is None, by["gauge"]
        assert (by["gauge"]["latest"]["bronze"], by["gauge"]["latest"]["kept"]) == (4, 2), by["gauge"]["latest"]
        assert by["meter"]["outcome"]["state"] == "set_back" and by["meter"]["latest"]["run_id"] == failed, by["meter"]
        assert by["meter"]["history_behind"] is None and anomalies(sm.path, spec) == [], by["meter"]

        # a fixing run records every entity again: nothing is older any more
        sm.load_bronze([meters("M1", "M2", "M3", "M4"), gauges(3, ("G1", "1.5"))])
        assert sm.run()
        by = {e["entity"]: e for e in report(sm.path, spec)["entities"]}
        assert by["gauge"]["history_behind"] is None and by["meter"]["history_behind"] is None, by
        assert anomalies(sm.path, spec) == []

        # a plan inside the interval just run, changing meter only, fails on meter's rule: it
        # evaluated nothing of gauge, whose history is still its latest build's (an outside tester
        # saw gauge told "older than the latest run ... failed on meter")
        from assay.api_sqlmesh import generate_sqlmesh_project

        sm.plan(advance=False)  # every interval up to the clock (a run stops at the wall clock)
        mapping = spec / "meters.yml"
        mapping.write_text(mapping.read_text().replace("      - {rule: coercible, on_fail: flag}\n      - {rule: not_null",
                                                       "      - {rule: coercible, on_fail: flag}\n      - {rule: length, max: 40, on_fail: flag}\n      - {rule: not_null", 1))
        assert "length" in mapping.read_text()
        assert not generate_sqlmesh_project(spec, sm.path, dialect=sm.dialect).report.conflicts
        sm.context(fresh=True)
        sm.load_bronze([meters("M1", "M2", "M3", "M4", "M5", without_site=("M5",)), gauges(4, ("G1", "1.5"))])
        with pytest.raises(Exception, match="Plan application failed"):
            sm.plan(advance=False)
        by = {e["entity"]: e for e in report(sm.path, spec)["entities"]}
        assert by["gauge"]["history_behind"] is None, by["gauge"]
        assert by["meter"]["history_behind"] is not None, by["meter"]
        assert [b["entity"] for b in anomalies(sm.path, spec)] == ["meter"]
    finally:
        sm.close()


def test_a_parent_set_back_keeps_its_own_history_and_its_skipped_child_records_none(tmp_path):
    """`item` reads `shop`: `shop`'s required check stops the plan at `shop`, SQLMesh skips
    `item__staged`. `shop` was judged: its row of the run is recorded; `item` was not: none, as on
    dbt (tests/integration/test_mart_of_stopped_runs_dbt.py)."""
    from tests.integration.test_stopped_builds_dbt import shops_and_items, write_upstream_spec
    from tests.support.sqlmeshproject import make_project

    spec = write_upstream_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    try:
        sm.load_bronze(shops_and_items("S1", "S2"))
        sm.plan()
        sm.load_bronze(shops_and_items("S1"))
        assert not sm.run()
        run = sm.query("select run_id from assay_meta.assay_events where event_type = 'TABLE_BUILD_FAILED'")[0][0]
        rows = mart(sm, run)
        assert accounting(rows, "shop") == (1, 0, 0, 0) and not [k for k in rows if k[0] == "item"], rows
    finally:
        sm.close()
