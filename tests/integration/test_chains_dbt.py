"""Field chains whose casts hide inside other steps (decision 0019), built by dbt on DuckDB and
PostgreSQL 18.

Arithmetic reads a text operand as a number, a number goes into an `int` field, and `nullif`
makes a NULL on purpose before a cast. A value that does not convert must be quarantined by
`<col>_coercible`, a whole number must convert, and a NULL made on purpose is `not_null`'s. The
expected rows are written by hand below.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

SPEC = {
    "entities.yaml": """\
spec_version: 1
entities:
  price:
    grain: one row per sku
    key: [sku]
    fields:
      sku: {type: string}
      cents: {type: int}
      rounded: {type: "decimal(10,1)"}
      pos: {type: "decimal(10,2)"}
      qty: {type: int}
    quarantine: {retention: 7d}
""",
    "mapping_prices.yaml": """\
mapping_version: 1
source: raw_prices
target: price
key:
  sku: {from: "$.sku"}
fields:
  cents: {from: "$.eur", transform: [trim, {multiply: 100}]}
  rounded: {from: "$.eur", transform: [{round: 1}]}
  pos: {from: "$.eur", transform: [abs]}
  qty:
    from: "$.qty"
    transform: [trim, {nullif: "n/a"}, to_int]
    quality: [{rule: not_null, on_fail: quarantine}]
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
}
COLUMNS = ["_load_id", "_ingested_at", "_source_row_id", "sku", "eur", "qty"]
AT = "2026-01-01T10:00:00Z"
BRONZE = [
    ["l1", AT, "r1", "k1", "12.34", "7"],  # 12.34 * 100 is the whole number 1234
    ["l1", AT, "r2", "k2", "abc", "7"],  # no number: every arithmetic field fails to convert
    ["l1", AT, "r3", "k3", "1.5", "n/a"],  # NULL on purpose: not_null's, not coercible's
    ["l1", AT, "r4", "k4", "12.345", "seven"],  # 1234.5 is no int; `seven` is none
    ["l1", AT, "r5", "k5", "0.5", "2.5"],  # the text 2.5 is no int
    ["l1", AT, "r6", "k6", "-7.24", " 3 "],
    ["l1", AT, "r7", None, "2", "1"],  # no key: kept, and explained by its source row
]
KEPT = {
    "k1": (1234, Decimal("12.3"), Decimal("12.34"), 7),
    "k6": (-724, Decimal("-7.2"), Decimal("7.24"), 3),
    None: (200, Decimal("2.0"), Decimal("2.00"), 1),
}
REJECTED = {
    "k2": ["cents_coercible", "pos_coercible", "rounded_coercible"],
    "k3": ["qty_not_null"],
    "k4": ["cents_coercible", "qty_coercible"],
    "k5": ["qty_coercible"],
}


def _rules(value) -> list:
    return sorted(value) if isinstance(value, (list, tuple)) else sorted(v for v in str(value).split(",") if v)


def _check(project, spec) -> None:
    project.load_bronze([Relation("raw_prices", COLUMNS, BRONZE)])
    project.dbt("build", check=True)
    kept = {r[0]: tuple(r[1:]) for r in project.query("select sku, cents, rounded, pos, qty from silver.price")}
    assert kept == KEPT
    rejected = {r[0]: _rules(r[1]) for r in project.query(
        "select key_values, failed_rules from silver.price__reject where resolved_at is null")}
    assert {k.split('"')[3]: v for k, v in rejected.items()} == REJECTED
    # A key with a NULL part names no row: explain finds the kept delivery itself in the entity
    from click.testing import CliRunner

    from assay.cli.main import cli

    said = CliRunner().invoke(cli, ["explain", "price", "--source-row-id", "r7", "--project", str(project.path),
                                    "--spec", str(spec)])
    assert said.exit_code == 0 and "It is in the entity (published)." in said.output, said.output


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    root = tmp_path_factory.mktemp("chains")
    for name, text in SPEC.items():
        (root / name).write_text(text)
    return root


def test_chains_on_duckdb(spec, tmp_path):
    _check(make_project(tmp_path / "project", spec), spec)


@pytest.mark.postgres
def test_chains_on_postgres(spec, tmp_path, postgres_database):
    _check(make_project(tmp_path / "project", spec, engine="postgres", pg=postgres_database("chains")), spec)
