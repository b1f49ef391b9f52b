"""A reject row's life when deliveries come and go (reference 001, decisions 0014, 0301, 1110).

Two edge cases of resolution on a full-rebuild entity, run through real builds; the SQLMesh
target runs the same bronze against the same expectations (tests/sqlmesh/test_reject_lifecycle_sqlmesh.py):

- *A quarantined delivery leaves bronze while an older delivery of the same source row stays*
  (a loader that withdrew or replaced the load, or retention by load). The older delivery is
  the source row's latest delivery again and is judged: kept, the reject row resolves `admitted`
  keeping the account of the last diversion (o2, decision 0301); diverted, the reject row
  describes that delivery, the one conservation places (o3, decision 1110).
- *A bad re-delivery reopens a resolved reject row*: the same row, `first_seen` sticky,
  `last_seen` and the rest from the new delivery, `resolved_at` and `resolution` cleared (o1,
  decision 0301); a later good re-delivery resolves it again.

Every expected row is written by hand from those rules; nothing is computed by generator code.
The dbt story runs once per engine (the `engine` fixture: DuckDB and PostgreSQL 18).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from tests.integration.test_redelivery_dbt import delivery_places
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

SPEC_FILES = {
    "entities.yaml": """\
spec_version: 1
entities:
  orders:
    grain: one row per order, the latest delivery wins
    key: [order_id]
    fields:
      order_id: {type: string, required: true}
      status: {type: string}
      amount: {type: "decimal(12,2)"}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 90d}
""",
    "mapping_orders.yaml": """\
mapping_version: 1
source: raw_orders
target: orders
key:
  order_id: {from: "$.id", transform: [trim]}
fields:
  status:
    from: "$.status"
    transform: [trim, lower]
    quality:
      - {rule: in_set, values: [new, paid], on_fail: quarantine}
  amount:
    from: "$.amount"
    transform: [{to_decimal: [12, 2]}]
    quality:
      - {rule: range, min: 0, on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
}
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "status", "amount"]
T1, T2, T3, T4 = "2026-03-01T08:00:00Z", "2026-03-02T08:00:00Z", "2026-03-03T08:00:00Z", "2026-03-04T08:00:00Z"


def order(srid, load, at, id, status="new", amount="10.00"):
    return [load, at, srid, id, status, amount]


O1_L1 = order("o1", "l1", T1, "A1", status="bad")  # quarantined: status_in_set
O2_L1 = order("o2", "l1", T1, "A2")
O3_L1 = order("o3", "l1", T1, "A3", amount="-5")  # quarantined: amount_range_min
O1_L2 = order("o1", "l2", T2, "A1")  # corrected: admitted, o1's reject row resolves
O2_L2 = order("o2", "l2", T2, "A2", status="bad")  # quarantined: A2 leaves the entity
O3_L2 = order("o3", "l2", T2, "A3", status="bad")  # quarantined again, for another reason
O1_L3 = order("o1", "l3", T3, "A1", status="bad")  # broken again: o1's resolved row reopens
O1_L4 = order("o1", "l4", T4, "A1", status="paid")  # corrected again: resolved again

# Bronze as each build sees it. At b3 the quarantined deliveries o2@l2 and o3@l2 have left
# bronze; their earlier deliveries o2@l1 and o3@l1 stay.
BRONZE = {
    "b1": [O1_L1, O2_L1, O3_L1],
    "b2": [O1_L1, O2_L1, O3_L1, O1_L2, O2_L2, O3_L2],
    "b3": [O1_L1, O2_L1, O3_L1, O1_L2, O1_L3],
    "b4": [O1_L1, O2_L1, O3_L1, O1_L2, O1_L3, O1_L4],
}
BUILDS = list(BRONZE)

