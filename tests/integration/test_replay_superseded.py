"""Replay on an entity without `dedupe:` re-delivers at most one row per key (issue 18, decision 0920).

The story of issue 18, on both targets (the `runner` fixture) and on DuckDB and PostgreSQL 18:
- day 1: K1 (key K) and J1 (key J) fail `tier_in_set` and are quarantined;
- day 2: both age out of bronze; J2, a newer row of key J, arrives and is quarantined;
- day 3: J2 ages out; K3, a newer row of key K, arrives and is quarantined;
- the spec is relaxed (`bronze` becomes a valid tier), so every one of them would now pass;
- `assay replay customer` (before the relaxed spec is built, as docs/operating.md orders it).
Before 0920 replay re-delivered K1, J1 and J2: the next build saw two passing rows of K (K3 from
bronze, K1 replayed) and two of J, stopped on the key audit, and so did every build after it.
Now K1 is not re-delivered (bronze delivers K3), J2 goes back and J1 does not (J2 is the later
delivery), and K1 and J1 stay open re-stamped `(superseded)` (reference 001). The next build
passes, admits K3 and J2, and a second replay has nothing to do. A replay run again before that
build re-delivers nothing either: J2's replayed delivery holds key J (decision 0976).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("replay's superseded rows (decision 0920); in the fast loop test_replay_dbt.py replays and unit/test_replay_winners.py picks the winners"),
]

# On DuckDB only (session 32, the suite's time; PostgreSQL 18's dbt story until then): replay is the
# same Python for every engine (runtime/replay.py) and its SQL on PostgreSQL 18 is judged by
# test_replay_dbt there, which re-delivers and resolves; which rows win is unit/test_replay_winners.py's.
ENGINE_IDS = ("duckdb",)

ENTITIES = """\
spec_version: 1
entities:
  customer:
    grain: one row per customer (no dedupe)
    key: [customer_id]
    fields:
      customer_id: {type: string, required: true}
      tier: {type: string}
    quarantine: {retention: 3650d}
"""
MAPPING = """\
mapping_version: 1
source: raw_customers
target: customer
key:
  customer_id: {from: "$.id"}
fields:
  tier:
    from: "$.tier"
    quality:
      - {rule: in_set, values: [gold, silver], on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
RELAXED = MAPPING.replace("values: [gold, silver]", "values: [gold, silver, bronze]")
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "tier"]
C0 = ["l1", "2026-03-01T09:00:00Z", "c0", "C", "gold"]
K1 = ["l1", "2026-03-01T10:00:00Z", "k1", "K", "bronze"]
J1 = ["l1", "2026-03-01T11:00:00Z", "j1", "J", "bronze"]
J2 = ["l2", "2026-03-02T10:00:00Z", "j2", "J", "bronze"]
K3 = ["l3", "2026-03-03T10:00:00Z", "k3", "K", "bronze"]
DAYS = [[C0, K1, J1], [C0, J2], [C0, K3]]


def _write(spec, mapping: str):
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "customers.yml").write_text(mapping)
    return spec


