"""A JSON path read of a value that is not JSON is a coercion failure, never a crash (decision 1123).

The outside tester's defect: a field mapped `from: "$.payload.loc.city"` and one bronze row whose
`payload` was `{not json` made DuckDB raise `Malformed JSON` in the staged model; no row reached
the entity or the reject table and everything downstream was skipped. Now, on both targets (the
`runner` fixture) and on DuckDB and PostgreSQL 18, such a read yields NULL and a coercion marker,
so the implicit `<col>_coercible` rule (quarantine) diverts the row, or the field's own
`coercible` rule (here `flag`) keeps it flagged; every other row is kept. A JSON `null`, a path
through a non-object and an SQL NULL stay NULL without a marker. The oracle is written by hand.
"""

from __future__ import annotations


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
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "payload", "meta"]
GOOD = '{"loc": {"city": "Köln", "zip": "50667"}}'
ROWS = [
    ["l1", "2026-03-01T00:00:00Z", "r1", "P1", GOOD, '{"country": "DE"}'],
    ["l1", "2026-03-01T00:00:00Z", "r2", "P2", "{not json", '{"country": "DE"}'],  # the tester's row
    ["l1", "2026-03-01T00:00:00Z", "r3", "P3", "null", '{"country": "FR"}'],  # JSON null: no value, no marker
    ["l1", "2026-03-01T00:00:00Z", "r4", "P4", '{"loc": "flat"}', None],  # a path through a string; SQL NULL
    ["l1", "2026-03-01T00:00:00Z", "r5", "P5", GOOD, "oops"],  # not JSON, read by a `flag` coercible
    ["l1", "2026-03-01T00:00:00Z", "r6", "P6", None, '{"country": "NL"}'],  # SQL NULL: nothing to read
    ["l1", "2026-03-01T00:00:00Z", "r7", "P7", "", '{"country": "BE"}'],  # empty text is not JSON
    ["l1", "2026-03-01T00:00:00Z", "r8", "P8", '{"loc": {"city": "Gent", "zip": "9000"}', '{}'],  # truncated
]
# The oracle, by hand: (parcel_id, city, zip, country, _quality_flags) kept ...
ENTITY = [
    ("P1", "Köln", 50667, "DE", []),
    ("P3", None, None, "FR", []),
    ("P4", None, None, None, []),
    ("P5", "Köln", 50667, None, ["country_coercible"]),
    ("P6", None, None, "NL", []),
]
# ... and (source row, failed_rules, disposition) quarantined: every field read from the
# unreadable payload fails its coercible rule.
REJECTS = [
    ("r2", ["city_coercible", "zip_coercible"], "quarantine"),
    ("r7", ["city_coercible", "zip_coercible"], "quarantine"),
    ("r8", ["city_coercible", "zip_coercible"], "quarantine"),
]


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
            (r[0], r[1], r[2], r[3], sorted(r[4] or [])) for r in
            project.query("select parcel_id, city, zip, country, _quality_flags from silver.parcel"))
        out["rejects"] = sorted(
            (r[0], sorted(r[1]), r[2]) for r in
            project.query("select _source_row_id, failed_rules, disposition from silver.parcel__reject where resolved_at is null"))
        out["bronze"] = project.query('select count(*) from bronze."raw_parcels"')[0][0]
        if runner.target == "sqlmesh":
            project.close()  # DuckDB: one process cannot hold the file twice
        said = CliRunner().invoke(cli, ["explain", "parcel", "P2", "--spec", str(spec), "--project", str(project.path)])
        out["explain"] = (said.exit_code, said.output)
        said = CliRunner().invoke(cli, ["explain", "parcel", "P5", "--spec", str(spec), "--project", str(project.path)])
        out["explain_pii"] = (said.exit_code, said.output)
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
    code, text = built["explain"]
    assert code == 0, text
    assert "rule city_coercible (quarantine): fired" in text and "rule zip_coercible (quarantine): fired" in text, text
    assert "rule country_coercible (flag): held" in text, text
    assert "city: bronze payload = '{not json' is not JSON, so $.payload.loc.city could not be read" in text, text
    assert "zip: bronze payload = '{not json' is not JSON, so $.payload.loc.zip could not be read and did not become a int" in text, text


def test_explain_says_a_pii_column_is_not_json_without_showing_it(built):
    """`country` is pii: its bronze column's value is never shown, but that it is not JSON is no
    private fact (an outside tester saw `did not become a string` with no reason)."""
    code, text = built["explain_pii"]
    assert code == 0, text
    assert "country: bronze meta = (pii: not shown) is not JSON, so $.meta.country could not be read" in text, text
    assert "oops" not in text, text
