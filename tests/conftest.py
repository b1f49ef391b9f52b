"""Fixtures shared across test packages. Keep this small: only what several packages need."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

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
    order. A Spark file costs minutes (a JVM, then about 2 s per dbt node); collected last, the
    Spark files ran alone at the end while the other worker sat idle. Started first, they overlap
    with the many short files instead (longest jobs first).
    """
    items[:] = sorted(items, key=lambda item: 0 if item.get_closest_marker("spark") else 1)
