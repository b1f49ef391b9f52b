"""One entity's `fail` rule no longer drops every entity's quality history of the run on dbt
(decision 0942).

The mart reads every staged model, so a failing test on one of them (a `fail` rule's
`assay_fail_rule` on `<entity>__staged`) made dbt skip gold.mart_data_quality: the run was lost
for every entity, and the report showed an older run as the latest. The package's on-run-end
hook now appends the rows of every entity the run judged (its staged model built), as the mart
would have: also the stopped entity's, whose rows its `fail` rule judged (decision 1162; before
it, the stopped entity recorded nothing, and the next build's load was counted as two). Real
`dbt build` on DuckDB and PostgreSQL 18: `meter` stops on its rule, `gauge` is judged and
published; their mart rows for the run are the counts taken by hand.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.integration.test_stopped_builds_dbt import invocation
from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import ENTITIES, MAPPING, meters
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

GAUGE = """\
  gauge:
    grain: one row per gauge
    key: [gauge_id]
    fields:
      gauge_id: {type: string, required: true}
      reading: {type: "decimal(10,2)"}
    quarantine: {retention: 30d}
"""
GAUGE_MAPPING = """\
mapping_version: 1
source: raw_gauges
target: gauge
key:
  gauge_id: {from: "$.id"}
unmapped: [$._source_row_id, $._load_id, $._ingested_at]
fields:
  reading:
    from: "$.reading"
    quality:
      - {rule: coercible, on_fail: quarantine}