def _replay(runner, project, spec, *extra) -> dict:
    if runner.target == "sqlmesh":
        project.close()  # DuckDB: one process cannot hold the file twice
    res = CliRunner().invoke(cli, ["replay", "customer", "--spec", str(spec), "--project", str(project.path), "--json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _rejects(project) -> dict:
    rows = project.query("select _source_row_id, resolved_at is null, resolution, failed_rules from silver.customer__reject")
    # failed_rules is a list on DuckDB and PostgreSQL
    return {r[0]: (bool(r[1]), r[2], sorted(r[3])) for r in rows}


@pytest.fixture(scope="module")
def story(tmp_path_factory, runner, engine):
    runner.require(engine)
    root = tmp_path_factory.mktemp(f"replay_superseded_{runner.target}_{engine.id}")
    spec = _write(root / "spec", MAPPING)
    project = runner.project(engine, root / "project", spec, f"replay_superseded_{engine.id}")
    runner.start_clock(project, dt.datetime(2026, 3, 1))
    out: dict = {}
    try:
        for n, rows in enumerate(DAYS, 1):
            project.load_bronze([Relation("raw_customers", COLS, [list(r) for r in rows])])
            build = runner.build(project)
            assert build.ok, (n, build.log[-3000:], build.stopped)
        out["before"] = _rejects(project)
        relaxed = _write(root / "relaxed", RELAXED)
        out["dry"] = _replay(runner, project, relaxed, "--dry-run")
        said = CliRunner().invoke(cli, ["replay", "customer", "--spec", str(relaxed), "--project", str(project.path), "--dry-run"])
        out["dry_text"] = said.stdout.splitlines()
        out["bronze_dry"] = project.query('select count(*) from bronze."raw_customers"')[0][0]
        out["replay"] = _replay(runner, project, relaxed)
        # run again before any build: its own re-delivery holds J's key (decision 0976)
        out["replay_twice"] = _replay(runner, project, relaxed)
        out["bronze"] = sorted(project.query('select _source_row_id, _load_id from bronze."raw_customers"'))
        out["marked"] = _rejects(project)
        build = runner.respec(project, relaxed)
        out["build"] = (build.ok, build.log[-3000:], build.stopped)
        out["entity"] = sorted(project.query("select customer_id, _source_row_id, _load_id from silver.customer"))
        out["after"] = _rejects(project)
        build = runner.build(project)
        out["next_build"] = (build.ok, build.log[-3000:], build.stopped)
        out["again"] = _replay(runner, project, relaxed)
        yield out
    finally:
        runner.close(project)


def test_the_quarantined_rows_are_open_before_the_replay(story):
    assert {srid for srid, (open_, _res, _rules) in story["before"].items() if open_} == {"k1", "j1", "j2", "k3"}


def test_replay_redelivers_one_row_per_free_key_and_none_for_a_held_key(story):
    said = story["replay"]
    assert (said["redelivered"], said["superseded"], said["in_bronze"], said["unrecoverable"]) == (
        {"raw_customers": 1}, 2, 1, 0)
    assert story["bronze"] == [("c0", "l1"), ("j2", "__replay__"), ("k3", "l3")]


def test_a_replay_run_again_before_the_build_re_delivers_nothing(story):
    """J2 is in bronze as a `__replay__` delivery the last build never saw: it holds key J, so J1
    stays superseded rather than going back beside it (two rows of J would stop the build)."""
    said = story["replay_twice"]
    assert (said["redelivered"], said["superseded"], said["in_bronze"]) == ({}, 2, 2)


def test_a_dry_run_says_the_same_and_writes_nothing(story):
    dry = story["dry"]
    assert dry["dry_run"] is True
    assert (dry["redelivered"], dry["superseded"]) == (story["replay"]["redelivered"], story["replay"]["superseded"])
    assert story["bronze_dry"] == 2
    assert story["dry_text"][1:3] == [
        "customer: would re-deliver 1 row into bronze.raw_customers with _load_id '__replay__'",
        "customer: 2 rows not re-delivered: their key is held by a row bronze delivers, or by a later replayed row; "
        "would stay open, re-stamped (superseded)",
    ]


def test_the_losers_stay_open_marked_superseded(story):
    marked = story["marked"]
    assert marked["k1"] == (True, None, ["(superseded)"])
    assert marked["j1"] == (True, None, ["(superseded)"])
    # the re-delivered one keeps its account until the build judges it
    assert marked["j2"] == (True, None, ["tier_in_set"])


def test_the_next_builds_pass_and_admit_one_row_per_key(story):
    assert story["build"][0], story["build"]
    assert story["next_build"][0], story["next_build"]
    assert story["entity"] == [("C", "c0", "l1"), ("J", "j2", "__replay__"), ("K", "k3", "l3")]
    after = story["after"]
    assert after["j2"][:2] == (False, "admitted") and after["k3"][:2] == (False, "admitted")
    # the superseded rows are untouched by the build: open, marked, history until retention
    assert after["k1"] == (True, None, ["(superseded)"]) and after["j1"] == (True, None, ["(superseded)"])


def test_a_second_replay_re_delivers_nothing(story):
    said = story["again"]
    assert (said["redelivered"], said["superseded"]) == ({}, 2)
