"""dbt for the tests: the real dbt, each command in a process of its own that starts with dbt
already imported.

Importing dbt costs about 4 s of CPU (`dbt --version` takes 4.1 s here), paid again by every
`dbt` CLI process; the suites run several hundred dbt commands on 2 cores. One server per test
process imports dbt once and compiles the macros of dbt, its adapters and assay's package into
dbt's template cache (about a third of a small build's time when each command did it again),
then builds assay's example once (`_warm_up`: the serialisation code dbt generates for each of
its classes on first use, about 1 s of every small build when each child generated it again),
then forks a fresh child for every command, which runs it with dbt's
programmatic entry point (`dbtRunner().invoke`: dbt's own CLI, the same click command, flags,
parsing and adapters, minus the import) and exits. Nothing outlives a command: no connection, no
adapter state, no dbt-duckdb shared database, exactly as with the CLI (decision 0026 says why an
earlier form, every command in one long-lived process, was dropped).

The server forks only while it has one thread (it imports dbt, the adapters and the task modules,
none of which starts a thread, and checks that; the warm-up's DuckDB database is closed and its
adapter dropped, and the server checks that no thread it started is left), so each child starts
from a consistent copy.

What a command prints (dbt's log and anything the adapter writes to the terminal) is captured at
the file-descriptor level and returned as stdout; stderr is empty (dbt logs to stdout). The exit
code is the CLI's: 0 success, 1 a failed node, 2 an error dbt raised. A command that runs past
`ASSAY_TEST_DBT_TIMEOUT` seconds (default 900) is stopped with SIGABRT, which makes Python print
every thread's stack into its output first, and returns 2: a hang becomes a failure that shows
where it hung.

`ASSAY_TEST_DBT_CLI=1` runs the `dbt` executable instead, one process per command.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Optional

from . import heap

TIMEOUT = float(os.environ.get("ASSAY_TEST_DBT_TIMEOUT", "900"))


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
            rc = _invoke(dbtRunner, args)
        finally:
            os.chdir(old_cwd)
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        return rc, out.read().decode("utf-8", "replace")


def _invoke(runner, args: list) -> int:
    try:
        res = runner().invoke(list(args))
    except BaseException as exc:  # a crash in dbt is the command's failure, reported as the CLI would
        print(f"dbt crashed: {exc!r}")
        return 2
    if res.exception is not None:
        print(f"dbt raised: {res.exception!r}")
    return 0 if res.success else (1 if res.exception is None else 2)


def _command(args: list, cwd: str, env: dict) -> tuple[int, str]:
    """One command in a forked child, its output in a file the child writes to at the fd level."""
    with tempfile.NamedTemporaryFile(prefix="assay-dbt-", suffix=".log", delete=False) as f:
        log = f.name
    try:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 2
            try:
                fd = os.open(log, os.O_WRONLY | os.O_APPEND)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                faulthandler.enable(all_threads=True)  # SIGABRT prints every thread's stack
                os.environ.clear()
                os.environ.update(env)
                os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
                os.chdir(cwd)
                from dbt.cli.main import dbtRunner

                code = _invoke(dbtRunner, args)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        rc, note = _wait(pid)
        with open(log, "rb") as f:
            out = f.read().decode("utf-8", "replace")
        return rc, out + note
    finally:
        os.unlink(log)


def _wait(pid: int) -> tuple[int, str]:
    if not _ended_in_time(pid):
        os.kill(pid, signal.SIGABRT)
        os.waitpid(pid, 0)
        return 2, f"\ndbt timed out after {TIMEOUT:.0f} s (ASSAY_TEST_DBT_TIMEOUT); the stacks above are where it was\n"
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 2, f"\ndbt died of signal {os.WTERMSIG(status)}\n"
    return os.WEXITSTATUS(status), ""


def _ended_in_time(pid: int) -> bool:
    """Whether the child `pid` ends within TIMEOUT: woken when it ends (a pidfd), else by polling."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # before Linux 5.3 or Python 3.9
        deadline = time.monotonic() + TIMEOUT
        # WNOWAIT: the child is left to be reaped by the caller, which reads its status
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True
    try:
        return bool(select.select([fd], [], [], TIMEOUT)[0])
    finally:
        os.close(fd)


# Imported once by the server as well, so no child pays for them (about 1 s a command on a loaded
# machine): the adapters the suites use and the task modules every build loads. None of them starts
# a thread on import, which the server checks, since a fork copies only the calling thread.
PREIMPORT = ("dbt.adapters.duckdb", "dbt.adapters.postgres", "dbt.task.build", "dbt.task.deps",
             "dbt.task.freshness", "dbt.task.run_operation")


# The macros whose compiled Jinja the server keeps for its children: dbt's own and its adapters'
# (the `dbt.include` namespace), and assay's package as every test project installs it.
PACKAGE_MACROS = Path(__file__).resolve().parents[2] / "dbt_package" / "macros"
MACRO_BLOCKS = {"macro", "materialization", "test", "data_test"}


