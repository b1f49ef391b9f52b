"""A spec change that changes an entity model, planned over an existing SQLMesh project.

The mart is forward-only (INCREMENTAL_UNMANAGED), so a plan that changes an upstream model
migrates the mart's physical table in place when its inferred columns differ from the stored
ones. On PostgreSQL that migration is refused while the virtual layer's view reads the column,
so the mart's columns must be typed the same way on every plan. This builds, changes the spec
(a SQL check file on `reading` changes the entity model), regenerates and plans again on every
engine: the second plan applies and the mart keeps the first plan's rows beside the second's.
"""

from __future__ import annotations

import pytest

from assay.api_sqlmesh import generate_sqlmesh_project
from tests.sqlmesh.test_checks_sqlmesh import PASSING, STATIONS, write_spec

pytestmark = pytest.mark.slow


def test_a_changed_entity_model_plans_over_the_existing_mart(engine, tmp_path):
    spec = write_spec(tmp_path / "spec", block_file=False)
    project = engine.sqlmesh_project(tmp_path / "sqlmesh", spec, "regenerate")
    try:
        project.load_bronze([STATIONS, PASSING])
        first = project.plan().plan_id
        write_spec(spec, block_file=True)
        result = generate_sqlmesh_project(spec, project.path, dialect=project.dialect)
        assert not result.report.conflicts
        assert any(path.endswith("reading.sql") for path in result.report.written), result.report.written
        project.context(fresh=True)
        second = project.plan().plan_id
        runs = project.query(
            "select run_id, count(*) from gold.mart_data_quality where entity = 'reading' and rule = '(entity)' "
            "group by run_id order by run_id"
        )
        assert {r[0] for r in runs} == {f"SQLMESH_PLAN: {first}", f"SQLMESH_PLAN: {second}"}
        assert all(r[1] == 1 for r in runs)
        assert [r[0] for r in project.query("select reading_id from silver.reading order by reading_id")] == ["r1", "r2", "r3", "r4"]
    finally:
        project.close()
