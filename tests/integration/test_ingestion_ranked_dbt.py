"""The ingestion-metadata test bounded by the staged model's delivery ranks (decision 0412), on a
real dbt project over DuckDB.

The test looks for a `_source_row_id` repeated within one load and an `_ingested_at` that does not
parse. Where an entity rebuilt in full reads the source, it searches only the source rows its
staged model ranks twice or more, and parses again only those the staged model holds with a NULL
`_ingested_at`: when that model was built by the same invocation. In an invocation that does not
build the model (`dbt test`), it reads all of bronze. Either way the failing rows must be the ones written out by hand
below, which nothing in the generator computes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

SPEC = {
    "entities.yaml": """\
spec_version: 1
entities:
  orders:
    grain: one row per order, the latest delivery wins
    key: [order_id]
    fields:
      order_id: {type: string, required: true}
      amount: {type: "decimal(12,2)"}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 30d}
""",
    "mapping_orders.yaml": """\
mapping_version: 1
source: raw_orders
target: orders
key:
  order_id: {from: "$.id"}
fields:
  amount: {from: "$.amount", transform: [{to_decimal: [12, 2]}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
}
COLUMNS = ["_load_id", "_ingested_at", "_source_row_id", "id", "amount"]
CLEAN = [
    ["l1", "2026-01-01T10:00:00Z", "o1", "A1", "10.00"],
    ["l1", "2026-01-01T10:00:00Z", "o2", "A2", "20.00"],
    ["l1", "2026-01-01T10:00:00Z", "u1", "A3", "30.00"],
]
BAD = CLEAN + [
    ["l2", "2026-01-02T10:00:00Z", "o1", "A1", "11.00"],  # a re-delivery in a later load: normal
    ["l2", "2026-01-02T10:00:00Z", "d1", "A4", "40.00"],  # d1 twice within l2: corrupt
    ["l2", "2026-01-02T11:00:00Z", "d1", "A4", "41.00"],
    ["l2", "yesterday", "u1", "A3", "31.00"],  # u1 again, at a time that does not parse
    ["l2", "not a time", None, "A5", "50.00"],  # no identity, and a time that does not parse
]
# What the test must find in BAD, by hand: (failure, source_row_id), one per violating bronze row
# (decision 0956: both deliveries of d1 in l2)
FAILURES = sorted([("duplicate_source_row_id", "d1"), ("duplicate_source_row_id", "d1"), ("missing_metadata", None),
                   ("unparseable_ingested_at", "u1"), ("unparseable_ingested_at", None)], key=repr)
TEST = "assay_ingestion_metadata__raw_orders"


def _test_sql(project) -> str:
    """The test's query as dbt last compiled it (target/compiled: without dbt's count wrapper)."""
    [path] = (project.path / "target" / "compiled").rglob(f"{TEST}.sql")
    return path.read_text()


def _outcome(project, proc) -> tuple[str, list]:
    """The test's status in the invocation and the rows its compiled query returns now."""
    import json

    results = json.loads((project.path / "target" / "run_results.json").read_text())["results"]
    [status] = [r["status"] for r in results if r["unique_id"].split(".")[2] == TEST]
    return status, sorted(project.query(_test_sql(project)), key=repr)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranked")
    spec = root / "spec"
    spec.mkdir()
    for name, text in SPEC.items():
        (spec / name).write_text(text)
    project = make_project(root / "project", spec)
    project.load_bronze([Relation("raw_orders", COLUMNS, CLEAN)])
    return project


def test_a_clean_bronze_passes_through_the_ranks(project):
    project.dbt("build", check=True)
    sql = _test_sql(project)
    assert "_delivery_rank > 1" in sql and '"orders__staged"' in sql, sql
    assert project.query("select count(*) from silver.orders") == [(3,)]


def test_the_ranks_find_what_a_full_read_finds(project):
    project.load_bronze([Relation("raw_orders", COLUMNS, BAD)])
    # Built this run: the test reads the new staged model's ranks, and stops every reader of it.
    proc = project.dbt("build")
    assert proc.returncode != 0
    status, rows = _outcome(project, proc)
    assert "_delivery_rank > 1" in _test_sql(project)
    assert (status, rows) == ("fail", FAILURES), proc.stdout[-3000:]
    assert project.query("select count(*) from silver.orders") == [(3,)]  # not published
    # Run where the invocation does not build the staged model, which may then be older than
    # bronze: the test reads all of bronze.
    proc = project.dbt("test", "--select", "source:bronze.raw_orders")
    status, rows = _outcome(project, proc)
    assert "orders__staged" not in _test_sql(project)
    assert (status, rows) == ("fail", FAILURES), proc.stdout[-3000:]
