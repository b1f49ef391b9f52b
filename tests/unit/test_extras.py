"""One DuckDB for both targets: every extra that brings DuckDB admits only versions SQLMesh also
admits. A warehouse file written by a newer DuckDB cannot be opened by an older one ("database file
with version number ..."), so if `pip install '.[dbt]'` could resolve a DuckDB that SQLMesh refuses,
adding `.[sqlmesh]` afterwards would downgrade DuckDB and strand every warehouse built before."""

from __future__ import annotations

import importlib.metadata as md
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
# Releases on both sides of every bound in play (SQLMesh's <2, DuckDB's own majors).
PROBES = [Version(v) for v in ("1.2.2", "1.3.2", "1.4.4", "1.5.6", "1.9.0", "2.0.0", "2.0.1", "2.1.0", "3.0.0")]


def _duckdb_specifiers(requirements) -> list:
    reqs = [Requirement(r) for r in requirements]
    return [r.specifier for r in reqs if r.name.lower() == "duckdb" and (r.marker is None or r.marker.evaluate({"extra": ""}))]


def _admitted(specifiers) -> set:
    return {v for v in PROBES if all(v in s for s in specifiers)}


def test_every_extra_with_duckdb_admits_only_what_sqlmesh_admits():
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    sqlmesh_own = _duckdb_specifiers(md.requires("sqlmesh") or [])
    assert sqlmesh_own, "SQLMesh no longer states a DuckDB requirement: look again at what it accepts"
    sqlmesh_admits = _admitted(sqlmesh_own)
    for name in ("dbt", "sqlmesh", "test"):
        own = _duckdb_specifiers(extras[name])
        assert own, f"the {name} extra does not bound DuckDB, so it may resolve one SQLMesh refuses"
        extra_admits = _admitted(own)
        assert extra_admits and extra_admits <= sqlmesh_admits, (name, sorted(map(str, extra_admits - sqlmesh_admits)))


def test_the_installed_duckdb_is_one_both_targets_accept():
    installed = Version(md.version("duckdb"))
    for requirement in md.requires("sqlmesh") + md.requires("dbt-duckdb"):
        req = Requirement(requirement)
        if req.name.lower() == "duckdb" and (req.marker is None or req.marker.evaluate({"extra": ""})):
            assert installed in req.specifier, (str(req), str(installed))
