"""`assay explain` of an `unknown_member` foreign key read from a JSON column that also feeds a pii
field: the column is hidden from the bronze row shown, and the delivered key read `None` (an outside
tester, session 49), which 001 says is no orphan. The key's own path is no pii value: it is read
from the column as delivered; a path a pii field reads stays hidden."""

from __future__ import annotations

import duckdb

from assay.api import load_project
from assay.explain import Explainer
from assay.runtime.warehouse import Reader

ENTITIES = """\
spec_version: 1
entities:
  product:
    grain: one row per sku
    key: [sku]
    fields:
      sku: {type: string, required: true}
  movement:
    grain: one row per movement
    key: [movement_id]
    fields:
      movement_id: {type: string, required: true}
      sku: {type: string}
      operator_email: {type: string, classification: pii}
    quarantine: {retention: 30d}
    quality:
      - {rule: referential, via: mp, on_missing: unknown_member}
relationships:
  - {name: mp, from: movement, to: product, via: {sku: sku}, cardinality: many_to_one}
"""
MOVEMENTS = """\
mapping_version: 1
source: raw_movements
target: movement
key: {movement_id: {from: "$.mv_id"}}
fields:
  sku: {from: "$.payload.sku"}
  operator_email: {from: "$.payload.operator"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
PRODUCTS = """\
mapping_version: 1
source: raw_products
target: product
key: {sku: {from: "$.sku"}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def test_the_delivered_key_is_read_from_a_column_a_pii_field_also_reads(tmp_path):
    (tmp_path / "entities.yml").write_text(ENTITIES)
    (tmp_path / "movements.yml").write_text(MOVEMENTS)
    (tmp_path / "products.yml").write_text(PRODUCTS)
    project = load_project(tmp_path)
    entity = project.entity("movement")
    mapping = entity.mappings[0].name
    con = duckdb.connect()
    con.execute("create schema bronze; create schema silver")
    con.execute("""create table bronze.raw_movements as select 'M1' as mv_id, '{"sku":"P9","operator":"x@y.example"}' as payload,
                   'L1' as _load_id, '2026-12-01T00:00:00Z' as _ingested_at, 'r1' as _source_row_id""")
    con.execute(f"""create table silver.movement__staged as select 'M1' as movement_id, '__unknown__' as sku,
                    'x@y.example' as operator_email, '{mapping}' as _mapping, 'r1' as _source_row_id, 'L1' as _load_id,
                    timestamp '2026-12-01' as _ingested_at, 1 as _delivery_rank, 1 as _dedupe_rank, 'kept' as _route,
                    ['mp_referential'] as _failed_rules, false as _late""")
    con.execute("create table silver.movement as select movement_id, sku, operator_email from silver.movement__staged")
    reader = Reader(con, "duckdb")
    explanation = Explainer(project, entity, reader.query, reader.columns, reader.relation).explain({"movement_id": "M1"})
    told = "\n".join(explanation.render())
    assert ("sku: the delivered $.payload.sku = 'P9' matches no product, so the entity holds '__unknown__' "
            "(relationship mp)") in told, told
    assert "x@y.example" not in told, told
