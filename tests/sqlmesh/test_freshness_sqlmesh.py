"""SQLMesh freshness (docs/sqlmesh.md, "Freshness") on DuckDB and PostgreSQL: pass, warn, error.

raw_orders: warn after 6h, error after 1d (examples/shop/spec/orders.yml). The audits judge the
newest `_ingested_at` at the plan's execution time, which the test injects (project.clock), and
the delivery is placed a fixed age before that time, so no verdict depends on the date.
`sqlmesh audit` over the staged model is this target's `dbt source freshness`: it fails exactly
when a freshness audit (or any other audit of the model) returns rows.
"""

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
CUSTOMERS = Relation("raw_customers", CUST_COLS, [["l1", "2026-01-05T08:00:00Z", "a1", "c1", "a@x.io", "gb", "1", "2024-01-01", None]])
# age of the newest delivery at the plan's execution time -> the freshness audits that fire
CASES = [(timedelta(hours=1), set()), (timedelta(hours=12), {"warn"}), (timedelta(days=3), {"warn", "error"})]


def orders(newest: str):
    return Relation("raw_orders", ORDER_COLS, [
        ["l1", "2020-01-01T00:00:00Z", "o1", "O-1", "c1", "2026-01-04T10:00:00Z", "paid", "10.00", "0"],
        ["l2", newest, "o2", "O-2", "c1", "2026-01-04T11:00:00Z", "paid", "20.00", "0"],
    ])


def fired(records, relation: str = "raw_orders") -> set:
    """The freshness audits that returned a row about `relation` (their query names it; the
    customers' bronze is old on purpose and warns on its own)."""
    found = set()
    for r in records:
        m = r.getMessage()
        for level in ("warn", "error"):
            if f"'assay_freshness_{level}' audit error: 1 row failed" in m and f'"{relation}"' in m:
                found.add(level)
    return found


class Freshness:
    @pytest.mark.parametrize("age,expected", CASES, ids=["pass", "warn", "error"])
    def test_freshness_audits_pass_warn_error(self, project, caplog, age, expected):
        execution = project.clock + timedelta(days=1)  # what the next plan runs at
        project.load_bronze([CUSTOMERS, orders((execution - age).strftime("%Y-%m-%dT%H:%M:%SZ"))])
        with caplog.at_level(logging.WARNING, logger="sqlmesh"):
            project.plan()  # freshness never blocks: the plan applies in every case
        assert project.clock == execution
        assert fired(caplog.records) == expected, [r.getMessage() for r in caplog.records]
        assert fired(caplog.records, "raw_customers") == {"warn", "error"}  # the control: years old
        assert project.query('select order_id from silver."order" order by 1') == [("O-1",), ("O-2",)]
        day = execution.date().isoformat()
        audited = project.context().audit(day, day, models=["silver.order__staged"], execution_time=execution)
        assert audited is (not expected)


class TestFreshnessSQLMeshDuckDB(Freshness):
    @pytest.fixture
    def project(self, tmp_path):
        p = make_project(tmp_path / "proj", EXAMPLE / "spec")
        yield p
        p.close()


@pytest.mark.postgres
class TestFreshnessSQLMeshPostgres(Freshness):
    # The warn case only: its plan runs both freshness audits' SQL on PostgreSQL, the warn audit
    # returning a row and the error audit none (the customers' bronze fires both), and the audit
    # fails. Pass and error differ from it only in the delivery's age; DuckDB runs all three.
    @pytest.mark.parametrize("age,expected", [CASES[1]], ids=["warn"])
    def test_freshness_audits_pass_warn_error(self, project, caplog, age, expected):
        Freshness.test_freshness_audits_pass_warn_error(self, project, caplog, age, expected)

    @pytest.fixture
    def project(self, tmp_path, postgres_database, postgres_server, request):
        # the shop spec grants select on silver.order to `reporter`, which Postgres applies
        conn = postgres_server.connect()
        conn.autocommit = True
        try:
            conn.cursor().execute("do $$ begin create role reporter; exception when duplicate_object then null; end $$")
        finally:
            conn.close()
        p = make_project(tmp_path / "proj", EXAMPLE / "spec", engine="postgres",
                         pg=postgres_database(f"fresh_{request.node.callspec.id.replace('-', '_')}"))
        yield p
        p.close()