E, R, D = "entity", "reject", "deduped"
PLACES = {
    "b1": {("o1", "l1"): R, ("o2", "l1"): E, ("o3", "l1"): R},
    "b2": {("o1", "l1"): D, ("o2", "l1"): D, ("o3", "l1"): D, ("o1", "l2"): E, ("o2", "l2"): R, ("o3", "l2"): R},
    # o2@l1 and o3@l1 are their source rows' latest deliveries again
    "b3": {("o1", "l1"): D, ("o2", "l1"): E, ("o3", "l1"): R, ("o1", "l2"): D, ("o1", "l3"): R},
    "b4": {("o1", "l1"): D, ("o2", "l1"): E, ("o3", "l1"): R, ("o1", "l2"): D, ("o1", "l3"): D, ("o1", "l4"): E},
}
ENTITY = {
    "b1": {"A2": ("o2", "l1")},
    "b2": {"A1": ("o1", "l2")},  # A2's only source row is diverted: the key leaves the entity
    "b3": {"A2": ("o2", "l1")},  # A1's latest delivery is diverted: evicted
    "b4": {"A1": ("o1", "l4"), "A2": ("o2", "l1")},
}
# srid -> (first_seen, last_seen, _load_id, failed_rules, key, open, resolution)
OPEN, ADMITTED = (True, None), (False, "admitted")
REJECTS = {
    "b1": {
        "o1": (T1, T1, "l1", ["status_in_set"], "A1", *OPEN),
        "o3": (T1, T1, "l1", ["amount_range_min"], "A3", *OPEN),
    },
    "b2": {
        # resolved, keeping the account of the last diversion (0301)
        "o1": (T1, T1, "l1", ["status_in_set"], "A1", *ADMITTED),
        "o2": (T2, T2, "l2", ["status_in_set"], "A2", *OPEN),
        "o3": (T1, T2, "l2", ["status_in_set"], "A3", *OPEN),
    },
    "b3": {
        # reopened: the same row, first_seen sticky, the rest from the new delivery (0301)
        "o1": (T1, T3, "l3", ["status_in_set"], "A1", *OPEN),
        # the diverted delivery left bronze, the kept earlier one speaks: admitted, keeping the
        # account of the last diversion (0014, 0301)
        "o2": (T2, T2, "l2", ["status_in_set"], "A2", *ADMITTED),
        # the earlier delivery is diverted: the row describes it, the delivery conservation
        # places; first_seen stays (1110)
        "o3": (T1, T1, "l1", ["amount_range_min"], "A3", *OPEN),
    },
    "b4": {
        "o1": (T1, T3, "l3", ["status_in_set"], "A1", *ADMITTED),
        "o2": (T2, T2, "l2", ["status_in_set"], "A2", *ADMITTED),
        "o3": (T1, T1, "l1", ["amount_range_min"], "A3", *OPEN),
    },
}


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", ""))


def expected_rejects(build: str) -> dict:
    return {k: (ts(f), ts(l), load, rules, key, *rest) for k, (f, l, load, rules, key, *rest) in REJECTS[build].items()}


def relations(build: str) -> list[Relation]:
    return [Relation("raw_orders", COLS, BRONZE[build])]


def read_state(q) -> dict:
    """The tables after a build, through `q` (a query function of either target's project)."""
    rejects, stamps = {}, {}
    rows = q("select _source_row_id, first_seen, last_seen, _load_id, failed_rules, key_values, resolved_at is null, "
             "resolution, resolved_at from silver.orders__reject")
    for srid, first, last, load, rules, key_values, is_open, resolution, resolved_at in rows:
        rejects[srid] = (first, last, load, list(rules), json.loads(key_values)["order_id"], is_open, resolution)
        stamps[srid] = resolved_at
    return {
        "entity": {k: (s, l) for k, s, l in q("select order_id, _source_row_id, _load_id from silver.orders")},
        "rejects": rejects,
        "reject_count": len(rows),
        "stamps": stamps,
        "places": {(srid, load): v for (_rel, srid, load), v in delivery_places(q, "raw_orders", "orders").items()},
    }


def check_build(state: dict, build: str) -> None:
    assert {k: v for k, v in state["places"].items() if len(v) != 1} == {}, f"{build}: conservation"
    assert {k: v[0] for k, v in state["places"].items()} == PLACES[build], f"{build}: placements"
    assert state["entity"] == ENTITY[build], f"{build}: entity rows"
    assert state["rejects"] == expected_rejects(build), f"{build}: reject rows"
    assert state["reject_count"] == len(state["rejects"]), f"{build}: one reject row per source row"


def check_stamps(story: dict) -> None:
    """`resolved_at` is stamped by the build that resolves a row and left alone after (0301); a
    reopened row resolved again gets a new stamp."""
    assert story["b3"]["stamps"]["o2"] is not None and story["b4"]["stamps"]["o2"] == story["b3"]["stamps"]["o2"]
    assert story["b2"]["stamps"]["o1"] is not None and story["b3"]["stamps"]["o1"] is None
    assert story["b4"]["stamps"]["o1"] is not None and story["b4"]["stamps"]["o1"] != story["b2"]["stamps"]["o1"]


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine) -> dict:
    root = tmp_path_factory.mktemp(f"reject_lifecycle_{engine.id}")
    spec = root / "spec"
    spec.mkdir()
    for name, text in SPEC_FILES.items():
        (spec / name).write_text(text)
    project = engine.dbt_project(root / "project", spec, "reject_lifecycle")
    out = {}
    for build in BUILDS:
        project.load_bronze(relations(build))
        proc = project.dbt("build")
        assert proc.returncode == 0, f"dbt build at {build} failed:\n{proc.stdout[-6000:]}"
        out[build] = read_state(project.query)
    return out


@pytest.mark.parametrize("build", BUILDS)
def test_every_build_places_and_records_as_the_rules_say(story, build):
    check_build(story[build], build)


def test_resolution_stamps(story):
    check_stamps(story)
