"""A reject row's life when deliveries come and go, through `sqlmesh plan` on DuckDB.

The bronze of each build and the hand-written expectations are the dbt story's
(tests/integration/test_reject_lifecycle_dbt.py), imported rather than copied so both targets
are judged on the same history: a quarantined delivery leaves bronze while an older one of the
same source row stays (o2 kept, o3 diverted), and a bad re-delivery reopens a resolved reject
row (o1). Each build is one SQLMesh interval later than the previous one, as production runs are.
"""

from __future__ import annotations

import pytest

from tests.integration.test_reject_lifecycle_dbt import BUILDS, SPEC_FILES, check_build, check_stamps, read_state, relations
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("sqlmesh_reject_lifecycle")
    spec = root / "spec"
    spec.mkdir()
    for name, text in SPEC_FILES.items():
        (spec / name).write_text(text)
    project = make_project(root / "project", spec)
    out = {}
    try:
        for build in BUILDS:
            project.load_bronze(relations(build))
            project.plan()
            out[build] = read_state(project.query)
        yield out
    finally:
        project.close()


@pytest.mark.parametrize("build", BUILDS)
def test_every_build_places_and_records_as_the_rules_say(story, build):
    check_build(story[build], build)


def test_resolution_stamps(story):
    check_stamps(story)
