"""Typed `in_set` on a real build, on every engine: a decimal column compares numbers.

`in_set: [1.5]` on a `decimal(10,2)` column holds for "1.50" and "1.5" (both the decimal 1.50)
and fires for "2"; comparing text forms would fire on "1.50". The oracle says so
(tests/unit/test_oracle.py pins it by hand); this runs `dbt build` on DuckDB, PostgreSQL 18
and PostgreSQL 15 and compares the whole warehouse with the oracle.
"""

from __future__ import annotations

import json
import textwrap
from decimal import Decimal

import pytest

from tests.support.corpus import Relation
from tests.support.oracle import Warehouse, expected_state, observed_state, placements

pytestmark = pytest.mark.slow

ENTITY = """
spec_version: 1
entities:
  thing:
    grain: one row per thing
    key: [id]
    fields:
      id: {type: string, required: true}
      v: {type: "decimal(10,2)"}
      n: {type: int}
    quarantine: {retention: 7d}
"""
MAPPING = """
mapping_version: 1
source: raw_things
target: thing
key:
  id: {from: "$.id"}
fields:
  v:
    from: "$.v"
    transform: [{to_decimal: [10, 2]}]
    quality:
      - {rule: in_set, values: [1.5], on_fail: flag}
  n:
    from: "$.n"
    transform: [to_int]
    quality:
      - {rule: in_set, values: [7, "8"], on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
COLUMNS = ["_load_id", "_ingested_at", "_source_row_id", "id", "v", "n"]
AT = "2026-03-01T08:00:00Z"
ROWS = [
    ["l1", AT, "s1", "A", "1.50", "7"],
    ["l1", AT, "s2", "B", "1.5", "08"],
    ["l1", AT, "s3", "C", "2", "7"],
    ["l1", AT, "s4", "D", "1.5", "9"],
    ["l1", AT, "s5", "E", None, None],
]


def test_in_set_compares_values_of_the_column_type(tmp_path, engine):
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entity.yaml").write_text(textwrap.dedent(ENTITY).lstrip())
    (spec / "mapping.yaml").write_text(textwrap.dedent(MAPPING).lstrip())
    project = engine.dbt_project(tmp_path / "project", spec, "in_set_typed")
    project.load_bronze([Relation("raw_things", COLUMNS, ROWS)])
    project.dbt("build", check=True)
    run_id = json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]

    bronze = {"raw_things": [dict(zip(COLUMNS, r)) for r in ROWS]}
    wh = Warehouse(spec)
    build = wh.build(bronze)
    # by hand, first: the oracle's own reading
    assert {r.srid: (r.route, r.failed_rules) for r in build["thing"].rows} == {
        "s1": ("kept", ()), "s2": ("kept", ()), "s3": ("kept", ("v_in_set",)),
        "s4": ("quarantined", ("n_in_set",)), "s5": ("kept", ()),
    }
    observed, expected = observed_state(project.query, spec, run_id), expected_state(wh, build)
    assert {r[1]: (r[3], r[-2]) for r in observed["entity"]["thing"]} == {
        "s1": (Decimal("1.50"), ()), "s2": (Decimal("1.50"), ()), "s3": (Decimal("2.00"), ("v_in_set",)),
        "s5": (None, ()),
    }
    for part in ("entity", "staged", "reject", "mart"):
        assert observed[part] == expected[part], part
    assert {k: v for k, v in placements(project.query, spec, bronze).items() if len(v) != 1} == {}
