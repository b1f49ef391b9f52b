"""The implicit `not_null` of a type-2 key (decision 0416): a row without its full key cannot be
versioned, so resolution gives every key column of every mapping a rule that diverts it, with the
entity's quarantine where it states a retention, else `fail`; a declared `not_null` replaces it."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.ir.resolve import compile_spec

ENTITY = """spec_version: 1
entities:
  parcel:
    grain: one row per parcel, versioned
    key: [region, parcel_id]
    scd: {scd}
    fields:
      region: {{type: string}}
      parcel_id: {{type: string}}
      city: {{type: string}}
    dedupe: {{keep: latest_by, field: _ingested_at, tie_break: [_load_id]}}
{extra}"""
MAPPING = """mapping_version: 1
source: raw_parcels
target: parcel
key:
  region: {{from: "$.region"}}
  parcel_id: {{from: "$.id"{key_rules}}}
fields:
  city: {{from: "$.city"}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def rules(tmp_path: Path, scd: str = "type2", extra: str = "", key_rules: str = "") -> list[tuple]:
    (tmp_path / "assay.yml").write_text("name: parcels\nspecs: .\n")
    (tmp_path / "entities.yml").write_text(ENTITY.format(scd=scd, extra=extra))
    (tmp_path / "mapping.yml").write_text(MAPPING.format(key_rules=key_rules))
    project, diags, _ = compile_spec(tmp_path)
    assert project is not None, diags
    return [(r.name, r.kind, r.disposition, r.implicit) for r in project.entity("parcel").rules if r.kind == "not_null"]


def test_every_key_column_is_quarantined_when_null_where_the_entity_quarantines(tmp_path):
    assert rules(tmp_path, extra="    quarantine: {retention: 7d}\n") == [
        ("parcel_id_not_null", "not_null", "quarantine", True), ("region_not_null", "not_null", "quarantine", True)]


def test_without_a_reject_table_a_row_without_a_key_stops_the_build(tmp_path):
    assert rules(tmp_path) == [("parcel_id_not_null", "not_null", "fail", True), ("region_not_null", "not_null", "fail", True)]


def test_a_declared_not_null_replaces_the_implicit_one(tmp_path):
    declared = ", quality: [{rule: not_null, on_fail: fail}]"
    assert rules(tmp_path, extra="    quarantine: {retention: 7d}\n", key_rules=declared) == [
        ("parcel_id_not_null", "not_null", "fail", False), ("region_not_null", "not_null", "quarantine", True)]


@pytest.mark.parametrize("extra", ["", "    quarantine: {retention: 7d}\n"])
def test_a_type1_entity_keeps_a_row_without_a_key(tmp_path, extra):
    # decision 0003: a NULL key is the absence of identity, judged by the rules the spec declares
    assert rules(tmp_path, scd="type1", extra=extra) == []