"""


def write_spec(spec):
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES + GAUGE)
    (spec / "meters.yml").write_text(MAPPING)
    (spec / "gauges.yml").write_text(GAUGE_MAPPING)
    return spec


def gauges(load: int, *rows: tuple[str, str]) -> Relation:
    return Relation("raw_gauges", ["id", "reading", "_source_row_id", "_load_id", "_ingested_at"],
                    [[g, r, g, f"G{load}", f"2024-01-01 00:00:{load:02d}"] for g, r in rows])


def report(project_path, spec) -> dict:
    """`assay report --json`: the data the page is drawn from."""
    from assay.cli.main import cli

    got = CliRunner().invoke(cli, ["report", "--project", str(project_path), "--spec", str(spec), "--json"])
    assert got.exit_code == 0 and "Traceback" not in got.output, got.output
    return json.loads(got.stdout)


def anomalies(project_path, spec) -> dict:
    """`assay anomalies --json` (too few runs for a verdict: exit 0)."""
    from assay.cli.main import cli

    got = CliRunner().invoke(cli, ["anomalies", "--project", str(project_path), "--spec", str(spec), "--json"])
    assert got.exit_code == 0 and "Traceback" not in got.output, got.output
    return json.loads(got.stdout)


def mart(project, run: str) -> dict:
    """{(entity, rule): (evaluated, failed, quarantined, deduped)} of run `run`."""
    rows = project.query("select entity, rule, rows_evaluated, rows_failed, rows_quarantined, rows_deduped "
                         f"from gold.mart_data_quality where run_id = '{run}'")
    return {(e, r): tuple(int(x) for x in counts) for e, r, *counts in rows}


def accounting(rows: dict, entity: str) -> tuple:
    return rows[(entity, "(entity)")]


def failed_by_rule(rows: dict, entity: str) -> dict:
    return {r: c[1] for (e, r), c in rows.items() if e == entity and r != "(entity)" and c[1]}


@pytest.mark.duckdb_only("the mart's rows of a run are the same SQL on every adapter, built on PostgreSQL 18 by every dbt story there (test_multiload, test_corpus); which entities stopped is the hook's, run there by test_stopped_builds_dbt")
def test_the_judged_entity_keeps_its_history_when_another_stops(tmp_path, engine):
    spec = write_spec(tmp_path / "spec")
    project = engine.dbt_project(tmp_path / "dbt", spec, "mart_stopped")
    project.load_bronze([meters("M1", "M2", "M3"), gauges(1, ("G1", "1.5"), ("G2", "x"))])
    project.dbt("build", check=True)
    first = invocation(project)
    rows = mart(project, first)
    assert accounting(rows, "gauge") == (2, 0, 1, 0) and accounting(rows, "meter") == (3, 0, 0, 0), rows

    # meter's fail rule fires; gauge gets two new rows, one of them not a number
    project.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",)),
                         gauges(2, ("G1", "1.5"), ("G2", "x"), ("G3", "2"), ("G4", "y"))])
    proc = project.dbt("build")
    assert proc.returncode != 0
    run = invocation(project)
    results = {r["unique_id"].split(".")[-1]: r["status"]
               for r in json.loads((project.path / "target" / "run_results.json").read_text())["results"]}
    assert results["mart_data_quality"] == "skipped" and results["gauge"] == "success", results
    rows = mart(project, run)
    # by hand: 4 gauges judged, G2 and G4 quarantined by the coercible rule, none deduped
    assert accounting(rows, "gauge") == (4, 0, 2, 0), rows
    assert list(failed_by_rule(rows, "gauge").values()) == [2], rows
    # stopped, and judged: 4 meters read, M4 failed its `fail` rule and was diverted (decision 1162)
    assert accounting(rows, "meter") == (4, 0, 1, 0) and list(failed_by_rule(rows, "meter").values()) == [1], rows
    assert project.query(f"select count(distinct run_started_at) from gold.mart_data_quality where run_id = '{run}'")[0][0] == 1
    # the report's latest run of both is this one; meter's state says it was set back
    data = report(project.path, spec)
    by = {e["entity"]: e for e in data["entities"]}
    assert by["gauge"]["latest"]["run_id"] == run and by["gauge"]["history_behind"] is None, by["gauge"]
    assert (by["gauge"]["latest"]["bronze"], by["gauge"]["latest"]["kept"]) == (4, 2), by["gauge"]["latest"]
    assert by["meter"]["latest"]["run_id"] == run and by["meter"]["outcome"]["state"] == "set_back", by["meter"]
    assert by["meter"]["history_behind"] is None, by["meter"]
    # no history is older than its entity's latest build
    assert anomalies(project.path, spec)["history_behind"] == []
    # the rows have the mart's own columns and types: a later normal build appends as before
    project.load_bronze([meters("M1", "M2", "M3", "M4"), gauges(3, ("G1", "1.5"))])
    project.dbt("build", check=True)
    assert accounting(mart(project, invocation(project)), "meter") == (4, 0, 0, 0)


def test_a_first_build_that_stops_one_entity_creates_the_mart_with_the_others(tmp_path):
    from tests.support.dbtproject import make_project

    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze([meters("M1", "M2", without_site=("M2",)), gauges(1, ("G1", "1"), ("G2", "2"), ("G3", "z"))])
    assert project.dbt("build").returncode != 0
    rows = mart(project, invocation(project))
    assert accounting(rows, "gauge") == (3, 0, 1, 0) and accounting(rows, "meter") == (2, 0, 1, 0), rows


def test_a_parent_set_back_keeps_its_own_history_and_its_skipped_child_records_none(tmp_path):
    """`item` reads `shop` (decision 0940): `shop`'s required check sets it back, dbt skips
    `item__staged`, and so the mart. `shop` was judged (its staged model succeeded): its row of the
    run is recorded (decision 0413: a set-back entity's counts are); `item` was not judged: none."""
    from tests.integration.test_stopped_builds_dbt import shops_and_items, write_upstream_spec
    from tests.support.dbtproject import make_project

    spec = write_upstream_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze(shops_and_items("S1", "S2"))
    project.dbt("build", check=True)
    first = invocation(project)
    project.load_bronze(shops_and_items("S1"))
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    results = {r["unique_id"].split(".")[-1]: r["status"]
               for r in json.loads((project.path / "target" / "run_results.json").read_text())["results"]}
    assert (results["item__staged"], results["mart_data_quality"]) == ("skipped", "skipped"), results
    rows = mart(project, run)
    assert accounting(rows, "shop") == (1, 0, 0, 0) and not [k for k in rows if k[0] == "item"], rows
    # `assay anomalies` says that item's newest history is older than its latest build, in the
    # report's words (decision 0945); shop's history is its latest build's
    behind = anomalies(project.path, spec)["history_behind"]
    assert [(b["entity"], b["run"], b["recorded_run"]) for b in behind] == [("item", run, first)], behind
    assert behind[0]["warning"] == (f"quality history is older than the latest run: its latest build, run {run}, "
                                    f"recorded no row in mart_data_quality; the latest there is run {first}")
