"""The test processes' settings for the tools they run in-process (tests/conftest.py says why)."""

from __future__ import annotations


def test_sqlmesh_loads_projects_in_the_test_process():
    """MAX_FORK_WORKERS is read when sqlmesh is first imported: set any later and every plan of
    the suite forks a loading pool again beside the other workers."""
    from sqlmesh.core import constants

    assert constants.MAX_FORK_WORKERS == 1
