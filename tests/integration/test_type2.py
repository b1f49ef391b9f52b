"""Type-2 entities on every target: the history versions the kept rows (dbt snapshots, SQLMesh
SCD_TYPE_2_BY_COLUMN), a child probes only the parent's current versions, so history never
fans a child row out, a quarantined newest delivery closes the last admitted version, and a row
without a key, which no history can version, is quarantined by the implicit `customer_id_not_null`
rule (decision 0416): counted in the mart under that rule, in the reject table, and explained as such.
A customer that leaves the feed keeps only a closed version, and explain says so (decision 0968).

The README's shop spec, three builds per target (the `runner` fixture). DuckDB, and Spark
(tests/integration/test_spark_type2.py), where the history is the `assay_history` model instead
of dbt's snapshot (decision 0807): the versioning is otherwise each framework's own engine-neutral
SQL, and on PostgreSQL the kitchen-sink suite (tests/integration/test_kitchen_sink.py) builds a
type-2 parent on every target already; three builds more per engine would cost about a minute each.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
META = ["_load_id", "_ingested_at", "_source_row_id"]
CUST_COLS = META + ["id", "email", "country", "tier", "signed_up", "phone"]
ORDER_COLS = META + ["order_ref", "customer", "ts", "state", "price", "discount"]
A1 = ["l1", "2026-01-05T08:00:00Z", "a1", "c1", "a@x.io", "gb", "1", "2024-01-01", "+44 1"]
A2 = ["l1", "2026-01-05T08:00:00Z", "a2", "c2", "b@x.io", "us", "1", "2024-01-01", None]
A3 = ["l2", "2026-01-06T08:00:00Z", "a3", "c1", "a@x.io", "gb", "2", "2024-01-01", None]
A4 = ["l3", "2026-01-07T08:00:00Z", "a4", "c1", "a@x.io", "gb", "3", "2024-01-01", None]
A5 = ["l3", "2026-01-07T08:00:00Z", "a5", "c2", "b@x.io", "us", "nine", "2024-01-01", "+1 5"]
# a customer without an id: no history can version it, so it is quarantined (decision 0416)
A0 = ["l1", "2026-01-05T08:00:00Z", "a0", None, "n@x.io", "fr", "1", "2024-01-01", None]
# c3 leaves the feed before the last build: its version is closed (decision 0415)
A6 = ["l1", "2026-01-05T08:00:00Z", "a6", "c3", "c@x.io", "de", "1", "2024-01-01", None]
# c1 changes tier twice over two more builds; c2 is quarantined by a bad tier in the last one
BATCHES = ((A0, A1, A2, A6), (A0, A1, A2, A3, A6), (A0, A1, A2, A3, A4, A5))


def customers(*rows):
    return Relation("raw_customers", CUST_COLS, [list(r) for r in rows])


def orders():
    return Relation("raw_orders", ORDER_COLS, [
        ["l1", "2026-01-05T08:30:00Z", "o1", "O-1", "c1", "2026-01-04T10:00:00Z", "paid", "10.00", "0"],
        ["l1", "2026-01-05T08:30:00Z", "o2", "O-2", "c2", "2026-01-04T10:00:00Z", "paid", "20.00", "0"],
    ])


@pytest.fixture(scope="module")
def type2_spec() -> Path:
    """The spec the suite builds (an engine's module may override it)."""
    return EXAMPLE


@pytest.fixture(scope="module")
def history(runner, engine, type2_spec, tmp_path_factory) -> dict:
    """What the three builds left, read back once after the last one."""
    runner.require(engine)
    if engine.id not in ("duckdb", "spark"):
        pytest.skip("type-2 history is built on DuckDB; on PostgreSQL the kitchen-sink suite builds a type-2 parent on every "
                    "target (test_type2_parent_and_quarantined_products)")
    project = runner.project(engine, tmp_path_factory.mktemp(f"type2_{runner.target}"), type2_spec, "type2")
    builds = []
    found = {}
    try:
        for batch in BATCHES:
            project.load_bronze([customers(*batch), orders()])
            build = runner.build(project)
            assert build.ok, build.log
            builds.append(build)
        found = {
            "runner": runner,
            "builds": builds,
            "versions": project.query(
                f'select customer_id, tier, {runner.valid_to} is null from silver."customer" order by customer_id, tier'),
            "valid_from": dict(project.query(
                f"select tier, {runner.valid_from} from silver.\"customer\" where customer_id = 'C1'")),
            "orders": project.query('select order_id, customer_id, _quality_flags from silver."order" order by order_id'),
            "keyless": (project.query('select count(*) from silver.customer__current where customer_id is null'),
                        project.query('select count(*) from silver."customer" where customer_id is null')),
            "rejects": project.query(
                "select _source_row_id, failed_rules, raw from silver.customer__reject where resolved_at is null "
                "order by _source_row_id"),
            "mart": project.query(
                "select rule, disposition, rows_evaluated, rows_failed, rows_quarantined, rows_deduped "
                f"from gold.mart_data_quality where entity = 'customer' and run_id = '{builds[-1].run_id}' "
                "and rule in ('(entity)', 'customer_id_not_null', 'tier_coercible') order by rule"),
            "staged": project.query(
                "select _source_row_id, _route from silver.customer__staged order by _source_row_id"),
        }
    finally:
        runner.close(project)
    if engine.id == "duckdb":  # the command opens the warehouse itself, once the builds' connection is closed
        found["explain"] = CliRunner().invoke(cli, [
            "explain", "customer", "--source-row-id", "a0", "--project", str(project.path), "--spec", str(type2_spec)])
        found["explain_gone"] = CliRunner().invoke(cli, [
            "explain", "customer", "C3", "--project", str(project.path), "--spec", str(type2_spec)])
        found["explain_closed"] = CliRunner().invoke(cli, [
            "explain", "customer", "C2", "--json", "--project", str(project.path), "--spec", str(type2_spec)])
    return found


def test_history_is_versioned(history):
    # C2's newest delivery is quarantined: its older clean version is closed, not left current (001:
    # a corrupt latest row is never silently replaced by a stale clean one; decision 0415)
    # C3 left the feed: bronze is the source of truth, so its version is closed too (0415)
    assert history["versions"] == [("C1", 1, False), ("C1", 2, False), ("C1", 3, True), ("C2", 1, False),
                                   ("C3", 1, False)]


def test_a_row_without_a_key_is_quarantined_under_its_rule(history):
    # A merge on the key never matches a NULL, so no history can version it: the implicit
    # `customer_id_not_null` rule quarantines it on every build, so it is neither kept (where
    # the history would have to leave it out) nor versioned, and its reject row says why.
    assert history["keyless"] == ([(0,)], [(0,)])
    assert [(r[0], list(r[1])) for r in history["rejects"]][0] == ("a0", ["customer_id_not_null"])
    # The last build, by hand: six deliveries; C1's a1 and a3 lose to a4, C2's a2 to a5 (3 deduped);
    # a0 (no key), a4 and a5 are judged (3 evaluated); a0 (not_null) and a5 (tier "nine",
    # coercible) are quarantined; a4 alone is kept: 6 = 1 kept + 2 quarantined + 3 deduped.
    assert history["staged"] == [("a0", "quarantined"), ("a1", "deduped"), ("a2", "deduped"), ("a3", "deduped"),
                                 ("a4", "kept"), ("a5", "quarantined")]
    assert history["mart"] == [("(entity)", "(entity)", 3, 0, 2, 3), ("customer_id_not_null", "quarantine", 0, 1, 0, 0),
                               ("tier_coercible", "quarantine", 0, 1, 0, 0)]


def test_explain_says_where_a_row_without_a_key_is(history):
    if "explain" not in history:
        pytest.skip("the operator commands are exercised on DuckDB; the history itself is matched above")
    result = history["explain"]
    assert result.exit_code == 0, result.output
    out = result.output
    # the truth: quarantined to the reject table under the rule, not "in the entity, not yet published"
    assert "It is not in the entity: its judged delivery a0 was quarantined to the reject table. 1 open reject row." in out
    assert "quarantined because customer_id_not_null (quarantine) fired" in out
    assert "failed rules: customer_id_not_null" in out
    assert "not yet" not in out and "not published" not in out


def test_explain_says_a_key_that_left_the_feed_has_only_closed_versions(history):
    if "explain_gone" not in history:
        pytest.skip("the operator commands are exercised on DuckDB; the history itself is matched above")
    result = history["explain_gone"]
    out = result.output
    # C3 is in silver.customer (one closed version): found, so exit 0, and not "not in bronze or
    # reject rows ... as delivered after its transforms", which says the key was typed wrong
    assert result.exit_code == 0, out
    assert "customer customer_id='C3': no delivery of it is in bronze as of the last build" in out
    assert ("It is not in the entity: its history silver.customer holds 1 closed version of it and no current one "
            "(a key bronze no longer delivers has no current version: decision 0415). 0 open reject rows.") in out
    assert "typed" not in out and "as delivered after its transforms" not in out


def test_explain_counts_only_a_current_version_as_in_the_entity(history):
    if "explain_closed" not in history:
        pytest.skip("the operator commands are exercised on DuckDB; the history itself is matched above")
    result = history["explain_closed"]
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    # C2's newest delivery is quarantined and its one version closed (0415): the history holds the
    # key, but no version of it is current, so it is not in the entity, as the summary says
    assert found["in_entity"] is False
    assert "It is not in the entity: its judged delivery a5 was quarantined to the reject table." in found["summary"][1]


def test_probes_read_current_versions(history):
    # Three versions of C1 do not triple O-1. C2 has no current version (its newest delivery is
    # quarantined), so O-2 is an orphan (001: a quarantined parent counts as absent): unknown member.
    assert [(r[0], r[1], list(r[2])) for r in history["orders"]] == [
        ("O-1", "C1", []), ("O-2", "__unknown__", ["order_of_customer_referential"])]


def test_a_quarantined_delivery_closes_the_last_admitted_version(history):
    # The newest C2 delivery is quarantined; the history closes the last admitted version (dbt's
    # hard_deletes: invalidate, SQLMesh's invalidate_hard_deletes; see test_history_is_versioned),
    # and the reject row says why.
    rej = history["rejects"]
    assert [(r[0], list(r[1])) for r in rej] == [("a0", ["customer_id_not_null"]), ("a5", ["tier_coercible"])]
    # `redact: [$.phone]`: the reject payload never holds the phone number
    assert '"phone"' not in rej[1][2] and '"tier":"nine"' in rej[1][2].replace(" ", "")


def test_a_version_is_valid_from_the_run_that_saw_it(history):
    executed = [b.executed_at for b in history["builds"]]
    if None in executed:
        pytest.skip(f"{history['runner'].target} stamps a version with the wall clock of its run; there is no injected "
                    "execution time to compare with")
    # compared with the plans' own execution times, so no calendar date or year boundary matters
    valid_from = history["valid_from"]
    for tier, at in zip((1, 2, 3), executed):
        assert at - timedelta(days=1) < valid_from[tier] <= at, tier


# A type-2 entity without `quarantine:` has no reject table to divert a keyless row to: the
# implicit `not_null` of its key is `fail` there, so such a row stops the build (decision 0416).
PARCEL_SPEC = {
    "assay.yml": "name: parcels\nspecs: spec\nschemas: {bronze: bronze, silver: silver, gold: gold, meta: assay_meta}\n",
    "spec/entities.yml": """spec_version: 1
entities:
  parcel:
    grain: one row per parcel, versioned
    key: [parcel_id]
    scd: type2
    fields:
      parcel_id: {type: string}
      city: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
""",
    "spec/parcels.yml": """mapping_version: 1
source: raw_parcels
target: parcel
key: {parcel_id: {from: "$.id"}}
fields:
  city: {from: "$.city"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
}
PARCEL_COLS = META + ["id", "city"]
P1 = ["l1", "2026-03-01T00:00:00Z", "r1", "P1", "Koeln"]
P0 = ["l1", "2026-03-01T00:00:00Z", "r2", None, "Paris"]


@pytest.fixture(scope="module")
def without_quarantine(runner, engine, tmp_path_factory) -> dict:
    """A keyless parcel stops the first build; the second, without it, publishes."""
    runner.require(engine)
    if engine.id != "duckdb":
        pytest.skip("a fail rule's stop is the same on every engine (tests/integration/test_stopped_builds_dbt.py)")
    spec = tmp_path_factory.mktemp(f"parcel_spec_{runner.target}")
    for name, text in PARCEL_SPEC.items():
        (spec / name).parent.mkdir(parents=True, exist_ok=True)
        (spec / name).write_text(text)
    project = runner.project(engine, tmp_path_factory.mktemp(f"parcel_{runner.target}"), spec, "parcel")
    try:
        project.load_bronze([Relation("raw_parcels", PARCEL_COLS, [P1, P0])])
        stopped = runner.build(project)
        project.load_bronze([Relation("raw_parcels", PARCEL_COLS, [P1])])
        fixed = runner.build(project)
        return {"stopped": stopped, "fixed": fixed, "history": project.query('select parcel_id, city from silver."parcel"')}
    finally:
        runner.close(project)


def test_without_quarantine_a_row_without_a_key_stops_the_build(without_quarantine):
    stopped = without_quarantine["stopped"]
    assert not stopped.ok
    assert [s.check for s in stopped.stopped] == ["assay_fail_rule"], stopped.stopped
    assert "parcel_id_not_null" in repr(stopped.stopped[0]) + stopped.log
    fixed = without_quarantine["fixed"]
    assert fixed.ok, fixed.log
    assert without_quarantine["history"] == [("P1", "Koeln")]
