"""A JSON path read of a value that is not JSON, or of a document not of the shape the path reads,
is a coercion failure, never a crash nor a silent NULL (decisions 1123, 1130).

The outside tester's first defect: a field mapped `from: "$.payload.loc.city"` and one bronze row
whose `payload` was `{not json` made DuckDB raise `Malformed JSON` in the staged model; no row
reached the entity or the reject table and everything downstream was skipped. The second: a field
mapped `from: "$.billed.amount"` whose bronze `billed` held the plain number `382.16` read NULL
for every row, validation passed and no rule fired. Now, on both targets (the `runner` fixture)
and on DuckDB and PostgreSQL 18, such a read yields NULL and a coercion marker, so the implicit
`<col>_coercible` rule (quarantine) diverts the row, or the field's own `coercible` rule (here
`country`) keeps it flagged; every other row is kept. A JSON `null` (the document or a value on
the way), a missing key and an SQL NULL stay NULL without a marker; a value at the end of the
path that is no number is the cast's failure. The oracle is written by hand.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  parcel:
    grain: one row per parcel
    key: [parcel_id]
    fields:
      parcel_id: {type: string, required: true}
      city: {type: string}
      zip: {type: int}
      country: {type: string, classification: pii}
      amount: {type: "decimal(10,2)"}
    quarantine: {retention: 7d}
"""
MAPPING = """\
mapping_version: 1
source: raw_parcels
target: parcel
key: {parcel_id: {from: "$.id"}}
fields:
  city: {from: "$.payload.loc.city"}
  zip: {from: "$.payload.loc.zip", transform: [to_int]}
  country:
    from: "$.meta.country"
    quality:
      - {rule: coercible, on_fail: flag}
  amount: {from: "$.billed.amount"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "payload", "meta", "billed"]
GOOD = '{"loc": {"city": "Köln", "zip": "50667"}}'
DE = '{"country": "DE"}'
ROWS = [
    ["r1", "P1", GOOD, DE, '{"amount": "12.50"}'],
    ["r2", "P2", "{not json", DE, '{"amount": 3}'],  # the tester's first row
    ["r3", "P3", "null", '{"country": "FR"}', None],  # JSON null: no value, no marker
    ["r4", "P4", '{"loc": "flat"}', None, None],  # a path through a string (decision 1130); SQL NULL
    ["r5", "P5", GOOD, "oops", '{"amount": 7.5}'],  # not JSON, read by a `flag` coercible
    ["r6", "P6", None, '{"country": "NL"}', '{"amount": null}'],  # SQL NULL: nothing to read; a JSON null
    ["r7", "P7", "", '{"country": "BE"}', None],  # empty text is not JSON
    ["r8", "P8", '{"loc": {"city": "Gent", "zip": "9000"}', '{}', None],  # truncated
    ["r9", "P9", GOOD, DE, "382.16"],  # the tester's second row: the document is a number
    ["r10", "P10", GOOD, DE, '"382.16"'],  # a string
    ["r11", "P11", GOOD, DE, '[{"amount": 1}]'],  # an array
    ["r12", "P12", GOOD, DE, '{"currency": "EUR"}'],  # a missing key: absence, no marker
    ["r13", "P13", '{"loc": null}', DE, "null"],  # a JSON null on the way, and as the document
    ["r14", "P14", '{"loc": [{"city": "Gent"}]}', DE, None],  # an array on the way
    ["r15", "P15", GOOD, DE, '{"amount": {"value": 1}}'],  # the last value is no number: the cast's failure
    ["r16", "P16", GOOD, '"DE"', None],  # a pii column's document is a string, read by a `flag` coercible
]
ROWS = [["l1", "2026-03-01T00:00:00Z", *r] for r in ROWS]
# The oracle, by hand: (parcel_id, city, zip, country, amount, _quality_flags) kept ...
ENTITY = [
    ("P1", "Köln", 50667, "DE", Decimal("12.50"), []),
    ("P12", "Köln", 50667, "DE", None, []),
    ("P13", None, None, "DE", None, []),
    ("P16", "Köln", 50667, None, None, ["country_coercible"]),
    ("P3", None, None, "FR", None, []),
    ("P5", "Köln", 50667, None, Decimal("7.50"), ["country_coercible"]),
    ("P6", None, None, "NL", None, []),
]
# ... and (source row, failed_rules, disposition) quarantined: every field read from the
# unreadable or misshapen document fails its coercible rule.
CITY_ZIP = ["city_coercible", "zip_coercible"]
REJECTS = sorted([
    ("r2", CITY_ZIP, "quarantine"),
    ("r4", CITY_ZIP, "quarantine"),
    ("r7", CITY_ZIP, "quarantine"),
    ("r8", CITY_ZIP, "quarantine"),
    ("r9", ["amount_coercible"], "quarantine"),
    ("r10", ["amount_coercible"], "quarantine"),
    ("r11", ["amount_coercible"], "quarantine"),
    ("r14", CITY_ZIP, "quarantine"),
    ("r15", ["amount_coercible"], "quarantine"),
])
EXPLAINED = ("P2", "P5", "P9", "P4", "P16", "P15")


@pytest.fixture(scope="module")
def built(tmp_path_factory, runner, engine):
    runner.require(engine)
    root = tmp_path_factory.mktemp(f"malformed_json_{runner.target}_{engine.id}")
    spec = root / "spec"
    spec.mkdir()
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "parcels.yml").write_text(MAPPING)
    project = runner.project(engine, root / "project", spec, f"malformed_json_{engine.id}")
    out: dict = {}
    try:
        project.load_bronze([Relation("raw_parcels", COLS, [list(r) for r in ROWS])])
        build = runner.build(project)
        out["build"] = (build.ok, build.log[-3000:], build.stopped)
        out["entity"] = sorted(
            (r[0], r[1], r[2], r[3], r[4], sorted(r[5] or [])) for r in
            project.query("select parcel_id, city, zip, country, amount, _quality_flags from silver.parcel"))
        out["rejects"] = sorted(
            (r[0], sorted(r[1]), r[2]) for r in
            project.query("select _source_row_id, failed_rules, disposition from silver.parcel__reject where resolved_at is null"))
        out["bronze"] = project.query('select count(*) from bronze."raw_parcels"')[0][0]
        if runner.target == "sqlmesh":
            project.close()  # DuckDB: one process cannot hold the file twice
        for key in EXPLAINED:
            said = CliRunner().invoke(cli, ["explain", "parcel", key, "--spec", str(spec), "--project", str(project.path)])
            out[key] = (said.exit_code, said.output)
        yield out
    finally:
        runner.close(project)


def test_the_build_passes_with_its_audits(built):
    ok, log, stopped = built["build"]
    assert ok, (log, stopped)


def test_the_readable_rows_are_kept_and_the_flagged_one_names_its_rule(built):
    assert built["entity"] == ENTITY


def test_the_unreadable_rows_are_quarantined_naming_the_coercible_rules(built):
    assert built["rejects"] == REJECTS


def test_conservation_every_bronze_row_is_somewhere(built):
    assert built["bronze"] == len(ROWS) == len(built["entity"]) + len(built["rejects"])


def test_explain_says_the_payload_is_not_json(built):
    code, text = built["P2"]
    assert code == 0, text
    assert "rule city_coercible (quarantine): fired" in text and "rule zip_coercible (quarantine): fired" in text, text
    assert "rule country_coercible (flag): held" in text, text
    assert "city: bronze payload = '{not json' is not JSON, so $.payload.loc.city could not be read" in text, text
    assert "zip: bronze payload = '{not json' is not JSON, so $.payload.loc.zip could not be read and did not become an int" in text, text


def test_explain_says_a_pii_column_is_not_json_without_showing_it(built):
    """`country` is pii: its bronze column's value is never shown, but that it is not JSON is no
    private fact (an outside tester saw `did not become a string` with no reason)."""
    code, text = built["P5"]
    assert code == 0, text
    assert "country: bronze meta = (pii: not shown) is not JSON, so $.meta.country could not be read" in text, text
    assert "oops" not in text, text


def test_explain_says_the_billed_document_is_a_number(built):
    code, text = built["P9"]
    assert code == 0, text
    assert "rule amount_coercible (quarantine): fired" in text, text
    assert ("amount: bronze billed = '382.16' is a number, so $.billed.amount could not be read "
            "and did not become a decimal(10,2)") in text, text


def test_explain_shows_the_value_the_path_read_not_the_document(built):
    # an outside tester read the whole `billed` document as the value at $.billed.amount (session 45)
    code, text = built["P15"]
    assert code == 0, text
    assert "amount: bronze $.billed.amount = '{\"value\":1}' did not become a decimal(10,2)" in text, text


def test_explain_names_the_step_that_stopped_the_path(built):
    code, text = built["P4"]
    assert code == 0, text
    assert ("city: bronze payload = '{\"loc\": \"flat\"}' holds a string at $.payload.loc, so $.payload.loc.city "
            "could not be read and did not become a string") in text, text


def test_explain_says_a_pii_document_is_a_string_without_showing_it(built):
    code, text = built["P16"]
    assert code == 0, text
    assert "rule country_coercible (flag): fired" in text, text
    assert "country: bronze meta = (pii: not shown) is a string, so $.meta.country could not be read" in text, text
    assert '"DE"' not in text, text
