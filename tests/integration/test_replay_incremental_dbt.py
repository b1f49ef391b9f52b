"""Replay onto a `materialized: incremental` entity, then a plain `dbt build` (no full refresh).

Reference 001: replay re-runs the current mapping against `raw` for unresolved rows and merges
the passers into the entity by key; the reject row of a row that now passes is resolved, and the
conservation law holds after every build. An incremental entity's ledger does not judge a row
twice, so the next build must take what replay re-delivers as new, whether the quarantined
delivery aged out of bronze (e2) or is still there (e5), and a re-delivered row keeps its original
`_ingested_at`, which is older than the ledger's window (decision 1100).

SQLMesh refuses incremental entities (decision 0207), so this story is dbt's only. It runs once
per engine (the `engine` fixture: DuckDB and PostgreSQL 18), so replay's and the ledger's
PostgreSQL SQL runs too. Every expected row below is written by hand from 001's rules and
decisions 0014 and 0301.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.integration.test_redelivery_dbt import delivery_places
from tests.support.corpus import Relation
from tests.support.dbtproject import DbtProject

pytestmark = pytest.mark.slow
# DuckDB only: on PostgreSQL 18 replay is judged by test_replay_dbt and the multi-load story, and the
# incremental entity's builds (ledger, late window, full refresh) by test_incremental_dbt.
ENGINE_IDS = ("duckdb",)

ENTITIES = """\
spec_version: 1
entities:
  events:
    grain: one row per event
    key: [event_id]
    materialized: incremental
    fields:
      event_id: {type: string, required: true}
      kind: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 30d}
"""
MAPPING = """\
mapping_version: 1
source: raw_events
target: events
key:
  event_id: {from: "$.id", transform: [trim]}
fields:
  kind:
    from: "$.kind"
    transform: [trim, lower]
    quality:
      - {rule: in_set, values: [click, view], on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
FIXED = MAPPING.replace("values: [click, view]", "values: [click, view, scroll]")
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "kind"]
T1, T2 = "2026-03-01T08:00:00Z", "2026-03-02T08:00:00Z"


def ev(srid, load, at, id, kind):
    return [load, at, srid, id, kind]


L1 = [ev("e1", "l1", T1, "E1", "click"), ev("e2", "l1", T1, "E2", "scroll"), ev("e3", "l1", T1, "E3", "view")]
L2 = [ev("e4", "l2", T2, "E4", "click"), ev("e5", "l2", T2, "E5", "scroll")]
E, R, D = "entity", "reject", "deduped"
OPEN, ADMITTED = (True, None), (False, "admitted")


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", ""))


def _state(project: DbtProject) -> dict:
    q = project.query
    rejects = {}
    for srid, first, last, load, rules, key_values, is_open, resolution in q(
        "select _source_row_id, first_seen, last_seen, _load_id, failed_rules, key_values, resolved_at is null, resolution "
        "from silver.events__reject"
    ):
        rejects[srid] = (first, last, load, list(rules), json.loads(key_values)["event_id"], is_open, resolution)
    return {
        "entity": {k: (s, l) for k, s, l in q("select event_id, _source_row_id, _load_id from silver.events")},
        "rejects": rejects,
        "places": delivery_places(q, "raw_events", "events"),
        "stamps": dict(q("select _source_row_id, resolved_at from silver.events__reject")),
    }


def _build(project: DbtProject, rows: list) -> dict:
    project.load_bronze([Relation("raw_events", COLS, rows)])
    proc = project.dbt("build")
    assert proc.returncode == 0, f"dbt build failed:\n{proc.stdout[-6000:]}"
    state = _state(project)
    misplaced = {k: v for k, v in state["places"].items() if len(v) != 1}
    assert misplaced == {}, "conservation: each bronze delivery is in exactly one place"
    return state


