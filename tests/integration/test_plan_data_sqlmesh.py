"""`assay plan OLD NEW --data` on a SQLMesh project (DuckDB and PostgreSQL 18 gateways) against the
real next plan, run and replay (issue 20 item 4, decision 1020).

The `item` story of test_plan_data_dbt.py on SQLMesh, its clock pinned: two daily plans with the
OLD spec, then `assay plan --data --execution-time <the next day>`; the warehouse must be
unchanged (DuckDB: the file's bytes; PostgreSQL: every table's row count and checksum, SQLMesh's
state tables included) and, on PostgreSQL, the scratch database gone. On PostgreSQL the sandbox
moves SQLMesh's state to the scratch database's catalog: there its own plan must see nothing
changed with the OLD spec, and with the NEW spec exactly the snapshots, versions, categories and
missing intervals of the real plan. Then for real, as
docs/sqlmesh.md orders a rule change that diverts rows: `assay generate sqlmesh`, `sqlmesh plan`
at the next interval (the forward-only reject table takes the change in before the entity's
conservation audit, decision 0939), `sqlmesh run` at the interval after, `assay replay` for the
plan's replay_scope, `sqlmesh run` at the interval after that. Every number is compared
with the real tables, read by this module's own queries.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_plan_data_dbt import DAYS, ENTITIES as DBT_ENTITIES, ITEM_COLS, ITEMS, NEW_ITEMS, _rules
from tests.integration.test_plan_data_dbt import _fingerprint as _tables_fingerprint
from tests.support.corpus import Relation
from tests.support.runners import RUNNERS

pytestmark = pytest.mark.slow

# the dbt test's `item` entity alone (SQLMesh's next build is the same story without `tag`)
ENTITIES = DBT_ENTITIES[:DBT_ENTITIES.index("  tag:\n")]
RULES = ["colour_in_set", "note_length_max", "size_coercible", "size_range"]


def _spec(path, items: str):
    path.mkdir(parents=True)
    (path / "entities.yml").write_text(ENTITIES)
    (path / "items.yml").write_text(items)
    return path


def _state(project) -> dict:
    rejects = project.query("select reject_id, _source_row_id, resolved_at is null, resolution, failed_rules, disposition "
                            "from silver.item__reject")
    rows = project.query("select _source_row_id, _load_id, _quality_flags from silver.item")
    return {
        "open": {r[0]: (r[1], _rules(r[4]), r[5]) for r in rejects if r[2]},
        "resolved": {r[0]: r[3] for r in rejects if not r[2]},
        "kept": {r[0]: (r[1], _rules(r[2])) for r in rows},
        "bronze": {r[0] for r in project.query('select _source_row_id from bronze."raw_items"')},
    }


def _cli(*args: str) -> dict:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _fingerprint(project) -> object:
    if project.engine == "duckdb":
        return hashlib.sha256((project.path / "warehouse.duckdb").read_bytes()).hexdigest()
    return _tables_fingerprint(project)


def _shape(plan) -> dict:
    """A plan's changes, its models named without their catalog (the sandbox's is another)."""
    from sqlglot import exp

    def name(fqn: str) -> str:
        table = exp.to_table(fqn)
        return f"{table.db}.{table.name}"
    diff = plan.context_diff
    return {
        "added": sorted(map(name, diff.added)), "removed": sorted(name(s.name) for s in diff.removed_snapshots.values()),
        "modified": sorted(map(name, diff.modified_snapshots)),
        "new": sorted((name(s.name), s.version, str(s.change_category), s.is_forward_only) for s in plan.new_snapshots),
        "missing": sorted((name(i.snapshot_id.name), i.intervals) for i in plan.missing_intervals),
    }


def _sandbox_plans(project, new, day) -> dict:
    """The sandbox's own `sqlmesh plan` (not applied) with the OLD spec, then with the NEW one."""
    from sqlmesh import Context

    from assay.api_sqlmesh import generate_sqlmesh_project
    from assay.plandata.sandbox import sqlmesh_sandbox

    out = {}
    try:
        with sqlmesh_sandbox(project.path, None, ("bronze", "silver", "gold")) as sb:
            for spec in ("old", "new"):
                if spec == "new":
                    assert not generate_sqlmesh_project(new, sb.path, dialect=project.dialect).report.conflicts
                ctx = Context(paths=str(sb.path))
                try:
                    out[spec] = _shape(ctx.plan(no_prompts=True, execution_time=day))
                finally:
                    ctx.close()
            # left by an exception: the scratch database must be dropped on failure too (`scratch_left`)
            raise _Leave()
    except _Leave:
        pass
    return out


