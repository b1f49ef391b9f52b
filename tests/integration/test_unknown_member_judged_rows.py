"""The unknown-member rewrite touches only the rows its referential rule judges.

`on_missing: unknown_member` rewrites a kept row's foreign key to `'__unknown__'` when no parent
has it. A dedupe loser and a superseded delivery are never judged (reference 001: rules run on
the winners), so their staged rows keep the value delivered: an outside tester (session 41) saw
`'__unknown__'` on a loser in `__staged` and in `assay explain`'s transformed values, although no
rule had judged that row. A real `dbt build` and a real `sqlmesh plan`, both on DuckDB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  customer:
    grain: one row per customer
    key: [customer_id]
    fields:
      customer_id: {type: string, required: true}
  sale:
    grain: one row per sale
    key: [sale_id]
    fields:
      sale_id: {type: string, required: true}
      customer_id: {type: string}
      seq: {type: int}
    dedupe: {keep: latest_by, field: seq, tie_break: [_load_id]}
    quarantine: {retention: 90d}
    quality:
      - {rule: referential, via: sale_customer, on_missing: unknown_member}
relationships:
  - {name: sale_customer, from: sale, to: customer, via: {customer_id: customer_id}}
"""
MAPPINGS = {
    "customer.yml": """\
mapping_version: 1
source: raw_customer
target: customer
key:
  customer_id: {from: "$.id"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
    "sale.yml": """\
mapping_version: 1
source: raw_sale
target: sale
key:
  sale_id: {from: "$.id"}
fields:
  customer_id: {from: "$.customer"}
  seq: {from: "$.seq", transform: [to_int]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
}
META = ["_load_id", "_ingested_at", "_source_row_id"]
BRONZE = [
    Relation("raw_customer", ["id", *META], [["c1", "l1", "2026-01-01T00:00:00Z", "c-1"]]),
    Relation("raw_sale", ["id", "customer", "seq", *META], [
        # s1: the winner (seq 2) has a parent, the loser (seq 1) has none
        ["s1", "c1", "2", "l1", "2026-01-01T00:00:00Z", "s-1a"],
        ["s1", "c404", "1", "l1", "2026-01-01T00:00:00Z", "s-1b"],
        # s2: an orphan winner, rewritten
        ["s2", "c405", "1", "l1", "2026-01-01T00:00:00Z", "s-2"],
        # s-3 delivered twice: the superseded delivery names no parent, the latest one does
        ["s3", "c406", "1", "l1", "2026-01-01T00:00:00Z", "s-3"],
        ["s3", "c1", "1", "l2", "2026-01-02T00:00:00Z", "s-3"],
    ]),
]
# (source row id, load, customer_id, route) of every staged row
STAGED = [
    ("s-1a", "l1", "c1", "kept"),
    ("s-1b", "l1", "c404", "deduped"),
    ("s-2", "l1", "__unknown__", "kept"),
    ("s-3", "l1", "c406", "deduped"),
    ("s-3", "l2", "c1", "kept"),
]
ENTITY = [("s1", "c1"), ("s2", "__unknown__"), ("s3", "c1")]
STAGED_SQL = "select _source_row_id, _load_id, customer_id, _route from silver.sale__staged order by 1, 2"


def _spec(root: Path) -> Path:
    spec = root / "spec"
    spec.mkdir(parents=True)
    (spec / "entities.yml").write_text(ENTITIES)
    for name, text in MAPPINGS.items():
        (spec / name).write_text(text)
    return spec


def test_dbt_rewrites_only_judged_rows(tmp_path):
    from tests.support.dbtproject import make_project

    project = make_project(tmp_path / "dbt", _spec(tmp_path))
    project.load_bronze(BRONZE)
    project.dbt("build", check=True)
    assert project.query(STAGED_SQL) == STAGED
    assert project.query("select sale_id, customer_id from silver.sale order by 1") == ENTITY


def test_sqlmesh_rewrites_only_judged_rows(tmp_path):
    from tests.support.sqlmeshproject import make_project

    sm = make_project(tmp_path / "sqlmesh", _spec(tmp_path))
    try:
        sm.load_bronze(BRONZE)
        sm.plan()
        assert sm.query(STAGED_SQL) == STAGED
        assert sm.query("select sale_id, customer_id from silver.sale order by 1") == ENTITY
    finally:
        sm.close()
