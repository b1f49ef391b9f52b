"""`dbt source freshness` on Apache Spark (local mode, parquet): pass, warn and error, as
tests/integration/test_freshness_dbt.py checks them on DuckDB and PostgreSQL (same spec, same
cases). The clock is Spark's own current_timestamp (session time zone UTC), read back as a
zoneless UTC value; no build is needed, freshness reads bronze only.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from tests.integration.test_freshness_dbt import CASES, EXAMPLE, orders
from tests.support import spark
from tests.support.engines import SPARK, Engine

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    yield Engine(SPARK).dbt_project(tmp_path_factory.mktemp("spark_fresh"), EXAMPLE, "freshness")
    spark.close_all()


@pytest.mark.parametrize("age,status,code", CASES, ids=[c[1] for c in CASES])
def test_source_freshness_pass_warn_error(project, age, status, code):
    now = project.query("select current_timestamp()")[0][0]
    project.load_bronze([orders(now - age, now - age - timedelta(days=30))])
    proc = project.dbt("source", "freshness", "--select", "source:bronze.raw_orders")
    result = json.loads((project.path / "target" / "sources.json").read_text())["results"]
    assert [r["unique_id"] for r in result] == ["source.assay_it.bronze.raw_orders"], result
    result = result[0]
    assert result["status"] == status, (result, proc.stdout[-3000:])
    assert proc.returncode == code, proc.stdout[-3000:]
    assert result["criteria"]["warn_after"] == {"count": 6, "period": "hour"}
    assert result["criteria"]["error_after"] == {"count": 1, "period": "day"}
    # dbt measured the newest delivery (not the older one) against Spark's clock
    assert abs(result["max_loaded_at_time_ago_in_s"] - age.total_seconds()) < 600, result
    label = {"pass": "PASS", "warn": "WARN", "error": "ERROR STALE"}[status]
    assert f"{label} freshness of bronze.raw_orders" in proc.stdout, proc.stdout[-3000:]
