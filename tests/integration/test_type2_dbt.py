"""Type-2 entities on dbt: snapshots version the kept rows, and a child probes only the
parent's current versions, so history never fans a child row out."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

EXAMPLE = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "shop"
META = ["_load_id", "_ingested_at", "_source_row_id"]
CUST_COLS = META + ["id", "email", "country", "tier", "signed_up", "phone"]
ORDER_COLS = META + ["order_ref", "customer", "ts", "state", "price", "discount"]


def customers(*rows):
    return Relation("raw_customers", CUST_COLS, [list(r) for r in rows])


def orders(*rows):
    return Relation("raw_orders", ORDER_COLS, [list(r) for r in rows])


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("type2"), EXAMPLE)


def test_history_is_versioned_and_probes_read_current_versions(project):
    o = orders(
        ["l1", "2026-01-05T08:30:00Z", "o1", "O-1", "c1", "2026-01-04T10:00:00Z", "paid", "10.00", "0"],
        ["l1", "2026-01-05T08:30:00Z", "o2", "O-2", "c2", "2026-01-04T10:00:00Z", "paid", "20.00", "0"],
    )
    project.load_bronze([customers(
        ["l1", "2026-01-05T08:00:00Z", "a1", "c1", "a@x.io", "gb", "1", "2024-01-01", None],
        ["l1", "2026-01-05T08:00:00Z", "a2", "c2", "b@x.io", "us", "1", "2024-01-01", None],
    ), o])
    project.dbt("build", check=True)
    # c1 changes tier twice over two more builds; c2 is quarantined by a bad tier in the last one
    project.load_bronze([customers(
        ["l1", "2026-01-05T08:00:00Z", "a1", "c1", "a@x.io", "gb", "1", "2024-01-01", None],
        ["l1", "2026-01-05T08:00:00Z", "a2", "c2", "b@x.io", "us", "1", "2024-01-01", None],
        ["l2", "2026-01-06T08:00:00Z", "a3", "c1", "a@x.io", "gb", "2", "2024-01-01", None],
    ), o])
    project.dbt("build", check=True)
    project.load_bronze([customers(
        ["l1", "2026-01-05T08:00:00Z", "a1", "c1", "a@x.io", "gb", "1", "2024-01-01", None],
        ["l1", "2026-01-05T08:00:00Z", "a2", "c2", "b@x.io", "us", "1", "2024-01-01", None],
        ["l2", "2026-01-06T08:00:00Z", "a3", "c1", "a@x.io", "gb", "2", "2024-01-01", None],
        ["l3", "2026-01-07T08:00:00Z", "a4", "c1", "a@x.io", "gb", "3", "2024-01-01", None],
        ["l3", "2026-01-07T08:00:00Z", "a5", "c2", "b@x.io", "us", "nine", "2024-01-01", None],
    ), o])
    project.dbt("build", check=True)

    versions = project.query('select customer_id, tier, dbt_valid_to is null from silver."customer" order by customer_id, tier')
    assert versions == [("C1", 1, False), ("C1", 2, False), ("C1", 3, True), ("C2", 1, True)]
    # Three versions of C1 do not triple O-1; the orders keep their customer keys.
    rows = project.query('select order_id, customer_id, _quality_flags from silver."order" order by order_id')
    assert [(r[0], r[1], list(r[2])) for r in rows] == [("O-1", "C1", []), ("O-2", "C2", [])]
    # The newest C2 delivery is quarantined; the snapshot keeps the last admitted version current
    # (dbt's hard_deletes: ignore), and the reject row says why.
    rej = project.query("select _source_row_id, failed_rules from silver.customer__reject where resolved_at is null")
    assert [(r[0], list(r[1])) for r in rej] == [("a5", ["tier_coercible"])]


def test_demo_runs_end_to_end(tmp_path):
    """The README's demo: init, generate, load, dbt build, dbt source freshness, report."""
    res = CliRunner().invoke(cli, ["demo", str(tmp_path / "demo")])
    assert res.exit_code == 0, res.output
    assert "4. dbt build: ok" in res.output
    assert "5. dbt source freshness: ok" in res.output
    assert "PASS freshness of bronze.raw_orders" in res.output
    lines = {l.split()[0]: l.split()[1:] for l in res.output.splitlines() if l.startswith(("customer ", "order "))}
    assert lines["customer"] == ["6", "3", "1", "2", "1"]
    assert lines["order"] == ["10", "5", "3", "4", "1"]
