"""dbt for the tests: the real dbt, invoked in a long-lived child process instead of a new CLI
process per command.

Importing dbt costs about 4 s of CPU (`dbt --version` takes 4.1 s here), paid again by every
`dbt` CLI process; the suites run several hundred dbt commands on 2 cores. One child per test
process imports dbt once and runs each command with dbt's programmatic entry point
(`dbtRunner().invoke`), which is dbt's own CLI (the same click command, flags, parsing, adapters)
minus the process start. The child, not the test process, opens the warehouse, so a DuckDB file
is free again as soon as the command returns, exactly as with the CLI (dbt closes its connections
at the end of every invocation; dbt-duckdb's shared database is closed here, `_release_duckdb`).

What a command prints (dbt's log and anything the adapter writes to the terminal) is captured at
the file-descriptor level and returned as stdout; stderr is empty (dbt logs to stdout). The exit
code is the CLI's: 0 success, 1 a failed node, 2 an error dbt raised. A child that dies (a crash
in a driver) is replaced for the next command.

`ASSAY_TEST_DBT_CLI=1` runs the `dbt` executable instead, one process per command.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional


def run_dbt(args: list, cwd: str) -> tuple[int, str]:
    """dbt in this process, stdout and stderr (dbt's and any child's) captured at the fd level."""
    from dbt.cli.main import dbtRunner

    os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    with tempfile.TemporaryFile(mode="w+b") as out:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        old_cwd = os.getcwd()
        try:
            os.chdir(cwd)
            try:
                res = dbtRunner().invoke(list(args))
                rc = 0 if res.success else (1 if res.exception is None else 2)
                if res.exception is not None:
                    print(f"dbt raised: {res.exception!r}")
            except BaseException as exc:  # a crash in dbt must not end the server
                print(f"dbt crashed: {exc!r}")
                rc = 2
        finally:
            _release_duckdb()
            os.chdir(old_cwd)
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        return rc, out.read().decode("utf-8", "replace")


def _release_duckdb() -> None:
    """Close the DuckDB database dbt-duckdb keeps open between invocations of one process (its
    class-level environment), so the test, like after a CLI run, can open the file."""
    mod = sys.modules.get("dbt.adapters.duckdb.connections")
    if mod is None:
        return
    manager = mod.DuckDBConnectionManager
    env, manager._ENV = manager._ENV, None
    if env is not None:
        env.close()


def _serve(conn) -> None:
    """The child: dbt commands until the pipe closes."""
    import dbt.cli.main  # noqa: F401 - the import this process exists to pay once

    while True:
        try:
            args, cwd, env = conn.recv()
        except EOFError:
            return
        os.environ.clear()
        os.environ.update(env)
        conn.send(run_dbt(args, cwd))


class _Server:
    def __init__(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def call(self, args: list, cwd: str, env: dict) -> tuple[int, str]:
        self.conn.send((list(args), cwd, env))
        while not self.conn.poll(1):
            if not self.proc.is_alive():
                raise RuntimeError(f"the dbt process died (exit code {self.proc.exitcode}) running dbt {' '.join(args)}")
        return self.conn.recv()


_SERVER: list = []  # this process's dbt child, started on first use


def dbt(args: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run `dbt ARGS` in `cwd` with `env`; a CompletedProcess as the CLI's would be."""
    if os.environ.get("ASSAY_TEST_DBT_CLI") == "1":
        exe = Path(sys.executable).with_name("dbt")
        return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True)
    if not _SERVER or not _SERVER[0].proc.is_alive():
        _SERVER[:] = [_Server()]
    try:
        rc, out = _SERVER[0].call(args, str(cwd), env)
    except RuntimeError as exc:
        _SERVER.clear()
        return subprocess.CompletedProcess(["dbt", *args], 2, f"{exc}\n", "")
    return subprocess.CompletedProcess(["dbt", *args], rc, out, "")


# dbt quiet and without colour codes in what it prints: the package tests read its log lines.
QUIET = {"DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_USE_COLORS": "false"}


def in_project(project: Path, *args: str, env: Optional[dict] = None, check: bool = False) -> subprocess.CompletedProcess:
    """`dbt ARGS` on the dbt project in `project`, which holds its own profiles.yml; `env` adds to
    the test's environment; `check` fails the test, with dbt's output, unless dbt exits 0."""
    proc = dbt([*args, "--project-dir", str(project), "--profiles-dir", str(project)], project,
               {**os.environ, **QUIET, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"dbt {' '.join(args)} failed:\n{proc.stdout[-6000:]}")
    return proc
