"""The tests' dbt runner (tests/support/dbtserver.py): the CLI's exit codes and output, and a
command that hangs stopped at its deadline with the stacks printed, the server going on."""

from __future__ import annotations

import os

import pytest

from tests.support import dbtserver


@pytest.fixture
def server(monkeypatch):
    """A server of this test's own, so its deadline does not touch the shared one."""
    def start(timeout: str):
        monkeypatch.setenv("ASSAY_TEST_DBT_TIMEOUT", timeout)  # read by the spawned server at import
        srv = dbtserver._Server()
        started.append(srv)
        return srv

    started: list = []
    yield start
    for srv in started:
        srv.conn.close()
        srv.proc.join(30)


def test_exit_codes_and_output_are_the_clis(server, tmp_path):
    srv = server("900")
    rc, out = srv.call(["--version"], str(tmp_path), dict(os.environ))
    assert rc == 0 and "Core:" in out, out
    rc, out = srv.call(["run", "--project-dir", str(tmp_path)], str(tmp_path), dict(os.environ))
    assert rc == 2 and "dbt raised: DbtUsageException" in out, out


def test_a_command_past_its_deadline_fails_with_its_stacks(server, tmp_path):
    srv = server("0.3")  # shorter than any dbt command: parsing its arguments takes longer
    rc, out = srv.call(["--version"], str(tmp_path), dict(os.environ))
    assert rc == 2
    assert "dbt timed out after 0 s (ASSAY_TEST_DBT_TIMEOUT)" in out, out
    assert "Thread 0x" in out or "Current thread 0x" in out, out  # faulthandler's dump
    assert srv.proc.is_alive()  # the server goes on with the next command