def _compile_macros() -> int:
    """Parse and compile, once, every macro a test project's command may call, into dbt's caches.

    A child forked per command starts with dbt's caches empty: every command parsed again the
    few hundred macro files of dbt, its adapters and assay's package (cutting them into blocks,
    the Jinja syntax tree of each, the macros each calls) and compiled every macro it called,
    about 1 s of a small `dbt build`'s 3 and more of a first build's full parse. dbt's own test
    framework (`dbt.tests.fixtures.project`) turns on the caches dbt keeps for that across runs,
    `enable_test_caching()`: keyed by the exact text, so a child still parses and renders exactly
    what dbt's CLI would, and a file changed on disk has another text, misses, and is parsed by
    the child as before. Filled here, every child inherits them; compiled templates live in
    `template_cache`, which dbt keeps in every process.
    """
    import dbt.include
    from dbt.clients.jinja_static import statically_extract_macro_calls
    from dbt_common.clients import jinja
    from dbt_common.tests import enable_test_caching

    enable_test_caching()
    files = sorted(f for root in dbt.include.__path__ for f in Path(root).glob("**/macros/**/*.sql"))
    files += sorted(PACKAGE_MACROS.glob("**/*.sql"))
    compiled = 0
    for path in files:
        try:
            # the arguments dbt's macro parser passes (dbt/parser/macros.py), so the cache key matches
            blocks = jinja.extract_toplevel_blocks(path.read_text(encoding="utf-8"), allowed_blocks=MACRO_BLOCKS,
                                                   collect_raw_data=False)
        except Exception:  # a file dbt cannot parse: its command reports it, as with the CLI
            continue
        for block in blocks:
            try:
                jinja.parse(block.full_block)
                jinja.template_cache.get_node_template(_MacroText(block.full_block))
                compiled += 1
                # caches the syntax tree before it looks the calls up, which needs a project
                statically_extract_macro_calls(block.full_block, {}, None)
            except Exception:
                continue
    return compiled


class _MacroText:
    """What `template_cache` reads of a macro node: its text."""

    def __init__(self, macro_sql: str):
        self.macro_sql = macro_sql


def _native_threads() -> int:
    """The threads of this process the kernel knows, Python's and those a library started (DuckDB's)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # no /proc: only Python's threads can be counted
        return threading.active_count()


# The example project every child's first command would otherwise teach dbt again (_warm_up).
WARM_UP_COMMANDS = (("deps",), ("build",), ("source", "freshness"), ("ls",))
WARM_UP_PROFILE = """shop:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: {path}
      schema: main
      threads: 1
      settings:
        threads: 1
"""


def _warm_up() -> bool:
    """Build assay's example once in the server, so every child starts with dbt's lazy work done.

    dbt's artifact and node classes are mashumaro dataclasses: the code that reads and writes each
    class (the partial-parse file, manifest.json, run_results.json, every node and config) is
    generated the first time the class is used, and the JSON schema a config is validated against
    is built on its first validation. A child forked from a server that had never run a command did
    all of it again for every command: about 0.6 s of a `dbt ls` that takes 0.2 s after it, and
    1 s of a small `dbt build`'s 2.3 s. None of it depends on the project: it is per class. So the
    server builds the example project (deps, build, source freshness, ls) once, in a temporary
    directory, on DuckDB with one thread for dbt and one for DuckDB, and forgets it: the adapter
    and DuckDB's database are closed and dropped, and `_serve` checks that no thread the build
    started is left before it forks. A child still reads, parses, renders and runs its own
    project exactly as dbt's CLI does; it only skips generating the same serialisation code again.
    A warm-up that fails leaves the children as they were before it (they redo the lazy work);
    it returns whether every command passed.
    """
    import shutil

    from dbt.cli.main import dbtRunner

    root = Path(tempfile.mkdtemp(prefix="assay-dbt-warm-up-"))
    project = root / "shop"
    old_cwd = os.getcwd()
    try:
        # made in a child: its DuckDB connection (and thread) end with it, and the server imports no assay
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                _make_warm_up_project(project)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            raise RuntimeError("the example project could not be made (its error is above)")
        os.chdir(project)
        for args in WARM_UP_COMMANDS:
            with open(os.devnull, "w") as sink:
                saved = os.dup(1), os.dup(2)
                os.dup2(sink.fileno(), 1)
                os.dup2(sink.fileno(), 2)
                try:
                    code = _invoke(dbtRunner, [*args, "--project-dir", str(project), "--profiles-dir", str(project)])
                finally:
                    os.dup2(saved[0], 1)
                    os.dup2(saved[1], 2)
                    os.close(saved[0])
                    os.close(saved[1])
            if code != 0:
                raise RuntimeError(f"dbt {' '.join(args)} exited {code}")
        return True
    except Exception as exc:  # the children then do the lazy work themselves, as before
        print(f"dbt server: the warm-up build did not complete ({exc!r}); each command does dbt's lazy work itself",
              file=sys.stderr)
        return False
    finally:
        os.chdir(old_cwd)
        _forget_adapters()
        shutil.rmtree(root, ignore_errors=True)


def _make_warm_up_project(project: Path) -> None:
    """assay's example as `assay demo` makes it, its bronze sample loaded, on the warm-up profile."""
    from assay.api import generate_dbt_project
    from assay.cli.init_cmd import init_project
    from assay.runtime.bronze import load_csv_dir_duckdb

    init_project(project)
    (project / "profiles.yml").write_text(WARM_UP_PROFILE.format(path=(project / "warehouse.duckdb").as_posix()),
                                          encoding="utf-8")
    result = generate_dbt_project(project, project)
    load_csv_dir_duckdb(project / "warehouse.duckdb", project / "bronze", result.project.schema("bronze"))


