"""The tests' dbt runner (tests/support/dbtserver.py): the CLI's exit codes and output, and a
command that hangs stopped at its deadline with the stacks printed, the server going on."""

from __future__ import annotations

import os

import pytest

from tests.support import dbtserver

pytestmark = pytest.mark.long("the tests' own dbt runner; every dbt test of the fast loop runs through it")


@pytest.fixture
def server(monkeypatch):
    """A server of this test's own, so its deadline does not touch the shared one."""
    def start(timeout: str):
        monkeypatch.setenv("ASSAY_TEST_DBT_TIMEOUT", timeout)  # read by the spawned server at import
        monkeypatch.setenv("ASSAY_TEST_DBT_WARM_UP", "0")  # one command: the warm-up would cost more than it saves
        srv = dbtserver._Server()
        started.append(srv)
        return srv

    started: list = []
    yield start
    for srv in started:
        srv.conn.close()
        srv.proc.join(30)


def test_exit_codes_and_output_are_the_clis(tmp_path):
    # Through this test process's own server, the one every dbt test calls (a server of its own
    # would cost another import of dbt, about 6 s).
    proc = dbtserver.dbt(["--version"], tmp_path, dict(os.environ))
    assert proc.returncode == 0 and "Core:" in proc.stdout, proc.stdout
    proc = dbtserver.dbt(["run", "--project-dir", str(tmp_path)], tmp_path, dict(os.environ))
    assert proc.returncode == 2 and "dbt raised: DbtUsageException" in proc.stdout, proc.stdout


def _hanging_project(path):
    """A dbt project whose one macro runs for minutes: a command that cannot beat any deadline
    (`dbt --version` can: with dbt imported, it returns in well under a second)."""
    (path / "macros").mkdir()
    (path / "dbt_project.yml").write_text("name: hang\nversion: '1.0'\nprofile: hang\nconfig-version: 2\n")
    (path / "profiles.yml").write_text(
        f"hang:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: '{path / 'w.duckdb'}'\n")
    (path / "macros" / "hang.sql").write_text(
        "{% macro hang() %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endmacro %}\n")
    return ["run-operation", "hang", "--project-dir", str(path), "--profiles-dir", str(path)]


def test_a_command_past_its_deadline_fails_with_its_stacks(server, tmp_path):
    srv = server("1")
    rc, out = srv.call(_hanging_project(tmp_path), str(tmp_path), dict(os.environ))
    assert rc == 2
    assert "dbt timed out after 1 s (ASSAY_TEST_DBT_TIMEOUT)" in out, out
    assert "Thread 0x" in out or "Current thread 0x" in out, out  # faulthandler's dump
    assert srv.proc.is_alive()  # the server goes on with the next command


def test_the_warm_up_builds_the_example_and_leaves_nothing_running():
    # What this process's server forks from after its warm-up: every command passed (else each
    # child redoes dbt's lazy work, and the suite slows by a third without failing), no thread the
    # build started, no adapter or DuckDB environment a child could inherit.
    assert dbtserver.server_state() == {"warmed": True, "threads_left": 0, "adapters_left": 0}
