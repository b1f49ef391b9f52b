"""Type-2 entities on every target: the history versions the kept rows (dbt snapshots, SQLMesh
SCD_TYPE_2_BY_COLUMN), a child probes only the parent's current versions, so history never
fans a child row out, a quarantined newest delivery closes the last admitted version, and a row
without a key is kept but never versioned.

The README's shop spec, three builds per target (the `runner` fixture). DuckDB, and Spark
(tests/integration/test_spark_type2.py), where the history is the `assay_history` model instead
of dbt's snapshot (decision 0807): the versioning is otherwise each framework's own engine-neutral
SQL, and on PostgreSQL the kitchen-sink suite (tests/integration/test_kitchen_sink.py) builds a
type-2 parent on every target already; three builds more per engine would cost about a minute each.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

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
# a customer without an id: kept (decision 0003), never versioned (decision 0414)
A0 = ["l1", "2026-01-05T08:00:00Z", "a0", None, "n@x.io", "fr", "1", "2024-01-01", None]
# c1 changes tier twice over two more builds; c2 is quarantined by a bad tier in the last one
BATCHES = ((A0, A1, A2), (A0, A1, A2, A3), (A0, A1, A2, A3, A4, A5))


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
    try:
        for batch in BATCHES:
            project.load_bronze([customers(*batch), orders()])
            build = runner.build(project)
            assert build.ok, build.log
            builds.append(build)
        return {
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
                "select _source_row_id, failed_rules, raw from silver.customer__reject where resolved_at is null"),
        }
    finally:
        runner.close(project)


def test_history_is_versioned(history):
    # C2's newest delivery is quarantined: its older clean version is closed, not left current (001:
    # a corrupt latest row is never silently replaced by a stale clean one; decision 0415)
    assert history["versions"] == [("C1", 1, False), ("C1", 2, False), ("C1", 3, True), ("C2", 1, False)]


def test_a_row_without_a_key_is_kept_but_never_versioned(history):
    # a merge on the key never matches a NULL, so versioning it would open one more version per build
    assert history["keyless"] == ([(1,)], [(0,)])


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
    assert [(r[0], list(r[1])) for r in rej] == [("a5", ["tier_coercible"])]
    # `redact: [$.phone]`: the reject payload never holds the phone number
    assert '"phone"' not in rej[0][2] and '"tier":"nine"' in rej[0][2].replace(" ", "")


def test_a_version_is_valid_from_the_run_that_saw_it(history):
    executed = [b.executed_at for b in history["builds"]]
    if None in executed:
        pytest.skip(f"{history['runner'].target} stamps a version with the wall clock of its run; there is no injected "
                    "execution time to compare with")
    # compared with the plans' own execution times, so no calendar date or year boundary matters
    valid_from = history["valid_from"]
    for tier, at in zip((1, 2, 3), executed):
        assert at - timedelta(days=1) < valid_from[tier] <= at, tier
