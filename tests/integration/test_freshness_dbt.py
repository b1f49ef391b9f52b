"""`dbt source freshness` on the generated sources, DuckDB and PostgreSQL: pass, warn and error.

examples/shop/spec/orders.yml gives raw_orders `warn_after: 6h, error_after: 1d`. The clock is
injected: each case reads the engine's own current timestamp (what dbt's freshness query
compares against) and delivers the newest row a fixed age before it (1h, 12h, 3 days), so the
verdict never depends on the date or the time the test runs at.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
ORDER_COLS = ["_load_id", "_ingested_at", "_source_row_id", "order_ref", "customer", "ts", "state", "price", "discount"]
# age of the newest delivery -> (status in sources.json, dbt's exit code)
CASES = [(timedelta(hours=1), "pass", 0), (timedelta(hours=12), "warn", 0), (timedelta(days=3), "error", 1)]


def engine_now_utc(project):
    """The engine's current_timestamp as a naive UTC timestamp: the freshness clock."""
    sql = "select cast(timezone('UTC', now()) as timestamp)" if project.engine == "duckdb" else "select now() at time zone 'utc'"
    return project.query(sql)[0][0]


def orders(newest, oldest, offset_hours: int = 0):
    """The two deliveries, `_ingested_at` written as local time at `offset_hours` from UTC."""
    sign = "-" if offset_hours < 0 else "+"
    zone = "Z" if offset_hours == 0 else f"{sign}{abs(offset_hours):02d}:00"
    iso = lambda t: (t + timedelta(hours=offset_hours)).strftime("%Y-%m-%dT%H:%M:%S") + zone  # noqa: E731
    return Relation("raw_orders", ORDER_COLS, [
        ["l1", iso(oldest), "o1", "O-1", "c1", "2026-01-04T10:00:00Z", "paid", "10.00", "0"],
        ["l2", iso(newest), "o2", "O-2", "c1", "2026-01-04T11:00:00Z", "paid", "20.00", "0"],
    ])


def freshness(project, age, offset_hours: int = 0):
    now = engine_now_utc(project)
    project.load_bronze([orders(now - age, now - age - timedelta(days=30), offset_hours)])
    proc = project.dbt("source", "freshness", "--select", "source:bronze.raw_orders")
    result = json.loads((project.path / "target" / "sources.json").read_text())["results"]
    assert [r["unique_id"] for r in result] == ["source.assay_it.bronze.raw_orders"], result
    return proc, result[0], now


class Freshness:
    @pytest.mark.parametrize("age,status,code", CASES, ids=[c[1] for c in CASES])
    def test_source_freshness_pass_warn_error(self, project, age, status, code):
        proc, result, now = freshness(project, age)
        assert result["status"] == status, (result, proc.stdout[-3000:])
        assert proc.returncode == code, proc.stdout[-3000:]
        # dbt measured the newest delivery (not the older one) against the engine's clock
        assert result["criteria"]["warn_after"] == {"count": 6, "period": "hour"}
        assert result["criteria"]["error_after"] == {"count": 1, "period": "day"}
        assert abs(result["max_loaded_at_time_ago_in_s"] - age.total_seconds()) < 600, result
        label = {"pass": "PASS", "warn": "WARN", "error": "ERROR STALE"}[status]
        assert f"{label} freshness of bronze.raw_orders" in proc.stdout, proc.stdout[-3000:]

    @pytest.mark.parametrize("offset", [-8, 5])
    def test_an_offset_is_converted_to_utc(self, project, offset):
        # delivered an hour ago, written in local time: a cast that dropped the offset would read
        # it as 9 hours old (warn) at -08:00, or as 4 hours in the future at +05:00
        proc, result, _now = freshness(project, timedelta(hours=1), offset)
        assert result["status"] == "pass", (result, proc.stdout[-3000:])
        assert abs(result["max_loaded_at_time_ago_in_s"] - 3600) < 600, result


class TestFreshnessDuckDB(Freshness):
    @pytest.fixture(scope="class")
    @classmethod
    def project(cls, tmp_path_factory):
        return make_project(tmp_path_factory.mktemp("fresh"), EXAMPLE)


@pytest.mark.postgres
class TestFreshnessPostgres(Freshness):
    @pytest.fixture(scope="class")
    @classmethod
    def project(cls, tmp_path_factory, postgres_database):
        return make_project(tmp_path_factory.mktemp("fresh_pg"), EXAMPLE, engine="postgres", pg=postgres_database("freshness"))
