"""`assay explain` finds a key whose parts are a timestamp, a date or a decimal however they are
spelled: as the report's example command writes them (ISO 8601 with `Z`, from the reject table),
as the engine prints them, or with another number of decimals (an outside tester on PostgreSQL:
9 of 11 of the report's explain commands for a `(meter_id, read_at)` key found nothing, because
the key was compared as the engine's text)."""

from __future__ import annotations

import duckdb
import pytest

from assay.api import load_project
from assay.explain import Explainer, typed_key_text
from assay.runtime.warehouse import Reader

ENTITIES = """\
spec_version: 1
entities:
  reading:
    grain: one row per meter and instant
    key: [meter_id, read_at, day, amount]
    fields:
      meter_id: {type: string, required: true}
      read_at: {type: timestamp, required: true}
      day: {type: date, required: true}
      amount: {type: "decimal(12,2)", required: true}
"""
MAPPING = """\
mapping_version: 1
source: raw_readings
target: reading
key:
  meter_id: {from: "$.meter"}
  read_at: {from: "$.at", transform: [{parse_ts: ISO8601}]}
  day: {from: "$.day", transform: [{parse_date: "%Y-%m-%d"}]}
  amount: {from: "$.amount", transform: [{to_decimal: [12, 2]}]}
"""


@pytest.mark.parametrize("given", [
    ("M-1", "2026-12-05T01:00:00Z", "2026-12-05", "104.5"),
    ("M-1", "2026-12-05 01:00:00", "2026-12-05", "104.50"),
    ("M-1", "2026-12-05T02:00:00+01:00", "2026-12-05", "104.500"),
])
def test_a_key_is_found_however_its_typed_parts_are_spelled(tmp_path, given):
    (tmp_path / "entities.yml").write_text(ENTITIES)
    (tmp_path / "readings.yml").write_text(MAPPING)
    project = load_project(tmp_path)
    con = duckdb.connect()
    con.execute("create schema silver")
    con.execute("create table silver.reading__staged as select 'M-1' as meter_id, timestamp '2026-12-05 01:00:00' as "
                "read_at, date '2026-12-05' as day, 104.50::decimal(12,2) as amount")
    reader = Reader(con, "duckdb")
    explainer = Explainer(project, project.entity("reading"), reader.query, reader.columns, reader.relation)
    where, params = explainer._key_match(dict(zip(["meter_id", "read_at", "day", "amount"], given)))
    assert con.execute(f"select count(*) from silver.reading__staged where {where}", params).fetchone()[0] == 1


def test_a_part_that_is_no_value_of_its_type_is_compared_as_text():
    assert typed_key_text("tomorrow", "timestamp") is None and typed_key_text("12,5", "decimal(12,2)") is None
    assert typed_key_text("2026-12-05T01:00:00.250Z", "timestamp") == "2026-12-05 01:00:00.250000"
