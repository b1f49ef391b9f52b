"""Successive loads into one bronze, a real `dbt build` after each, judged against the oracle.

The suite runs once per engine (the `engine` fixture: DuckDB, PostgreSQL 18, PostgreSQL 15); one
dbt project per engine lives for the whole module. Bronze is replaced before every build by
its cumulative state: a re-delivery keeps its `_source_row_id` and overwrites the older copy,
as an upserting loader does. The story the loads tell (each step's comment says which part of
001 it exercises) is also spot-checked by hand below, so that the oracle and the product
agreeing on something wrong would still be caught.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
import pytest

from assay.api import generate_dbt_project
from tests.support.corpus import Relation
from tests.support.dbtproject import DbtProject
from tests.support.oracle import Warehouse, check_resolution_stamps, expected_state, observed_state, placements, reject_id

pytestmark = pytest.mark.slow

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "multiload"
META = ["_load_id", "_ingested_at", "_source_row_id"]
COLUMNS = {
    "raw_orders": META + ["id", "customer", "status", "amount", "discount", "qty", "ordered"],
    "raw_customers": META + ["id", "email", "tier", "name", "signup"],
}
T0, T1, T2, T3, T4 = (f"2026-0{m}-{d}T08:00:00Z" for m, d in (("2", "28"), ("3", "01"), ("3", "02"), ("3", "03"), ("3", "04")))


def ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", ""))


def order(srid, id, at, load, *, amount="100.00", discount="5.00", qty="2", ordered="2025-06-01", status="new", customer="c-1"):
    return ("raw_orders", {"_load_id": load, "_ingested_at": at, "_source_row_id": srid, "id": id, "customer": customer,
                           "status": status, "amount": amount, "discount": discount, "qty": qty, "ordered": ordered})


def customer(srid, id, at, load, *, email, tier="G", name="ann", signup="2024-01-01"):
    return ("raw_customers", {"_load_id": load, "_ingested_at": at, "_source_row_id": srid, "id": id, "email": email,
                              "tier": tier, "name": name, "signup": signup})


@dataclass
class Step:
    label: str
    deliveries: list
    args: tuple = ()
    widen_status: bool = False  # regenerate the project with `lost` added to status's in_set first


STEPS = [
    Step("load1", [
        order("o01", "A1", T1, "l1"),
        order("o02", "A2", T1, "l1", amount="12,50"),  # a cast failure
        order("o03", "A3", T1, "l1", status=" Lost ", amount="6000"),  # quarantine beats flag; both recorded
        order("o04", "A4", T1, "l1", ordered="2019-05-05", qty="0", discount="50.00", amount="20.00"),  # three flags, kept
        order("o05", "A5", T1, "l1", amount="10"),
        order("o06", "A5", T1, "l1", amount="11"),  # same instant, same load: the higher _source_row_id wins
        order("o07", "A6", T1, "l1", ordered="2025-02-30"),
        order("o08", "A7", T1, "l1", qty="75"),  # an expression at quarantine
        order("o09", "A8", T1, "l1", ordered=None),  # not_null, not coercible
        customer("c1", " c-1 ", T1, "l1", email=" Ann@X.io "),
        customer("c2", "C-2", T1, "l1", email="bad email"),
        customer("c3", "C-3", T1, "l1", email="c3@x.io", tier="P", name="verylongname"),
        customer("c4", "C-4", T1, "l1", email="dup@x.io", name="bo"),
        customer("c5", "C-5", T1, "l1", email="dup@x.io", name="cy"),
        customer("c6", "C-6", T1, "l1", email="c6@x.io", name="", signup="2024-13-01"),
    ]),
    Step("load2", [
        order("o02", "A2", T2, "l2", amount="12.50"),  # corrected: its reject row resolves as admitted
        order("o03", "A3", T2, "l2", status="lost", amount="60"),  # still wrong, for one reason fewer
        order("o10", "A1", T2, "l2", amount="abc"),  # a corrupt newer delivery evicts the clean o01
        order("o11", "A9", T0, "l2"),  # late
        order("o12", "A5", T0, "l2", amount="9"),  # out of order: delivered later, older, loses to o06
        order("o13", "A10", T2, "l2b"),  # exact tie on _ingested_at: the higher _load_id wins...
        order("o14", "A10", T2, "l2", amount="x"),  # ...over a higher _source_row_id; a corrupt loser is never judged
        customer("c2", "C-2", T2, "l2", email="c2@x.io"),
        customer("c3", "C-3", T2, "l2", email="c3@x.io", tier="S", name="verylongname"),  # admitted with a flag
        customer("c7", "C-7", T2, "l2", email="c7@x.io"),
    ]),
    Step("load3_full_refresh", [
        order("o10", "A1", T3, "l3", amount="80.00"),  # the evicting row is fixed in place
        order("o07", "A6", T3, "l3", ordered="2025-02-28", qty="99"),  # fixed one way, broken another
        customer("c6", "C-6", T3, "l3", email="c6@x.io", name="dee", signup="2024-13-01"),
        customer("c8", "C-8", T3, "l3", email="C8@X.IO", tier="B", signup="2024-02-29"),
    ], args=("--full-refresh",)),
    Step("rule_change", [], widen_status=True),
    Step("load4", [
        order("o16", "A6", T4, "l4"),  # o07 loses its key: resolved as deduped
        order("o05", "A5", T4, "l4", amount="1.2.3"),  # re-delivered corrupt: now newest, evicts o06
        order("o02", "A2", T4, "l4", amount="-1"),  # resolved once, wrong again: the same reject row reopens
        order("o17", "A11", T4, "l4"),
        order("o18", "A11", T4, "l4", status="void"),
        customer("c5", "C-5", T4, "l4", email="c5@x.io", name="cy"),  # c4 and c5 stop sharing an email
    ]),
    Step("rerun", []),  # the same bronze again: nothing moves
]
LABELS = [s.label for s in STEPS]


class Bronze:
    def __init__(self):
        self.tables: dict[str, dict] = {name: {} for name in COLUMNS}

    def deliver(self, deliveries) -> None:
        for relation, row in deliveries:
            self.tables[relation][row["_source_row_id"]] = row

    def rows(self) -> dict:
        return {name: [dict(r) for r in rows.values()] for name, rows in self.tables.items()}

    def relations(self) -> list[Relation]:
        return [Relation(name, COLUMNS[name], [[r[c] for c in COLUMNS[name]] for r in rows.values()])
                for name, rows in self.tables.items()]


@dataclass
class Observation:
    label: str
    returncode: int
    log: str
    expected: dict = field(default_factory=dict)
    observed: dict = field(default_factory=dict)
    places: dict = field(default_factory=dict)
    resolved_at: dict = field(default_factory=dict)  # reject_id -> resolved_at as read back
    resolved_in: dict = field(default_factory=dict)  # reject_id -> the build that resolved it, per the oracle
    mart_runs: int = 0  # distinct run ids in the mart after this build


def run_id(project: DbtProject) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def widened_spec(dst: Path) -> Path:
    shutil.copytree(SPEC, dst)
    path = dst / "mapping_orders.yaml"
    text = path.read_text()
    assert "values: [new, paid, shipped]" in text
    path.write_text(text.replace("values: [new, paid, shipped]", "values: [new, paid, shipped, lost]"))
    return dst


@pytest.fixture(scope="module")
def history(tmp_path_factory, engine) -> dict:
    root = tmp_path_factory.mktemp(f"multiload_{engine.id}")
    project = engine.dbt_project(root / "project", SPEC, "multiload_dbt")
    wh = Warehouse(SPEC)
    bronze = Bronze()
    out: dict[str, Observation] = {}
    spec = SPEC
    for step in STEPS:
        if step.widen_status:
            spec = widened_spec(root / "spec_widened")
            result = generate_dbt_project(spec, project.path)
            assert not result.report.conflicts, result.report.conflicts
            wh.respec(spec)
        bronze.deliver(step.deliveries)
        project.load_bronze(bronze.relations())
        proc = project.dbt("build", *step.args)
        obs = Observation(step.label, proc.returncode, proc.stdout[-6000:] + proc.stderr[-2000:])
        out[step.label] = obs
        if proc.returncode != 0:
            break  # what follows would be judged against a warehouse the oracle no longer describes
        build = wh.build(bronze.rows())
        obs.expected = expected_state(wh, build)
        obs.observed = observed_state(project.query, spec, run_id(project))
        obs.places = placements(project.query, spec, bronze.rows())
        obs.mart_runs = project.query("select count(distinct run_id) from gold.mart_data_quality")[0][0]
        for e in wh.spec.entities:
            obs.resolved_at.update(project.query(f'select reject_id, resolved_at from silver."{e.name}__reject"'))
        obs.resolved_in = {rid: r.resolved_in for rid, r in wh.ledger.rows.items()}
    out["_project"] = project
    out["_warehouse"] = wh
    return out


def step(history, label) -> Observation:
    obs = history.get(label)
    assert obs is not None, f"build {label} never ran: an earlier build failed"
    assert obs.returncode == 0, f"dbt build at {label} failed:\n{obs.log}"
    return obs


# --------------------------------------------------------------------------- every build, against the oracle


@pytest.mark.parametrize("label", LABELS)
def test_conservation(history, label):
    obs = step(history, label)
    misplaced = {k: v for k, v in obs.places.items() if len(v) != 1}
    assert not misplaced, "each bronze row must be in exactly one of entity, unresolved reject, deduped"


@pytest.mark.parametrize("label", LABELS)
def test_entity_rows_and_flags(history, label):
    obs = step(history, label)
    assert obs.observed["entity"] == obs.expected["entity"]


@pytest.mark.parametrize("label", LABELS)
def test_staged_rank_route_and_fired_rules(history, label):
    obs = step(history, label)
    assert obs.observed["staged"] == obs.expected["staged"]


@pytest.mark.parametrize("label", LABELS)
def test_reject_rows(history, label):
    obs = step(history, label)
    assert obs.observed["reject"] == obs.expected["reject"]


@pytest.mark.parametrize("label", LABELS)
def test_mart_rows_of_the_run(history, label):
    obs = step(history, label)
    assert obs.observed["mart"] == obs.expected["mart"]


def test_resolved_at_is_stamped_by_the_resolving_build_and_then_left_alone(history):
    check_resolution_stamps(
        (label, n, step(history, label).resolved_in, step(history, label).resolved_at)
        for n, label in enumerate(LABELS, start=1))


# --------------------------------------------------------------------------- the story, by hand


def _reject(history, label, relation, srid):
    obs = step(history, label)
    rid = reject_id(relation, srid)
    for rows in obs.observed["reject"].values():
        for r in rows:
            if r[0] == rid:
                return {"failed_rules": r[8], "first_seen": r[6], "last_seen": r[7], "open": r[12], "resolution": r[13], "load_id": r[5]}
    return None


def _entity_srids(history, label, entity):
    return {r[1] for r in step(history, label).observed["entity"][entity]}


def test_story_load1(history):
    assert _entity_srids(history, "load1", "orders") == {"o01", "o04", "o06"}
    assert _reject(history, "load1", "raw_orders", "o03")["failed_rules"] == ("amount_range_max", "status_in_set")
    a4 = next(r for r in step(history, "load1").observed["entity"]["orders"] if r[1] == "o04")
    assert a4[-2:] == (("discount_within_amount", "order_date_range_min", "quantity_range_min"), False)
    assert _entity_srids(history, "load1", "customers") == {"c1", "c4", "c5"}
    assert _reject(history, "load1", "raw_customers", "c3")["failed_rules"] == ("name_length_max", "tier_in_enum")


def test_story_load2(history):
    o02 = _reject(history, "load2", "raw_orders", "o02")
    assert (o02["open"], o02["resolution"], o02["last_seen"]) == (False, "admitted", ts(T1))
    o03 = _reject(history, "load2", "raw_orders", "o03")
    assert (o03["open"], o03["failed_rules"], o03["first_seen"], o03["last_seen"]) == (True, ("status_in_set",), ts(T1), ts(T2))
    orders = _entity_srids(history, "load2", "orders")
    assert "o01" not in orders and "o10" not in orders  # A1 is gone: the newest delivery is corrupt
    assert {"o11", "o06", "o13"} <= orders and not {"o12", "o14"} & orders
    assert _reject(history, "load2", "raw_orders", "o14") is None
    assert _reject(history, "load2", "raw_customers", "c3")["resolution"] == "admitted"


def test_full_refresh_keeps_reject_history(history):
    before = step(history, "load2").observed["reject"]
    after = step(history, "load3_full_refresh").observed["reject"]
    before_ids = {r[0] for rows in before.values() for r in rows}
    after_ids = {r[0] for rows in after.values() for r in rows}
    assert before_ids <= after_ids
    o07 = _reject(history, "load3_full_refresh", "raw_orders", "o07")
    assert (o07["open"], o07["failed_rules"], o07["first_seen"], o07["last_seen"]) == (True, ("quantity_sane",), ts(T1), ts(T3))
    assert _reject(history, "load3_full_refresh", "raw_orders", "o10")["resolution"] == "admitted"
    assert _reject(history, "load3_full_refresh", "raw_orders", "o02")["resolution"] == "admitted"  # resolved before, still
    # the mart kept its earlier runs too
    assert step(history, "load3_full_refresh").mart_runs == LABELS.index("load3_full_refresh") + 1


def test_rule_change_resolves_rows_that_now_pass(history):
    o03 = _reject(history, "rule_change", "raw_orders", "o03")
    assert (o03["open"], o03["resolution"], o03["failed_rules"], o03["first_seen"]) == (False, "admitted", ("status_in_set",), ts(T1))
    assert "o03" in _entity_srids(history, "rule_change", "orders")
    still_open = {r[4] for r in step(history, "rule_change").observed["reject"]["orders"] if r[12]}
    assert still_open == {"o07", "o08", "o09"}


def test_story_load4(history):
    o07 = _reject(history, "load4", "raw_orders", "o07")
    assert (o07["open"], o07["resolution"]) == (False, "deduped")
    o02 = _reject(history, "load4", "raw_orders", "o02")
    assert (o02["open"], o02["resolution"], o02["first_seen"], o02["last_seen"], o02["load_id"]) == (True, None, ts(T1), ts(T4), "l4")
    assert o02["failed_rules"] == ("amount_range_min", "discount_within_amount")
    orders = _entity_srids(history, "load4", "orders")
    assert "o06" not in orders and "o05" not in orders and "o18" not in orders and "o17" not in orders
    flags = {r[1]: r[-2] for r in step(history, "load4").observed["entity"]["customers"]}
    assert flags["c4"] == () and flags["c5"] == ()


def test_rerun_moves_nothing(history):
    before, after = step(history, "load4"), step(history, "rerun")
    assert after.observed["reject"] == before.observed["reject"]
    assert after.resolved_at == before.resolved_at
    assert after.observed["entity"] == before.observed["entity"]


# --------------------------------------------------------------------------- found while writing these
#
# These rebuild the module's project after `history` recorded every observation (they request
# it, so it is complete before they run); each loads a bronze of its own and reads only rows it
# delivered, so they hold in any order.


def test_ingested_at_offsets_are_instants_in_the_dedupe_order(history):
    project: DbtProject = history["_project"]
    bronze = Bronze()
    bronze.deliver([
        order("oz0", "Z1", "2026-03-05T11:00:00Z", "l5"),
        order("oz1", "Z1", "2026-03-05T13:00:00+03:00", "l5"),  # the same load, an hour older
    ])
    bronze.deliver([customer("cz", "C-Z", T1, "l5", email="z@x.io")])
    project.load_bronze(bronze.relations())
    project.dbt("build", check=True)
    routes = dict(project.query("select _source_row_id, _route from silver.orders__staged"))
    assert routes == {"oz0": "kept", "oz1": "deduped"}


def _build_or_raise(project: DbtProject, expect_success: bool = True):
    # RuntimeError, not AssertionError: a set-up that goes wrong must not pass as the expected failure.
    proc = project.dbt("build")
    if (proc.returncode == 0) is not expect_success:
        raise RuntimeError(f"set-up: dbt build returned {proc.returncode}:\n{proc.stdout[-4000:]}")
    return proc


def test_a_build_whose_entity_is_not_published_resolves_nothing(history):
    project: DbtProject = history["_project"]
    bronze = Bronze()
    bronze.deliver([
        order("ok1", "K1", T1, "l6"),
        customer("k1", "C-K1", T1, "l6", email="bad email"),  # quarantined
        customer("k2", "C-K2", T1, "l6", email="k2@x.io"),
    ])
    project.load_bronze(bronze.relations())
    _build_or_raise(project)
    # Corrected, but now claiming C-K2's key: customers does not dedupe, so KEY_UNIQUE stops the publish.
    bronze.deliver([customer("k1", "C-K2", T2, "l7", email="k1@x.io")])
    project.load_bronze(bronze.relations())
    _build_or_raise(project, expect_success=False)
    published = {s for (s,) in project.query('select _source_row_id from silver."customers"')}
    if published != {"k2"}:
        raise RuntimeError(f"set-up: the failed build should have left the entity as it was, found {published}")
    state = project.query(
        "select resolved_at, resolution from silver.customers__reject "
        f"where reject_id = '{reject_id('raw_customers', 'k1')}'"
    )
    assert state == [(None, None)], "k1 was never admitted: its reject row must stay open"


KEYWORD_ENTITY = """
spec_version: 1
entities:
  readings:
    grain: one row per reading
    key: [id]
    fields:
      id: {type: string, required: true}
      at: {type: timestamp}
      pivot: {type: string}
      show: {type: string}
      returning: {type: int}
    dedupe: {keep: latest_by, field: at, tie_break: [_load_id]}
    quarantine: {retention: 7d}
"""
KEYWORD_MAPPING = """
mapping_version: 1
source: raw_readings
target: readings
key:
  id: {from: "$.id"}
fields:
  at: {from: "$.ts", transform: [{parse_ts: ISO8601}]}
  pivot:
    from: "$.p"
    quality:
      - {rule: in_set, values: [a, b], on_fail: quarantine}
  show: {from: "$.s"}
  returning:
    from: "$.r"
    transform: [to_int]
    quality:
      - {rule: range, max: 10, on_fail: flag}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def test_fields_named_like_sql_keywords_build(tmp_path, engine):
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entity.yaml").write_text(KEYWORD_ENTITY.lstrip())
    (spec / "mapping.yaml").write_text(KEYWORD_MAPPING.lstrip())
    project = engine.dbt_project(tmp_path / "project", spec, "keywords")  # raises (not AssertionError) if the spec were refused
    cols = META + ["id", "ts", "p", "s", "r"]
    project.load_bronze([Relation("raw_readings", cols, [["l1", T1, "r1", "R1", "2026-03-01T09:00:00Z", "a", "x", "12"]])])
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert project.query('select id, "returning", _quality_flags from silver.readings') == [("R1", 12, ["returning_range_max"])]