def _duckdb_connections():
    """dbt-duckdb's connection manager, whose class keeps the open database; None without dbt-duckdb."""
    try:
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    except ImportError:
        return None
    return DuckDBConnectionManager


def _forget_adapters() -> None:
    """Close what the warm-up's commands left open: DuckDB's database (and its threads), dbt's adapters."""
    from dbt.adapters.factory import reset_adapters

    DuckDBConnectionManager = _duckdb_connections()
    if DuckDBConnectionManager is not None:
        env, DuckDBConnectionManager._ENV = DuckDBConnectionManager._ENV, None
        if env is not None:
            try:
                env.close()
            except Exception as exc:  # a database left open keeps its threads: _serve then refuses to fork
                print(f"dbt server: the warm-up's DuckDB database did not close ({exc!r})", file=sys.stderr)
        # warned once per process: a child must warn again, as its own CLI process would
        DuckDBConnectionManager._LOGGED_MESSAGES.clear()
    reset_adapters()
    import gc

    gc.collect()


def _serve(conn) -> None:
    """The server: dbt imported once, then one forked child per command until the pipe closes."""
    import importlib

    # The warm-up's build imports numpy, whose OpenBLAS would start a thread per core here; the
    # server must hold no thread but its own when it forks, and dbt does no linear algebra.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import dbt.cli.main  # noqa: F401 - the import this process exists to pay once

    for name in PREIMPORT:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # an adapter this environment lacks: its commands fail in the child, as with the CLI
    _compile_macros()
    threads = _native_threads()
    warmed = _warm_up() if os.environ.get("ASSAY_TEST_DBT_WARM_UP", "1") == "1" else None
    heap.settle()  # every child inherits the server's objects; its collections skip them (tests/support/heap.py)
    if threading.active_count() != 1:
        raise RuntimeError(f"the dbt server has {threading.active_count()} threads after its imports; "
                           "forking it would copy a half-held lock (drop the import that starts one from PREIMPORT)")
    if _native_threads() > threads:
        raise RuntimeError(f"the dbt server's warm-up build left {_native_threads() - threads} thread(s) running "
                           "(DuckDB's, if its database was not closed); forking it would copy a half-held lock "
                           "(ASSAY_TEST_DBT_WARM_UP=0 turns the warm-up off)")

    state = {"warmed": warmed, "threads_left": _native_threads() - threads, "adapters_left": _adapters_left()}
    while True:
        try:
            args, cwd, env = conn.recv()
        except EOFError:
            return
        conn.send((0, state) if args == STATE_REQUEST else _command(args, cwd, env))


def _adapters_left() -> int:
    """dbt adapters registered in this process, and dbt-duckdb's environment (each would reach every child)."""
    from dbt.adapters.factory import FACTORY

    DuckDBConnectionManager = _duckdb_connections()
    return len(FACTORY.adapters) + (DuckDBConnectionManager is not None and DuckDBConnectionManager._ENV is not None)


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
                raise RuntimeError(f"the dbt server died (exit code {self.proc.exitcode}) running dbt {' '.join(args)}")
        return self.conn.recv()


_SERVER: list = []  # this process's dbt server, started on first use
# One command at a time on the server's pipe: a test that builds two projects from two threads
# (test_incremental_dbt's history) would otherwise start two servers, or interleave two requests'
# bytes on one pipe and read the other's answer (an UnpicklingError, seen once in CI). The server
# runs its commands one after the other anyway.
_CALLING = threading.Lock()


STATE_REQUEST = ["<assay: the server's state>"]  # not a dbt command: the server answers it itself


def server_state() -> dict:
    """This process's dbt server (started if need be), as it forks its children: whether its warm-up
    passed (None: turned off), the threads it left (0: the server refuses to fork otherwise) and
    the adapters and DuckDB environment it left (0: each would reach every child)."""
    with _CALLING:
        if not _SERVER or not _SERVER[0].proc.is_alive():
            _SERVER[:] = [_Server()]
        return _SERVER[0].call(STATE_REQUEST, "", {})[1]


def dbt(args: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run `dbt ARGS` in `cwd` with `env`; a CompletedProcess as the CLI's would be."""
    if os.environ.get("ASSAY_TEST_DBT_CLI") == "1":
        exe = Path(sys.executable).with_name("dbt")
        return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    with _CALLING:
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
