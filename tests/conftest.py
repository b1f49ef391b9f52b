"""Fixtures shared across test packages. Keep this small: only what several packages need."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

# No tool the tests run may try the network: dbt's and SQLMesh's usage statistics are off (on a
# machine whose network drops packets, each attempt waits for its own time-out).
for _name, _value in (("DO_NOT_TRACK", "1"), ("DBT_SEND_ANONYMOUS_USAGE_STATS", "false"),
                      ("SQLMESH__DISABLE_ANONYMIZED_ANALYTICS", "1")):
    os.environ.setdefault(_name, _value)

FIXTURES = Path(__file__).parent / "fixtures"
BASE_SPEC = FIXTURES / "specs" / "base"


@pytest.fixture
def write_spec(tmp_path):
    """Write a spec directory and return it.

    `write_spec({name: text})` starts from the valid two-entity spec in
    fixtures/specs/base, replaces or adds the given files (text is dedented, so
    line 1 is the first line of the literal) and deletes those mapped to None.
    Pass `base=False` for a directory holding only the given files.
    """

    def write(files: dict, base: bool = True) -> Path:
        root = tmp_path / "spec"
        if root.exists():
            shutil.rmtree(root)
        if base:
            shutil.copytree(BASE_SPEC, root)
        root.mkdir(exist_ok=True)
        for name, text in files.items():
            path = root / name
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return root

    return write


def pytest_collection_modifyitems(config, items):
    """Spark test files first, everything else in its usual order.

    The suite runs on two workers, one file at a time each (`--dist loadfile`), in collection
    order (`--no-loadscope-reorder` in scripts/test.sh: by default xdist sends the files with the
    most tests first, which put the Spark files, few tests but minutes each, at the end). A Spark
    file costs minutes (a JVM, then about 2 s per dbt node); run last, the Spark files ran alone
    while the other worker sat idle. Started first, they overlap with the many short files
    instead (longest jobs first).
    """
    items[:] = sorted(items, key=lambda item: 0 if item.get_closest_marker("spark") else 1)
