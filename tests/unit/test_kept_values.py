"""`assay check rows` spells a kept value by its column's assay type, the same whatever engine kept
it (decision 0952): the spellings below are what DuckDB, PostgreSQL and Spark write into a kept
row's JSON for one value (measured on the engines; the integration stories assert the command's
whole output on each), and each reads as one text."""

from __future__ import annotations

from decimal import Decimal

import pytest

from assay import exactjson
from assay.checks.kept_values import spell_row, spell_value
from assay.lower.check_rows import checked_row_types, kept_row_types, sql_check_row_types

# (assay type, what each engine's JSON holds for one value, the one spelling shown: the spelling
# of the same value in the sentences of `assay checks`)
SPELLINGS = [
    # DuckDB drops some of a decimal's trailing zeros; PostgreSQL's numeric and Spark keep the scale
    ("decimal(12,2)", ["20000.0", "20000.00", "20000", "2E+4"], "20000"),
    ("decimal(5,2)", ["0.1", "0.10"], "0.1"),
    ("decimal(5,1)", ["-3.0", "-3", "-3.00"], "-3"),
    ("decimal(5,1)", ["104.5", "104.50"], "104.5"),
    ("decimal(20,8)", ["1E-7", "1.0E-7", "0.00000010"], "0.0000001"),
    ("decimal(38,2)", ["123456789012345678901234567890123456.10"], "123456789012345678901234567890123456.1"),
    # timestamps: DuckDB's text, PostgreSQL's ISO form, Spark's milliseconds and offset
    ("timestamp", ['"2026-03-01 10:00:00"', '"2026-03-01T10:00:00"', '"2026-03-01T10:00:00.000Z"',
                   '"2026-03-01T10:00:00+00:00"', '"2026-03-01 10:00:00+00"'], '"2026-03-01T10:00:00Z"'),
    ("timestamp", ['"2026-03-01 10:00:00.5"', '"2026-03-01T10:00:00.500Z"', '"2026-03-01T12:30:00.5+02:30"'],
     '"2026-03-01T10:00:00.5Z"'),
    ("timestamp", ['"2026-03-01T00:30:00-01:00"'], '"2026-03-01T01:30:00Z"'),
    # a text that is not a timestamp, or one out of range in UTC, stays as written
    ("timestamp", ['"soon"'], '"soon"'),
    ("timestamp", ['"0001-01-01T00:30:00+01:00"'], '"0001-01-01T00:30:00+01:00"'),
    ("date", ['"2026-03-01"'], '"2026-03-01"'),
    ("bool", ["true", '"true"'], "true"),
    ("int", ["42", '"42"'], "42"),
    # Spark kept a redacted row through a map of strings before session 45: its text, read as its type
    ("decimal(10,2)", ['"1300.0"', '"1300.00"'], "1300"),
    ("decimal(38,9)", ['"123456789012345678.123456789"'], "123456789012345678.123456789"),
    ("int", ['"4x"'], '"4x"'),  # text that is not its type stays as written
    ("decimal(10,2)", ['"NaN"', '"abc"'], None),
    ("string", ['"2026-03-01 10:00:00"'], '"2026-03-01 10:00:00"'),
    # a number under a column that is text now (a row kept before the type changed): as written
    ("timestamp", ["5"], "5"),
]


@pytest.mark.parametrize("assay_type, written, shown", SPELLINGS)
def test_every_engines_spelling_reads_as_one(assay_type, written, shown):
    for text in written:
        # None: each stays as it was written
        assert exactjson.dumps(spell_value(exactjson.loads(text), assay_type)) == (shown or text), (assay_type, text)


def test_null_stays_null_for_every_type():
    for assay_type in ("decimal(5,2)", "timestamp", "variant", "string", "int"):
        assert spell_value(None, assay_type) is None


def test_a_variant_is_its_document_with_keys_in_name_order():
    document = {"b": 1, "a": {"d": [{"y": 2, "x": 1}], "c": Decimal("1.50")}}
    shown = '{"a": {"c": 1.50, "d": [{"x": 1, "y": 2}]}, "b": 1}'
    # DuckDB and PostgreSQL embed the document (jsonb reorders its keys); Spark's variant is text
    assert exactjson.dumps(spell_value(document, "variant", "duckdb")) == shown
    assert exactjson.dumps(spell_value(exactjson.dumps(document), "variant", "spark")) == shown
    # on an engine that stores JSON itself, a string is a JSON string, never parsed again
    assert spell_value('{"a": 1}', "variant", "postgres") == '{"a": 1}'
    assert spell_value("not json", "variant", "spark") == "not json"


