"""The README's shop spec through SQLMesh, what only this target has: owner and grants on the
models, and the freshness audits (non-blocking) judging bronze at the run's execution time.
The type-2 history of the same spec is judged on every target by tests/integration/test_type2.py;
`dbt source freshness` by tests/integration/test_freshness_dbt.py."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from tests.integration.test_type2 import A1, A2, A3, A4, A5, EXAMPLE, ORDER_COLS, customers
from tests.support.corpus import Relation
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow


def orders(ingested_at: str = "2026-01-05T08:30:00Z"):
    return Relation("raw_orders", ORDER_COLS, [
        ["l1", ingested_at, "o1", "O-1", "c1", "2026-01-04T10:00:00Z", "paid", "10.00", "0"],
        ["l1", ingested_at, "o2", "O-2", "c2", "2026-01-04T10:00:00Z", "paid", "20.00", "0"],
    ])


@pytest.fixture
def project(tmp_path_factory):
    # one warehouse per test: no test depends on what another loaded or on the order they run in
    p = make_project(tmp_path_factory.mktemp("sqlmesh_shop"), EXAMPLE / "spec")
    yield p
    p.close()


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
