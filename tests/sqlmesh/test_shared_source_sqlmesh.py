"""Two mappings of one entity read one bronze relation (decision 0947), through `sqlmesh plan` on DuckDB.

The bronze of each build, the spec fix, the replay and the hand-written expectations are the dbt
story's (tests/integration/test_shared_source_dbt.py), imported rather than copied so both
targets are judged on the same history. Each build is one SQLMesh interval later than the
previous one, as production runs are; replay runs its library function on the project's DuckDB
file with SQLMesh's connection closed meanwhile.
"""

from __future__ import annotations

import pytest

from tests.integration.test_shared_source_dbt import BUILDS, check_build, check_replayed, tell, write_spec
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> dict:
    from assay.api_sqlmesh import generate_sqlmesh_project

    root = tmp_path_factory.mktemp("sqlmesh_shared_source")
    spec = root / "spec"
    write_spec(spec, fixed=False)
    project = make_project(root / "project", spec)

    def regenerate() -> None:
        result = generate_sqlmesh_project(spec, project.path)
        assert not result.report.conflicts, result.report.conflicts

    try:
        yield tell(project, spec, project.path / "warehouse.duckdb", regenerate, lambda name: project.plan(),
                   pause=project.close, resume=lambda: project.context(fresh=True))
    finally:
        project.close()


@pytest.mark.parametrize("build", BUILDS)
def test_every_build_places_and_records_as_the_rules_say(story, build):
    check_build(story[build], build)


def test_replay_puts_back_one_bronze_row_per_source_row(story):
    check_replayed(story["b3"], story["redelivered"])
