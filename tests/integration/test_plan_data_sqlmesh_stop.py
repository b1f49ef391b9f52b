"""`assay plan --data` on SQLMesh when a `fail` rule of the new spec stops the next plan (an
outside tester, session 37).

A SQLMesh plan a blocking audit fails applies nothing, so every table still holds the last
build's rows: the plan printed them as the next build's (`6 kept, 3 quarantined, 0 failing`) with
no word of the rule that stopped it, where dbt's says `1 failed`. It now says which audit failed
on which model and how many rows (SQLMesh's own count), and that the entities were not measured.
A model whose SQL fails (not an audit) is no prediction: the plan says it could not run.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_plan_data_sqlmesh import ENTITIES
from tests.integration.test_plan_data_dbt import DAYS, ITEM_COLS, ITEMS
from tests.support.corpus import Relation
from tests.support.runners import RUNNERS

pytestmark = pytest.mark.slow

# `size_range` becomes a `fail` rule with a narrower range: what bronze holds then breaks it
FAILING = ITEMS.replace("{rule: range, min: 1, max: 10, on_fail: quarantine}", "{rule: range, min: 1, max: 5, on_fail: fail}")


def _spec(path, items: str):
    path.mkdir(parents=True)
    (path / "entities.yml").write_text(ENTITIES)
    (path / "items.yml").write_text(items)
    return path


def test_a_plan_a_fail_rule_stops_names_the_rule_and_its_rows(tmp_path, engine):
    if engine.kind != "duckdb":
        pytest.skip("the plan's reading of SQLMesh's failure does not depend on the engine")
    assert FAILING != ITEMS
    runner = RUNNERS["sqlmesh"]
    old, new = _spec(tmp_path / "old", ITEMS), _spec(tmp_path / "new", FAILING)
    project = runner.project(engine, tmp_path / "proj", old, "plan_data_stop")
    runner.start_clock(project, dt.datetime(2026, 3, 1))
    try:
        for rows in DAYS:
            project.load_bronze([Relation("raw_items", ITEM_COLS, [list(r) for r in rows])])
            assert runner.build(project).ok
        project.close()
        # the oracle: the rows bronze holds whose size is outside [1, 5] (one delivery per key here)
        size = ITEM_COLS.index("size")
        assert len({r[3] for r in DAYS[-1]}) == len(DAYS[-1])
        failing = sum(1 for r in DAYS[-1] if not 1 <= int(r[size]) <= 5)
        assert failing == 3
        day = (project.clock + dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
        args = ["plan", str(old), "--spec", str(new), "--project", str(project.path), "--data", "--execution-time", day]
        res = CliRunner().invoke(cli, args + ["--json"])
        assert res.exit_code == 0, res.output
        data = json.loads(res.stdout)["data"]
        assert data["build"]["ok"] is False
        item = data["entities"]["item"]
        assert (item["measured"], item["published"]) == (False, False)
        assert item["stops"] == [{"model": "silver.item__staged", "audit": "assay_fail_rule", "rule": "size_range",
                                  "rows": failing}]
        text = CliRunner().invoke(cli, args)
        assert "item: not measured (the plan failed and SQLMesh applied nothing; NOT published)" in text.stdout, text.output
        assert f"  size_range (fail): {failing} rows failed" in text.stdout, text.output
        assert "(assay_fail_rule size_range on silver.item__staged: 3 rows)" in text.stdout, text.output
    finally:
        runner.close(project)
