"""`in_set` values must be of the column's type: a value that can never match reads as a rule that holds."""

from __future__ import annotations

import pytest

from assay.ir.resolve import compile_spec

ENTITY = """spec_version: 1
entities:
  thing:
    grain: one row per thing
    key: [id]
    fields: {{id: {{type: string}}, v: {{type: {type}}}}}
    quarantine: {{retention: 7d}}
"""
MAPPING = """mapping_version: 1
source: raw_things
target: thing
key: {{id: {{from: "$.id"}}}}
fields:
  v: {{from: "$.v", quality: [{{rule: in_set, values: {values}, on_fail: flag}}]}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def _diags(tmp_path, type_, values):
    (tmp_path / "e.yml").write_text(ENTITY.format(type=type_))
    (tmp_path / "m.yml").write_text(MAPPING.format(values=values))
    return compile_spec(tmp_path)[1]


@pytest.mark.parametrize(
    "type_, values",
    [("int", "[1, 2]"), ('"decimal(10,2)"', "[1.5, '2.25']"), ("bool", "[true]"), ("date", "['2026-01-01']"), ("string", "[a, 1]")],
)
def test_values_of_the_column_type_are_accepted(tmp_path, type_, values):
    assert _diags(tmp_path, type_, values) == []


@pytest.mark.parametrize(
    "type_, values, bad",
    [("int", "[1, x]", "'x'"), ("int", "[1.5]", "1.5"), ("bool", "[yes_please]", "'yes_please'"), ("date", "[soon]", "'soon'")],
)
def test_a_value_that_can_never_match_is_refused(tmp_path, type_, values, bad):
    diags = _diags(tmp_path, type_, values)
    assert len(diags) == 1
    d = diags[0]
    assert d.file == "m.yml" and d.line == 6
    assert f"lists {bad}, which no" in d.message and "write values of the column's type" in d.message


def test_typed_columns_compare_typed_values(tmp_path):
    """1.50 and 1.5 are one decimal but two texts: the generated predicate compares numbers."""
    from assay.api import load_project
    from assay.targets.dbt import generate_dbt

    (tmp_path / "e.yml").write_text(ENTITY.format(type='"decimal(10,2)"'))
    (tmp_path / "m.yml").write_text(MAPPING.format(values="[1.5, '2.25']"))
    staged = generate_dbt(load_project(tmp_path))["models/assay/thing/thing__staged.sql"]
    assert "v not in (1.5, 2.25)" in staged