class _Leave(Exception):
    pass


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine):
    if engine.id == "pg15":
        pytest.skip("PostgreSQL 18 covers the PostgreSQL sandbox")
    runner = RUNNERS["sqlmesh"]
    root = tmp_path_factory.mktemp(f"plan_data_sqlmesh_{engine.id}")
    old, new = _spec(root / "old", ITEMS), _spec(root / "new", NEW_ITEMS)
    project = runner.project(engine, root / "proj", old, f"plan_data_{engine.id}")
    runner.start_clock(project, dt.datetime(2026, 3, 1))
    try:
        for rows in DAYS:
            project.load_bronze([Relation("raw_items", ITEM_COLS, [list(r) for r in rows])])
            assert runner.build(project).ok
        out = {"before": _state(project)}
        project.close()  # DuckDB: one process holds the file once
        printed = _fingerprint(project)
        # the next plan is at the next interval: NEW_ITEMS diverts rows the OLD rules kept, which a
        # plan inside the interval already processed cannot place (decision 0939)
        next_day = project.clock + dt.timedelta(days=1)
        if engine.kind == "postgres":
            out["sandbox"] = _sandbox_plans(project, new, next_day)
        day = next_day.strftime("%Y-%m-%d %H:%M:%S")
        out["plan"] = _cli("plan", str(old), "--spec", str(new), "--project", str(project.path), "--data", "--json",
                           "--execution-time", day)
        out["unchanged"] = printed == _fingerprint(project)
        # the scratch databases of a PostgreSQL plan are dropped when the plan ends
        out["scratch_left"] = [] if engine.kind == "duckdb" else project.query(
            "select datname from pg_database where datname like 'assay_plan_%'")
        # the real next plan (the next interval) and run (the interval after), the replays, the run after
        real = runner.respec(project, new, next_interval=True)
        assert real.ok
        out["real_plan"] = _shape(real.details["same_day"].details["plan"])
        out["after"] = _state(project)
        project.close()
        out["replay"] = {name: _cli("replay", name, "--spec", str(new), "--project", str(project.path), "--json")
                         for name in out["plan"]["replay_scope"]}
        assert project.run()
        out["final"] = _state(project)
        out["engine"] = engine.kind
        yield out
    finally:
        runner.close(project)


def test_plan_leaves_the_warehouse_unchanged(story):
    assert story["unchanged"]
    assert story["scratch_left"] == []
    assert story["plan"]["data"]["build"]["ok"] is True and story["plan"]["replay_scope"] == ["item"]
    assert (story["plan"]["data"]["target"], story["plan"]["data"]["engine"]) == ("sqlmesh", story["engine"])


def test_the_sandbox_plan_sees_only_what_the_new_spec_changes(story):
    if story["engine"] != "postgres":
        pytest.skip("only a PostgreSQL sandbox moves SQLMesh's state to another catalog")
    old, new = story["sandbox"]["old"], story["sandbox"]["new"]
    assert {k: v for k, v in old.items() if k != "missing"} == {"added": [], "removed": [], "modified": [], "new": []}
    # planned at the next interval (decision 0939), the OLD spec has only that interval due
    assert old["missing"] and len({tuple(map(tuple, iv)) for _m, iv in old["missing"]}) == 1, old["missing"]
    assert new == story["real_plan"]
    assert "silver.item__staged" in new["modified"] and new["added"] == new["removed"] == []


def test_reject_table_and_rule_numbers_equal_the_real_plan_and_run(story):
    before, after = story["before"], story["after"]
    said = story["plan"]["data"]["entities"]["item"]
    newly = set(after["open"]) - set(before["open"])
    leaving = [after["resolved"][rid] for rid in before["open"] if rid in after["resolved"]]
    assert said["newly_quarantined"] == len(newly) == 2
    assert said["leave_reject"] == {"admitted": leaving.count("admitted"), "deduped": leaving.count("deduped")}
    assert said["leave_reject"]["admitted"] == 1
    for rule in RULES:
        diverted = {srid for srid, fr, _ in after["open"].values() if rule in fr and srid in after["bronze"]}
        was = {srid for srid, fr, _ in before["open"].values() if rule in fr}
        flagged = {srid for srid, (_load, fl) in after["kept"].items() if rule in fl}
        had = {srid for srid, (_load, fl) in before["kept"].items() if rule in fl}
        got = said["rules"][rule]
        assert (got["quarantined"], got["newly_quarantined"]) == (len(diverted), len(diverted - was)), rule
        assert (got["flagged"], got["newly_flagged"]) == (len(flagged), len(flagged - had)), rule
    assert (said["rules"]["size_range"]["quarantined"], said["rules"]["size_range"]["newly_quarantined"]) == (3, 2)


def test_what_replay_brings_back_equals_the_real_replay_and_run(story):
    said = story["plan"]["data"]["entities"]["item"]["replay"]
    real = story["replay"]["item"]
    assert said["redelivered"] == sum(real["redelivered"].values()) == 2
    assert said["superseded"] == real["superseded"] and said["in_bronze"] == real["in_bronze"]
    back = [srid for srid, (load, _fl) in story["final"]["kept"].items() if load == "__replay__"]
    earlier = [srid for srid, (load, _fl) in story["after"]["kept"].items() if load == "__replay__"]
    assert said["brought_back"] == len(back) - len(earlier) == 2
    left = [story["final"]["resolved"][rid] for rid in story["after"]["open"] if rid in story["final"]["resolved"]]
    assert said["leave_reject"] == {"admitted": left.count("admitted"), "deduped": left.count("deduped")}
