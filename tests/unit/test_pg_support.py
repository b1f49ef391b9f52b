"""The PostgreSQL 15 engine is always a collected parameter: when its server binaries are
missing its tests are reported as skipped with the reason, never silently absent."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import pg

# Why this module also runs on PostgreSQL 15 (tests/conftest.py runs the others on DuckDB and PostgreSQL 18).
PG15 = "these tests are about finding and starting PostgreSQL 15 itself"


REPO = Path(__file__).resolve().parents[2]


def test_system_server_is_found_at_the_debian_path_without_the_variable(monkeypatch, tmp_path):
    fake = tmp_path / "15" / "bin"
    fake.mkdir(parents=True)
    (fake / "postgres").write_text("")
    monkeypatch.delenv("ASSAY_PG_BIN", raising=False)
    monkeypatch.setattr(pg, "DEBIAN_PG15_BIN", fake)
    assert pg.available_servers()["system"] == fake


def test_the_variable_wins_over_the_debian_path(monkeypatch, tmp_path):
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    (chosen / "postgres").write_text("")
    monkeypatch.setenv("ASSAY_PG_BIN", str(chosen))
    monkeypatch.setattr(pg, "DEBIAN_PG15_BIN", tmp_path / "absent")
    assert pg.available_servers()["system"] == chosen


def test_missing_pg15_is_a_skip_with_the_reason(monkeypatch, tmp_path):
    monkeypatch.delenv("ASSAY_TEST_MARKED_POSTGRES", raising=False)  # outside the suite's marker check
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("ASSAY_PG_BIN", str(tmp_path / "nowhere"))
    assert "system" not in pg.available_servers()
    with pytest.raises(pytest.skip.Exception, match=r"PostgreSQL 15 server binaries not found: no 'postgres' in .*nowhere"):
        next(pg.postgres_server("system"))


def test_missing_pg15_fails_in_ci(monkeypatch, tmp_path):
    monkeypatch.delenv("ASSAY_TEST_MARKED_POSTGRES", raising=False)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("ASSAY_PG_BIN", str(tmp_path / "nowhere"))
    with pytest.raises(pytest.fail.Exception, match=r"PostgreSQL 15 server binaries not found.*in CI \(CI=true\) every engine must run"):
        next(pg.postgres_server("system"))


def test_a_test_not_marked_postgres_may_not_start_a_server(monkeypatch):
    monkeypatch.setenv("ASSAY_TEST_MARKED_POSTGRES", "")  # what the suite's setup hook sets for an unmarked test
    with pytest.raises(pytest.fail.Exception, match="starts PostgreSQL but is not marked `postgres`"):
        next(pg.postgres_server("embedded"))


def test_pg15_tests_are_collected_and_skipped_when_the_binaries_are_missing(tmp_path):
    """A real pytest run: the PG15 parameter is collected and reported as a skip with its reason."""
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        from tests.support.pg import postgres_server_fixture
        postgres_server = postgres_server_fixture()
    """))
    (tmp_path / "test_probe.py").write_text("def test_probe(postgres_server):\n    pass\n")
    env = {**os.environ, "ASSAY_PG_BIN": str(tmp_path / "no-pg15-here"), "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("CI", None)  # a developer's machine: a missing server skips (in CI it fails, tested above)
    env.pop("ASSAY_TEST_MARKED_POSTGRES", None)  # the outer run's options (-v, say) change what is printed
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                str(tmp_path)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert "test_probe.py::test_probe[embedded-pg18]" in collected.stdout, collected.stdout
    assert "test_probe.py::test_probe[system-pg15]" in collected.stdout, collected.stdout
    ran = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-k", "system", str(tmp_path)],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stdout
    assert "1 skipped" in ran.stdout and "PostgreSQL 15 server binaries not found" in ran.stdout, ran.stdout
