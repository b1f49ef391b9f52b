"""The README's shop spec through SQLMesh: a type-2 entity versioned by SCD_TYPE_2_BY_COLUMN, a
child whose referential probe reads only current versions, owner and grants on the models, and
the freshness audits (non-blocking) judging bronze at the run's execution time."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.corpus import Relation
from tests.support.sqlmeshproject import make_project

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


def customers(*rows):
    return Relation("raw_customers", CUST_COLS, [list(r) for r in rows])


def orders(ingested_at: str = "2026-01-05T08:30:00Z"):
    return Relation("raw_orders", ORDER_COLS, [
        ["l1", ingested_at, "o1", "O-1", "c1", "2026-01-04T10:00:00Z", "paid", "10.00", "0"],
        ["l1", ingested_at, "o2", "O-2", "c2", "2026-01-04T10:00:00Z", "paid", "20.00", "0"],
    ])


@pytest.fixture
def project(tmp_path_factory):
    # one warehouse per test: no test depends on what another loaded or on the order they run in
    p = make_project(tmp_path_factory.mktemp("sqlmesh_type2"), EXAMPLE / "spec")
    yield p
    p.close()


def test_history_is_versioned_and_probes_read_current_versions(project):
    executed = []  # the injected execution time of each plan (never the wall clock)
    for batch in ((A1, A2), (A1, A2, A3), (A1, A2, A3, A4, A5)):
        project.load_bronze([customers(*batch), orders()])
        project.plan()
        executed.append(project.clock.replace(tzinfo=None))
    versions = project.query('select customer_id, tier, valid_to is null from silver."customer" order by customer_id, tier')
    assert versions == [("C1", 1, False), ("C1", 2, False), ("C1", 3, True), ("C2", 1, True)]
    # Three versions of C1 do not triple O-1; the orders keep their customer keys.
    rows = project.query('select order_id, customer_id, _quality_flags from silver."order" order by order_id')
    assert [(r[0], r[1], list(r[2])) for r in rows] == [("O-1", "C1", []), ("O-2", "C2", [])]
    # The newest C2 delivery is quarantined; the history keeps the last admitted version current.
    rej = project.query("select _source_row_id, failed_rules, raw from silver.customer__reject where resolved_at is null")
    assert [(r[0], list(r[1])) for r in rej] == [("a5", ["tier_coercible"])]
    # `redact: [$.phone]`: the reject payload never holds the phone number
    assert '"phone"' not in rej[0][2] and '"tier":"nine"' in rej[0][2].replace(" ", "")
    # a first version is valid from the run that saw it
    # (compared with the plans' own execution times, so no calendar date or year boundary matters)
    valid_from = dict(project.query(
        "select tier, valid_from from silver.\"customer\" where customer_id = 'C1'"))
    assert executed[0] - timedelta(days=1) < valid_from[1] <= executed[0]
    assert executed[1] - timedelta(days=1) < valid_from[2] <= executed[1]
    assert executed[2] - timedelta(days=1) < valid_from[3] <= executed[2]


def test_owner_grants_and_descriptions_reach_the_models(project):
    ctx = project.context()
    order = ctx.get_model("silver.order")
    assert order.owner == "finance-data"
    assert order.grants == {"select": ["reporter"]}
    customer = ctx.get_model("silver.customer")
    assert customer.owner == "growth-analytics" and customer.kind.name.value == "SCD_TYPE_2_BY_COLUMN"
    assert "classification: pii" in customer.column_descriptions["email"]


def _freshness_warnings(caplog, relation: str) -> set:
    """The freshness audits that warned about `relation` (their query names it)."""
    found = set()
    for r in caplog.records:
        m = r.getMessage()
        for level in ("warn", "error"):
            if f"'assay_freshness_{level}' audit error" in m and f'"{relation}"' in m:
                found.add(level)
    return found


def test_freshness_warns_without_blocking(project, caplog):
    """raw_orders: warn after 6h, error after 24h (examples/shop/spec/orders.yml)."""
    for age, expected in ((timedelta(days=300), {"warn", "error"}), (timedelta(hours=12), {"warn"}), (timedelta(hours=1), set())):
        caplog.clear()
        delivered = (project.clock + timedelta(days=1) - age).strftime("%Y-%m-%dT%H:%M:%SZ")
        project.load_bronze([customers(A1, A2, A3, A4, A5), orders(delivered)])
        with caplog.at_level(logging.WARNING, logger="sqlmesh"):
            project.plan()  # applies every time: freshness never blocks
        assert _freshness_warnings(caplog, "raw_orders") == expected, age
        # `sqlmesh audit --model silver.order__staged` is the `dbt source freshness` of this
        # target: it exits non-zero when any audit of the model, freshness included, finds rows.
        day = project.clock.date().isoformat()
        audited = project.context().audit(day, day, models=["silver.order__staged"], execution_time=project.clock)
        assert audited is (not expected), age