def _bronze(project: DbtProject) -> list:
    return sorted(tuple(r) for r in project.query(
        "select _load_id, _ingested_at, _source_row_id, id, kind from bronze.raw_events"))


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine) -> dict:
    root = tmp_path_factory.mktemp(f"replay_incremental_{engine.id}")
    spec = root / "spec"
    spec.mkdir()
    (spec / "entities.yaml").write_text(ENTITIES)
    (spec / "mapping_events.yaml").write_text(MAPPING)
    project = engine.dbt_project(root / "project", spec, "replay_incremental")
    out = {"first": _build(project, L1)}
    # Bronze retention drops load l1; e2's reject row stays open, as history. e5 is quarantined
    # and stays in bronze.
    out["aged"] = _build(project, L2)
    # The spec is fixed (`scroll` becomes a kind), then replay, then a plain build.
    (spec / "mapping_events.yaml").write_text(FIXED)
    generate_dbt_project(spec, project.path)
    args = ["replay", "events", "--spec", str(spec), "--project", str(project.path), "--json"]
    res = CliRunner().invoke(cli, [*args[:-1], "--dry-run"])
    assert res.exit_code == 0, res.output
    out["dry_text"] = res.stdout.splitlines()
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out["replay"] = json.loads(res.stdout)
    out["bronze_after_replay"] = _bronze(project)
    proc = project.dbt("build")
    assert proc.returncode == 0, f"the plain build after replay failed:\n{proc.stdout[-6000:]}"
    out["replayed"] = _state(project)
    # Nothing new: a second build and a second replay change nothing.
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-6000:]
    out["again"] = _state(project)
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out["replay_again"] = json.loads(res.stdout)
    out["bronze_after_second_replay"] = _bronze(project)
    return out


def test_before_the_fix_the_rows_are_quarantined(story):
    assert story["first"]["entity"] == {"E1": ("e1", "l1"), "E3": ("e3", "l1")}
    assert story["first"]["rejects"] == {"e2": (ts(T1), ts(T1), "l1", ["kind_in_set"], "E2", *OPEN)}
    # the ledger keeps what bronze retention dropped (docs/incremental.md)
    assert story["aged"]["entity"] == {"E1": ("e1", "l1"), "E3": ("e3", "l1"), "E4": ("e4", "l2")}
    assert story["aged"]["rejects"] == {
        "e2": (ts(T1), ts(T1), "l1", ["kind_in_set"], "E2", *OPEN),
        "e5": (ts(T2), ts(T2), "l2", ["kind_in_set"], "E5", *OPEN),
    }


def test_replay_redelivers_every_open_reject_an_incremental_build_would_not_judge(story):
    # e2 aged out of bronze; e5 is still there, but the ledger took its delivery once and an
    # incremental build never judges it again: both go back (decision 1100).
    said = story["replay"]
    assert (said["redelivered"], said["in_bronze"], said["needs_full_refresh"], said["superseded"]) == ({"raw_events": 2}, 1, 0, 0)
    # and it says so: e5 is in bronze, not left to the next build, and goes back with e2
    assert story["dry_text"] == [
        "events: 1 open reject row is still in bronze; an incremental entity's next build does not judge it again, "
        "so replay re-delivers it with the rows that aged out",
        "events: would re-deliver 2 rows into bronze.raw_events with _load_id '__replay__'",
    ]
    assert story["bronze_after_replay"] == sorted([
        tuple(r) for r in L2 + [ev("e2", "__replay__", T1, "E2", "scroll"), ev("e5", "__replay__", T2, "E5", "scroll")]])


def test_the_plain_build_admits_the_replayed_rows(story):
    assert story["replayed"]["entity"] == {
        "E1": ("e1", "l1"), "E3": ("e3", "l1"), "E4": ("e4", "l2"),
        "E2": ("e2", "__replay__"), "E5": ("e5", "__replay__"),
    }


def test_the_plain_build_resolves_their_reject_rows_keeping_the_last_diversion(story):
    assert story["replayed"]["rejects"] == {
        "e2": (ts(T1), ts(T1), "l1", ["kind_in_set"], "E2", *ADMITTED),
        "e5": (ts(T2), ts(T2), "l2", ["kind_in_set"], "E5", *ADMITTED),
    }


def test_conservation_places_every_delivery(story):
    places = {k: v[0] for k, v in story["replayed"]["places"].items()}
    assert places == {
        ("raw_events", "e4", "l2"): E,
        ("raw_events", "e5", "l2"): D,  # superseded by its re-delivery
        ("raw_events", "e2", "__replay__"): E,
        ("raw_events", "e5", "__replay__"): E,
    }


def test_a_second_build_and_replay_change_nothing(story):
    again = story["again"]
    assert (again["entity"], again["rejects"], again["stamps"]) == (
        story["replayed"]["entity"], story["replayed"]["rejects"], story["replayed"]["stamps"])
    said = story["replay_again"]
    assert (said["redelivered"], said["in_bronze"], said["needs_full_refresh"], said["superseded"]) == ({}, 0, 0, 0)
    assert story["bronze_after_second_replay"] == story["bronze_after_replay"]
