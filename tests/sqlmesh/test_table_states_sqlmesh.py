"""`assay table get|list` on SQLMesh (decision 0932): the states a failed build leaves are derived
from what the environment's view shows, and agree with dbt's where both targets set back.

One spec (`meter`, key without dedupe, a required row_expectation) built side by side on dbt and
SQLMesh (DuckDB), through real `dbt build` and real plans and runs:

1. both publish 3 rows;
2. the spec raises `min_rows` (the entity model changes): dbt sets the table back, SQLMesh's plan
   builds a new version that fails its audit and the view stays on the previous one. Both say
   `set back by the latest build (run ...)`, naming ENOUGH_METERS, exit 2;
3. bronze grows to 5 rows: a fixing build publishes on both, exit 0;
4. a repeated key: the staged model's key audit stops the run before the entity is written, so
   the entity keeps its rows: set back, naming KEY_UNIQUE, as dbt names it;
5. bronze shrinks to 2 rows and `sqlmesh run` evaluates the entity in place: the view shows the
   failing rows, and the state says so (`published_failing`, exit 2), never a clean publish.

And an entity SQLMesh skips because the entity it reads failed in a run says so as dbt does (0963).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.api_sqlmesh import generate_sqlmesh_project
from assay.cli.main import cli
from tests.support.corpus import Relation
from tests.support.sqlmeshfailures import plan_fails

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  meter:
    grain: one row per meter
    key: [meter_id]
    fields:
      meter_id: {{type: string, required: true}}
      site: {{type: string}}
    checks:
      - {{check_id: enough_meters, kind: row_expectation, enforcement: required, min_rows: {min_rows}}}
"""
MAPPING = """\
mapping_version: 1
source: raw_meters
target: meter
key:
  meter_id: {from: "$.id"}
fields:
  site: {from: "$.site"}
"""


def meters(*ids: str) -> Relation:
    return Relation("raw_meters", ["id", "site"], [[i, f"S-{i}"] for i in ids])


def write_spec(spec: Path, min_rows: int) -> Path:
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES.format(min_rows=min_rows))
    (spec / "meters.yml").write_text(MAPPING)
    return spec


def table_get(project: Path, spec: Path) -> tuple[int, str, dict]:
    _release(project)
    args = ["table", "get", "meter", "--project", str(project), "--spec", str(spec)]
    said = CliRunner().invoke(cli, args)
    got = CliRunner().invoke(cli, [*args, "--json"])
    assert "Traceback" not in said.output + got.output, said.output + got.output
    assert said.exit_code == got.exit_code and got.stdout.strip(), (said.output, got.output)
    first = said.stdout.splitlines()[0] if said.stdout else said.output
    return said.exit_code, first, json.loads(got.stdout)


OPEN: dict = {}  # the SQLMesh project by its path: its Context holds the DuckDB file


def _release(path: Path) -> None:
    """Close SQLMesh's connection so that assay can open the warehouse (DuckDB allows one writer
    process-wide per file); the next plan or query opens a fresh Context."""
    if path in OPEN:
        OPEN[path].close()


def listed(project: Path, spec: Path) -> dict:
    _release(project)
    res = CliRunner().invoke(cli, ["table", "list", "--json", "--project", str(project), "--spec", str(spec)])
    assert res.exit_code == 0, res.output
    return {t["table"]: t for t in json.loads(res.stdout)}


def published(project) -> list[str]:
    return [r[0] for r in project.query("select meter_id from silver.meter order by meter_id")]


def sqlmesh_runs(project) -> list[str]:
    """The run ids that recorded meter's results, oldest first."""
    rows = project.query("select run_id, max(recorded_at) from assay_meta.assay_check_results "
                         "where table_name = 'meter' group by run_id order by 2")
    return [r[0] for r in rows]


