"""Keep on a type-2 entity on the dbt target, on DuckDB and PostgreSQL (decision 1127).

A type-2 entity is two nodes: `<entity>__current` (the assay_entity model, where the checks run)
and its history (`<entity>`, dbt's snapshot of `__current`). A failing keep check publishes the
table and keeps it (002 "Keeping a table"); the whole entity is published, its history included:

1. a good load publishes subscriber s1 on plan basic;
2. s1 moves to plan pro and s2 arrives suspended, which the keep check `no_suspended` refuses: the
   current table *and* the history hold the new data (s1's basic version closed, pro current),
   the history's node fails with TABLE_KEPT (so nothing reads the entity in this run), the
   failing row is recorded, and `assay table get` says kept;
3. a build that changes nothing more versions nothing twice and keeps the table kept.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = [pytest.mark.slow]
# DuckDB only since session 31 (the suite's time): keep on PostgreSQL 18 is test_keep_dbt's, and a
# type-2 history built there is test_type2's.
ENGINE_IDS = ("duckdb",)

ENTITIES = """\
spec_version: 1
entities:
  subscriber:
    grain: one row per subscriber, versioned as their plan changes
    key: [subscriber_id]
    scd: type2
    fields:
      subscriber_id: {type: string, required: true}
      plan: {type: string}
      status: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 30d}
"""
MAPPING = """\
mapping_version: 1
source: raw_subscribers
target: subscriber
key:
  subscriber_id: {from: "$.id"}
fields:
  plan: {from: "$.plan"}
  status: {from: "$.status"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
KEEP = """/* assay
on_failure: keep
description: No subscriber may be suspended.
*/
select subscriber_id from silver.subscriber where status = 'suspended'
"""
META = ["_load_id", "_ingested_at", "_source_row_id"]
T1, T2 = "2026-02-01T08:00:00Z", "2026-02-02T08:00:00Z"
S1 = ["l1", T1, "r1", "s1", "basic", "active"]
S1_PRO = ["l2", T2, "r2", "s1", "pro", "active"]
S2 = ["l2", T2, "r3", "s2", "basic", "suspended"]
CHECK = "silver.subscriber/no_suspended"


def subscribers(*rows):
    return Relation("raw_subscribers", META + ["id", "plan", "status"], [list(r) for r in rows])


def run_id(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def nodes(project) -> dict[str, tuple[str, str]]:
    results = json.loads((project.path / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: (r["status"], r.get("message") or "") for r in results}


def cli_json(project, *args):
    res = CliRunner().invoke(cli, [*args, "--project", str(project.path), "--json"])
    return res.exit_code, (json.loads(res.stdout) if res.stdout.strip() else res.output)


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine):
    root = tmp_path_factory.mktemp(f"keep_type2_{engine.id}")
    spec = root / "spec"
    spec.mkdir()
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "subscribers.yml").write_text(MAPPING)
    folder = spec / "checks" / "silver" / "subscriber"
    folder.mkdir(parents=True)
    (folder / "no_suspended.sql").write_text(KEEP)
    project = engine.dbt_project(root / "proj", spec, f"keep_type2_{engine.id}")
    seen = {}

    def step(name):
        proc = project.dbt("build")
        rid = run_id(project)
        seen[name] = {
            "rc": proc.returncode, "run": rid, "nodes": nodes(project), "stdout": proc.stdout,
            "history": sorted(project.query(
                'select subscriber_id, plan, status, dbt_valid_to is null from silver."subscriber"')),
            "current": sorted(project.query('select subscriber_id, plan, status from silver."subscriber__current"')),
            "events": sorted(project.query(
                f"select event_type, table_name, check_name, why from assay_meta.assay_events where run_id = '{rid}'")),
            "get": cli_json(project, "table", "get", "subscriber", "--spec", str(spec)),
        }

    project.load_bronze([subscribers(S1)])
    step("good")
    project.load_bronze([subscribers(S1, S1_PRO, S2)])
    step("kept")
    seen["kept"]["rows"] = cli_json(project, "check", "rows", seen["kept"]["run"][:8], CHECK)
    seen["kept"]["checks"] = cli_json(project, "checks", seen["kept"]["run"][:8])
    seen["kept"]["list"] = cli_json(project, "check", "list")
    step("again")
    return seen


def test_a_good_build_versions_the_history(story):
    good = story["good"]
    assert good["rc"] == 0, good["stdout"][-4000:]
    assert good["history"] == [("s1", "basic", "active", True)]


def test_a_kept_build_publishes_the_history_as_well_as_the_current_table(story):
    kept = story["kept"]
    assert kept["current"] == [("s1", "pro", "active"), ("s2", "basic", "suspended")]
    # the history has the new versions: s1's basic closed, pro current, s2 new
    assert kept["history"] == [("s1", "basic", "active", False), ("s1", "pro", "active", True),
                               ("s2", "basic", "suspended", True)], kept["stdout"][-4000:]


def test_the_history_node_fails_with_table_kept_after_it_versioned(story):
    kept = story["kept"]
    assert kept["rc"] != 0
    by_name = {uid.split(".")[-1]: v for uid, v in kept["nodes"].items()}
    assert by_name["subscriber__current"][0] == "success", by_name["subscriber__current"]
    status, message = by_name["subscriber"]
    assert status == "error", kept["stdout"][-4000:]
    assert "TABLE_KEPT: " in message and f"published and kept by run {kept['run']}: check {CHECK} failed" in message, message


def test_the_kept_state_and_the_kept_rows_are_recorded(story):
    kept = story["kept"]
    assert ("TABLE_KEPT", "subscriber", CHECK, "keep_check_failed") in kept["events"]
    assert ("CHECK_FAILED", "subscriber", CHECK, "returned 1 row") in kept["events"]
    assert not [e for e in kept["events"] if e[0] in ("TABLE_ROLLED_BACK", "TABLE_BUILD_FAILED")], kept["events"]
    code, got = kept["get"]
    assert code == 2
    assert {k: got[k] for k in ("table", "state", "run", "check")} == {
        "table": "subscriber", "state": "kept", "run": kept["run"], "check": CHECK}
    code, rows = kept["rows"]
    assert code == 0, rows
    assert "s2" in json.dumps(rows), rows


def test_a_build_with_nothing_new_versions_nothing_twice_and_stays_kept(story):
    kept, again = story["kept"], story["again"]
    assert again["history"] == kept["history"]
    assert ("TABLE_KEPT", "subscriber", CHECK, "keep_check_failed") in again["events"]
    assert again["get"][1]["state"] == "kept" and again["get"][1]["run"] == again["run"]


def test_the_sql_check_is_a_result_of_the_entity_not_of_its_current_node(story):
    """Decision 0948: the check runs on `subscriber__current`'s candidate, and its result is the
    entity's, as a declared check's is and as SQLMesh records it."""
    kept = story["kept"]
    code, wire = kept["checks"]
    assert code == 2, wire
    assert wire == [{"check_id": "NO_SUSPENDED", "passed": False, "detail": "returned 1 row (kept)", "scope": "subscriber"}]
    code, listed = kept["list"]
    assert code == 0, listed
    assert {(i["table"], i["check"]) for i in listed if i["run"] == kept["run"]} == {("subscriber", CHECK)}, listed