def test_a_rows_keys_come_in_table_order_then_by_name():
    types = {"reading_id": "string", "humidity": "decimal(5,1)", "_ingested_at": "timestamp"}
    # PostgreSQL's jsonb orders keys by length; DuckDB keeps the table's order
    kept = {"zeta": 1, "humidity": Decimal("-3"), "alpha": None, "reading_id": "r5", "_ingested_at": "2026-03-01T00:00:00"}
    assert list(spell_row(kept, types, "postgres").items()) == [
        ("reading_id", "r5"), ("humidity", Decimal("-3")), ("_ingested_at", "2026-03-01T00:00:00Z"),
        ("alpha", None), ("zeta", 1)]


ENTITIES = """\
spec_version: 1
entities:
  reading:
    grain: one row per reading
    key: [reading_id]
    quarantine: {retention: 90d}
    fields:
      reading_id: {type: string, required: true}
      observed_at: {type: timestamp}
      humidity: {type: "decimal(5,1)"}
      payload: {type: variant}
"""
MAPPING = """\
mapping_version: 1
source: raw_readings
target: reading
key:
  reading_id: {from: "$.id"}
fields:
  observed_at: {from: "$.at", transform: [{parse_ts: ISO8601}]}
  humidity: {from: "$.rh", transform: [{to_decimal: [5, 1]}], quality: [{rule: range, min: 0, on_fail: flag}]}
  payload: {from: "$.p"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    from assay.api import load_project

    spec = tmp_path_factory.mktemp("spec")
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "mapping_readings.yml").write_text(MAPPING)
    checks = spec / "checks" / "silver" / "reading"
    checks.mkdir(parents=True)
    (checks / "wet.sql").write_text(
        "/* assay\non_failure: warn\n*/\n"
        "with w as (select * from silver.reading where humidity > 90)\n"
        "select r.reading_id as id, r.observed_at, r.humidity * 2 as twice, upper(r.reading_id) as shout, 1 as one\n"
        "from w as r\n")
    (checks / "everything.sql").write_text("/* assay\non_failure: warn\n*/\nselect * from reading where humidity > 90\n")
    return load_project(spec)


def test_the_entity_tables_columns_and_types(project):
    from assay.ir.model import LINEAGE_TYPES
    from assay.lower.staged import LINEAGE

    assert tuple(name for name, _ in LINEAGE_TYPES) == tuple(LINEAGE)  # one list of lineage columns
    types = checked_row_types(project.entity("reading"))
    assert list(types.items()) == [
        ("reading_id", "string"), ("observed_at", "timestamp"), ("humidity", "decimal(5,1)"), ("payload", "variant"),
        ("_mapping", "string"), ("_source_row_id", "string"), ("_load_id", "string"), ("_ingested_at", "timestamp"),
        ("_quality_ok", "bool")]
    assert kept_row_types(project, "reading", "HUMIDITY_IN_RANGE") == types


def test_a_sql_checks_outputs_passed_through_keep_their_columns_types(project):
    wet = next(c for c in project.entity("reading").sql_checks if c.name.endswith("/wet"))
    types = sql_check_row_types(wet, project)
    # renamed, through a CTE: typed; computed (`* 2`, `upper`) or a literal: the engine's spelling
    assert {k: v for k, v in types.items() if k == k.lower()} == {"id": "string", "observed_at": "timestamp"}
    assert types["OBSERVED_AT"] == "timestamp"  # an engine that folds names to upper case
    assert kept_row_types(project, "reading", wet.name.upper()) == types
    everything = next(c for c in project.entity("reading").sql_checks if c.name.endswith("/everything"))
    star = sql_check_row_types(everything, project)
    assert star["humidity"] == "decimal(5,1)" and star["_ingested_at"] == "timestamp"


def test_a_table_assay_only_reads_has_no_known_types(project):
    assert kept_row_types(project, "raw_readings", "IDS_PRESENT") == {}


def test_rows_are_numbered_in_the_order_they_are_shown():
    from assay.checks.kept_values import shown_rows

    # PostgreSQL numbered its jsonb text ({"seq": ..., "reading_id": ...}); DuckDB its own
    kept = [{"table": "reading", "check_id": "C", "row_number": 1, "row": {"reading_id": "r7", "humidity": Decimal("-3.0")}},
            {"table": "reading", "check_id": "C", "row_number": 2, "row": {"reading_id": "r5", "humidity": Decimal("104.50")}},
            {"table": "other", "check_id": "C", "row_number": 1, "row": {"x": 1}}]
    types = {"reading_id": "string", "humidity": "decimal(5,1)"}
    shown = shown_rows(kept, lambda table, check: types if table == "reading" else {}, "postgres")
    assert [(i["table"], i["row_number"], exactjson.dumps(i["row"])) for i in shown] == [
        ("other", 1, '{"x": 1}'),
        ("reading", 1, '{"reading_id": "r5", "humidity": 104.5}'),
        ("reading", 2, '{"reading_id": "r7", "humidity": -3}')]
    assert kept[0]["row"]["humidity"] == Decimal("-3.0")  # the rows read are left as they were
    assert [i["row"] for i in shown_rows(kept[2:], None, "duckdb")] == [{"x": 1}]
