"""`assay explain` of a row whose `_ingested_at` does not read as an instant, on SQLMesh (an outside
tester, session 48). SQLMesh writes the staged model, then its ingestion-metadata audit stops the
run: the staged row says `kept`, and explain said only "kept in the entity ... kept with no rule
fired", never that this row is what stopped the build. A real plan and run on DuckDB."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, write_spec
from tests.sqlmesh.test_table_states_sqlmesh import OPEN
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow


def test_a_row_the_ingestion_metadata_check_stops_on_says_so(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    try:
        sm.load_bronze([meters("M1", "M2")])
        sm.plan()
        good = meters("M1", "M2", "M3")
        at = good.columns.index("_ingested_at")
        rows = [r[:at] + ["not-a-time"] + r[at + 1:] if r[0] == "M3" else r for r in good.rows]
        sm.load_bronze([Relation(good.name, good.columns, rows)])
        assert not sm.run()
        sm.close()
        got = CliRunner().invoke(cli, ["explain", "meter", "M3", "--json", "--project", str(sm.path), "--spec", str(spec)])
        assert got.exit_code == 0, got.output
        [delivery] = json.loads(got.stdout)["deliveries"]
        assert ("its _ingested_at is missing or does not read as an instant: the ingestion-metadata check stops the "
                "build on such a row") in delivery["why"], delivery
        # a row whose metadata reads is not said to stop anything
        other = CliRunner().invoke(cli, ["explain", "meter", "M1", "--json", "--project", str(sm.path), "--spec", str(spec)])
        assert not any("ingestion-metadata" in w for d in json.loads(other.stdout)["deliveries"] for w in d["why"])
    finally:
        sm.close()
