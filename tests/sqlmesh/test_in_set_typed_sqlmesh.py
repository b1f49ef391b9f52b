"""Typed `in_set` through `sqlmesh plan`, on every engine, judged against the oracle.

The same spec and bronze as tests/integration/test_in_set_typed_dbt.py: `in_set: [1.5]` on a
`decimal(10,2)` column holds for "1.50" and "1.5" and fires for "2".
"""

from __future__ import annotations

import textwrap

import pytest

from tests.integration.test_in_set_typed_dbt import COLUMNS, ENTITY, MAPPING, ROWS
from tests.integration.test_multiload import START
from tests.support.runners.sqlmesh import pin_clock
from tests.support.corpus import Relation
from tests.support.oracle import Warehouse, expected_state, observed_state, placements

pytestmark = pytest.mark.slow


def test_in_set_compares_values_of_the_column_type(tmp_path, engine):
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entity.yaml").write_text(textwrap.dedent(ENTITY).lstrip())
    (spec / "mapping.yaml").write_text(textwrap.dedent(MAPPING).lstrip())
    project = engine.sqlmesh_project(tmp_path / "project", spec, "in_set_typed_sqlmesh")
    pin_clock(project, START)
    try:
        project.load_bronze([Relation("raw_things", COLUMNS, ROWS)])
        plan_id = f"SQLMESH_PLAN: {project.plan().plan_id}"
        bronze = {"raw_things": [dict(zip(COLUMNS, r)) for r in ROWS]}
        wh = Warehouse(spec)
        build = wh.build(bronze)
        observed, expected = observed_state(project.query, spec, plan_id), expected_state(wh, build)
        flags = {r[1]: r[-2] for r in observed["entity"]["thing"]}
        assert flags == {"s1": (), "s2": (), "s3": ("v_in_set",), "s5": ()}
        for part in ("entity", "staged", "reject", "mart"):
            assert observed[part] == expected[part], part
        assert {k: v for k, v in placements(project.query, spec, bronze).items() if len(v) != 1} == {}
    finally:
        project.close()
