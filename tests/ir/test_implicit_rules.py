"""The implicit `coercible` rule (001): who gets one, at which disposition."""

from __future__ import annotations

from assay.ir.resolve import compile_spec

ENTITY = """
spec_version: 1
entities:
  reading:
    grain: one row per reading
    key: [reading_id]
    fields:
      reading_id: {type: string}
      seq: {type: int}
      value: {type: "decimal(10,2)"}
      code: {type: string}
      taken_on: {type: date}
      batch: {type: string}
    dedupe: {keep: latest_by, field: seq, tie_break: [batch, _load_id]}
    QUARANTINE
"""
MAPPING = """
mapping_version: 1
source: raw_readings
target: reading
key:
  reading_id: {from: "$.id"}
fields:
  seq: {from: "$.seq", transform: [{nullif: "-"}, to_int]}
  value: {from: "$.value", transform: [{nullif: "n/a"}, {to_decimal: [10, 2]}]}
  code: {from: "$.label", transform: [{regex_extract: ["^([A-Z]+)-", 1]}]}
  taken_on: {from: "$.taken", transform: [{parse_date: ISO8601}]}
  batch: {from: "$.batch", transform: [{regex_extract: ["^b([0-9]+)$", 1]}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def resolve(write_spec, quarantine: str):
    files = {"entity_reading.yaml": ENTITY.replace("QUARANTINE", quarantine), "mapping_reading.yaml": MAPPING}
    project, diagnostics, _loaded = compile_spec(write_spec(files))
    assert diagnostics == []
    return project.entity("reading")


def test_opted_in_entity_gets_coercible_per_mapped_field(write_spec) -> None:
    reading = resolve(write_spec, "quarantine: {retention: 30d}")
    assert {r.name: (r.disposition, r.implicit) for r in reading.rules} == {
        # the dedupe order reads seq and batch: fail, even through nullif / regex_extract
        "seq_coercible": ("fail", True),
        "batch_coercible": ("fail", True),
        # everything else mapped: quarantine, chains that make a NULL on purpose included: their
        # markers see only casts that fail (value: nullif then to_decimal; decision 0019)
        "reading_id_coercible": ("quarantine", True),
        "taken_on_coercible": ("quarantine", True),
        "value_coercible": ("quarantine", True),
        "code_coercible": ("quarantine", True),
    }
    assert [(k.column, k.metadata) for k in reading.dedupe] == [("seq", False), ("batch", False), ("_load_id", True), ("_source_row_id", True), ("_mapping", True)]


def test_dedupe_alone_does_not_opt_an_entity_in(write_spec) -> None:
    reading = resolve(write_spec, "")
    assert (reading.opted_in, reading.rules, reading.has_reject) == (False, (), False)