def dbt_run(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def without_run(line: str) -> str:
    return re.sub(r"\(run [^)]*\)", "(run R)", line)


SET_BACK = ("meter: set back by the latest build (run R): check ENOUGH_METERS did not pass; "
            "the previous version is still published")


def test_sqlmesh_states_are_derived_from_what_the_view_shows(tmp_path):
    from tests.support.dbtproject import make_project as make_dbt
    from tests.support.sqlmeshproject import make_project as make_sqlmesh

    spec = write_spec(tmp_path / "spec", min_rows=2)
    dbt = make_dbt(tmp_path / "dbt", spec)
    sm = make_sqlmesh(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm

    def regenerate(min_rows: int) -> None:
        write_spec(spec, min_rows)
        assert not generate_dbt_project(spec, dbt.path).report.conflicts
        assert not generate_sqlmesh_project(spec, sm.path, dialect=sm.dialect).report.conflicts
        sm.close()

    try:
        # 1. both publish
        for p in (dbt, sm):
            p.load_bronze([meters("M1", "M2", "M3")])
        assert dbt.dbt("build").returncode == 0
        sm.plan()
        for path in (dbt.path, sm.path):
            code, line, got = table_get(path, spec)
            assert (code, line, got["state"]) == (0, "meter: published", "published"), line

        # 2. case A: a changed entity whose required check fails
        regenerate(min_rows=4)
        assert dbt.dbt("build").returncode != 0
        failures = plan_fails(sm)
        assert {getattr(f, "audit", None) for f in failures} == {"assay_check__enough_meters"}, failures
        assert published(dbt) == published(sm) == ["M1", "M2", "M3"]  # both still show the first build
        plan = sqlmesh_runs(sm)[-1]
        assert plan.startswith("SQLMESH_PLAN: ")
        states = {}
        for name, p, run in (("dbt", dbt, dbt_run(dbt)), ("sqlmesh", sm, plan)):
            code, line, got = table_get(p.path, spec)
            assert code == 2, line
            assert line == SET_BACK.replace("(run R)", f"(run {run})"), line
            assert (got["state"], got["run"], got["check"], got["why"]) == ("set_back", run, "ENOUGH_METERS",
                                                                            "previous_version_kept"), got
            assert listed(p.path, spec)["meter"]["state"] == "set_back"
            states[name] = ({**got, "run": None, "since": None, "events": None}, without_run(line))
        assert states["dbt"] == states["sqlmesh"]  # the targets agree
        events = [e["event"] for e in table_get(sm.path, spec)[2]["events"]]
        assert events[:2] == ["TABLE_BUILD_FAILED", "CHECK_FAILED"], events
        # the failed check's sentence is 000's on both targets (rendered from the recorded result)
        whys = {p.path: [e["why"] for e in table_get(p.path, spec)[2]["events"] if e["event"] == "CHECK_FAILED"]
                for p in (dbt, sm)}
        assert whys[dbt.path][:1] == whys[sm.path][:1] == ["row count 3 is below the declared minimum of 4"], whys

        # 3. a fixing build publishes on both
        for p in (dbt, sm):
            p.load_bronze([meters("M1", "M2", "M3", "M4", "M5")])
        assert dbt.dbt("build").returncode == 0
        sm.plan()
        assert published(sm) == ["M1", "M2", "M3", "M4", "M5"]
        for path in (dbt.path, sm.path):
            code, line, got = table_get(path, spec)
            assert (code, line, got["state"], got["run"], got["check"]) == (0, "meter: published", "published", None, None)

        # 4. a run stopped before the entity is written: the entity keeps its rows, set back
        sm.load_bronze([meters("M1", "M1", "M2", "M3", "M4", "M5")])
        assert not sm.run()
        assert published(sm) == ["M1", "M2", "M3", "M4", "M5"]
        run = sqlmesh_runs(sm)[-1]
        code, line, got = table_get(sm.path, spec)
        assert code == 2, line
        assert line == (f"meter: set back by the latest build (run {run}): check KEY_UNIQUE did not pass; "
                        "the previous version is still published"), line
        assert (got["state"], got["check"], got["why"]) == ("set_back", "KEY_UNIQUE", "previous_version_kept"), got
        # dbt names the same check for the same bronze
        dbt.load_bronze([meters("M1", "M1", "M2", "M3", "M4", "M5")])
        assert dbt.dbt("build").returncode != 0
        assert without_run(table_get(dbt.path, spec)[1]) == without_run(line)

        # 5. in place: `sqlmesh run` writes the entity the view shows, then its audit fails
        sm.load_bronze([meters("M1", "M2")])
        assert not sm.run()
        assert published(sm) == ["M1", "M2"]  # readers see the failing rows
        run = sqlmesh_runs(sm)[-1]
        assert run.startswith("SQLMESH_RUN: ")
        code, line, got = table_get(sm.path, spec)
        assert code == 2, line
        assert line == (f"meter: published although the latest build (run {run}) did not pass check ENOUGH_METERS: "
                        "SQLMesh evaluated it in place, so readers see the rows that failed"), line
        assert (got["state"], got["run"], got["check"], got["why"]) == ("published_failing", run, "ENOUGH_METERS",
                                                                        "evaluated_in_place"), got
    finally:
        sm.close()


def test_an_entity_sqlmesh_skips_below_a_failed_parent_says_so(tmp_path):
    """Decision 0963, with dbt's spec of decision 0940 (tests/integration/test_stopped_builds_dbt.py):
    `item` reads `shop`. A `sqlmesh run` evaluates `shop` in place, its required check fails, and
    SQLMesh skips `item`, recording nothing for it: `table get item` says what dbt says of the same
    build, the sentence of 0940, exit 2. A fixing run evaluates `item` again: published."""
    from tests.integration.test_stopped_builds_dbt import SHOP_CHECK, shops_and_items, write_upstream_spec
    from sqlmesh.utils import CompletionStatus

    from tests.support.sqlmeshproject import make_project

    spec = write_upstream_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm

    def item() -> tuple[int, str, dict]:
        _release(sm.path)
        args = ["table", "get", "item", "--project", str(sm.path), "--spec", str(spec)]
        said, got = CliRunner().invoke(cli, args), CliRunner().invoke(cli, [*args, "--json"])
        assert "Traceback" not in said.output + got.output and said.exit_code == got.exit_code, said.output + got.output
        return said.exit_code, said.stdout.splitlines()[0], json.loads(got.stdout)

    try:
        sm.load_bronze(shops_and_items("S1", "S2"))
        sm.plan()
        assert item()[:2] == (0, "item: published")
        sm.load_bronze(shops_and_items("S1"))
        assert not sm.run()  # shop's audit fails after it was evaluated in place
        run = sm.query("select run_id from assay_meta.assay_events where event_type = 'TABLE_BUILD_FAILED'")[0][0]
        assert run.startswith("SQLMESH_RUN: "), run
        code, line, got = item()
        assert code == 2, line
        assert line == (f"item: set back by the latest build (run {run}): it was not written because its upstream "
                        f"entity shop did not pass check {SHOP_CHECK}; the previous version is still published"), line
        assert {k: got[k] for k in ("state", "run", "check", "why", "upstream")} == {
            "state": "set_back", "run": run, "check": SHOP_CHECK, "why": "upstream_failed", "upstream": "shop"}, got
        sm.load_bronze(shops_and_items("S1", "S2", "S3"))
        sm.clock += dt.timedelta(days=1)
        # `end` too: without it the run ends at the wall clock and only retries the failed interval,
        # whose staged model holds the old delivery
        assert sm.context().run(execution_time=sm.clock, end=sm.clock) == CompletionStatus.SUCCESS
        assert item()[:2] == (0, "item: published")
    finally:
        sm.close()
