"""Fixtures shared across test packages. Keep this small: only what several packages need."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

# The files whose Spark work runs in the worker's shared Spark process: one scheduling unit
# (pytest_xdist_make_scheduler below; tests/support/spark.py says why).
from tests.support.spark import SHARED_SPARK_FILES

# No tool the tests run may try the network: dbt's and SQLMesh's usage statistics are off (on a
# machine whose network drops packets, each attempt waits for its own time-out).
# dbt writes no debug log file (logs/dbt.log): formatting every statement at debug level costs
# about a sixth of a small build's time, and a failure's own output (dbt's info lines, which the
# tests print) says what failed. `DBT_LOG_LEVEL_FILE=debug bash scripts/test.sh ...` brings it back.
# SQLMesh loads a project's models in a pool of forked processes, one per core (MAX_FORK_WORKERS,
# read when sqlmesh is first imported). The suite's workers already keep every core busy, so the
# pool only adds forks and pickling: loading in the test process itself took about 8% less CPU on
# the corpus's SQLMesh story, side by side (session 46). SQLMesh's CLI, run from a shell by the
# docs' tests, reads it from the environment too.
for _name, _value in (("DO_NOT_TRACK", "1"), ("DBT_SEND_ANONYMOUS_USAGE_STATS", "false"),
                      ("SQLMESH__DISABLE_ANONYMIZED_ANALYTICS", "1"), ("DBT_LOG_LEVEL_FILE", "none"),
                      ("MAX_FORK_WORKERS", "1")):
    os.environ.setdefault(_name, _value)

# Every Spark the tests start reads its defaults from tests/support/spark_conf (the file says why).
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).parent / "support" / "spark_conf"))


def _resource_tracker_reentrant() -> None:
    """CPython before 3.12 can deadlock a test process in multiprocessing's resource tracker: a
    garbage collection inside `ensure_running()` (which holds the tracker's lock) runs the
    finalizer of a semaphore left by an earlier pool (SQLMesh loads models in one), which calls
    into the tracker again and waits on that same lock forever (CPython gh-109593; 3.12 made the
    lock reentrant). A CI worker hung so in session 31, its main thread waiting on a lock with
    nothing else running. The same fix here: the tracker's lock reentrant."""
    import sys
    import threading
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if sys.version_info < (3, 12) and tracker is not None and not isinstance(tracker._lock, type(threading.RLock())):
        tracker._lock = threading.RLock()


_resource_tracker_reentrant()

FIXTURES = Path(__file__).parent / "fixtures"


def _installed_distributions_read_once() -> None:
    """SQLMesh maps every installed distribution to its top-level modules on each plan, to record
    the Python requirements of a project's macros (`infer_python_dependencies`): about 0.6 s of a
    2.5 s plan in this environment, and the suites run hundreds of plans in-process. What is
    installed does not change during a run, so the mapping is read once per test process."""
    import functools
    import importlib

    for name in ("importlib_metadata", "importlib.metadata"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if not hasattr(module.packages_distributions, "cache_info"):
            module.packages_distributions = functools.lru_cache(maxsize=1)(module.packages_distributions)


_installed_distributions_read_once()


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    # The run's id, inherited by its xdist workers: what a PostgreSQL install copy belongs to.
    if not _is_worker(config):
        os.environ["ASSAY_TEST_RUN"] = str(os.getpid())


def pytest_sessionstart(session):
    """Leave nothing behind between runs: servers of a killed worker of an earlier run, and
    install copies of runs that ended, are removed before this run starts."""
    if not _is_worker(session.config):
        from tests.support import pg

        pg.sweep_stale()


def pytest_sessionfinish(session, exitstatus):
    if not _is_worker(session.config):
        from tests.support import pg

        pg.sweep_stale(everything_of_this_run=True)
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


# --- engines: one PostgreSQL pool per worker, every package --------------------------------------
#
# The engine fixtures live here, not in a package's conftest, so that every test package of a
# worker draws its PostgreSQL servers from the same pool (each server starts at most once per
# worker) and imports the support modules under one name (`tests.support...`).

# PostgreSQL 15 differs from 18 in one place assay's SQL depends on: the try_cast guard
# (`pg_input_is_valid` from 16 on, assay's own function before). A module runs on PostgreSQL 15
# when it says why with a module-level `PG15 = "<reason>"`; every other module runs on DuckDB and
# PostgreSQL 18 only. tests/README.md lists the modules that keep PostgreSQL 15.
PG15_ATTRIBUTE = "PG15"


def _pg15_here(metafunc) -> bool:
    """A module that keeps PostgreSQL 15 runs each test there, unless the test is marked
    `not_on_pg15("<what covers it>")`."""
    return bool(getattr(metafunc.module, PG15_ATTRIBUTE, None)) and \
        metafunc.definition.get_closest_marker("not_on_pg15") is None


# A module that keeps PostgreSQL 15 for one target only says which with `PG15_TARGETS = ("dbt",)`:
# the other targets' PostgreSQL 15 combinations are left out (what covers them is the module's to say).
PG15_TARGETS_ATTRIBUTE = "PG15_TARGETS"


# Likewise `PG18_TARGETS = ("dbt",)`: a module whose other targets' PostgreSQL 18 combinations are
# covered elsewhere (the module says where).
PG_TARGETS_ATTRIBUTES = {"pg15": PG15_TARGETS_ATTRIBUTE, "pg18": "PG18_TARGETS"}

# A module that runs on some engines only names them with `ENGINE_IDS = ("duckdb",)` and says in a
# comment what covers the others; one test says it with `pytest.mark.duckdb_only("<what covers it>")`.
ENGINE_IDS_ATTRIBUTE = "ENGINE_IDS"


def _pg_target_dropped(item) -> bool:
    """Whether `item` runs a target on a PostgreSQL that its module keeps for other targets only
    (PG15_TARGETS, PG18_TARGETS)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    engine, runner = callspec.params.get("engine"), callspec.params.get("runner")
    attribute = PG_TARGETS_ATTRIBUTES.get(getattr(engine, "id", None))
    targets = getattr(getattr(item, "module", None), attribute, None) if attribute else None
    return targets is not None and runner is not None and runner not in targets


@pytest.fixture(scope="session")
def pg_servers():
    """The worker's PostgreSQL servers by label, each started on first use, stopped at the end."""
    from tests.support.engines import ServerPool

    pool = ServerPool()
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def postgres_server(request, pg_servers):
    """A throwaway PostgreSQL server: PG18 (embedded), and PG15 (system) in modules that keep it."""
    return pg_servers.get(request.param)


@pytest.fixture(scope="session")
def engine(request, pg_servers):
    """One parameter per engine of tests/support/engines.ENGINES this module runs on."""
    from tests.support.engines import Engine

    spec = request.param
    return Engine(spec, pg_servers.get(spec.server_label) if spec.server_label else None)


@pytest.fixture(scope="session")
def runner(request):
    """One parameter per target (tests/support/runners.RUNNERS: dbt, sqlmesh); the shared suites
    take it with `engine`, so adding a target is adding a runner."""
    from tests.support.runners import RUNNERS

    return RUNNERS[request.param]


@pytest.fixture(scope="class")
def postgres_database(postgres_server):
    """A factory: a fresh, empty database on the session's server, as dbt connection params."""

    def make(name: str) -> dict:
        params = postgres_server.params()
        conn = postgres_server.connect()
        conn.autocommit = True
        try:
            cur = conn.cursor()
            cur.execute(f'drop database if exists "{name}"')
            cur.execute(f'create database "{name}"')
        finally:
            conn.close()
        return {**params, "dbname": name}

    return make


def pytest_generate_tests(metafunc):
    from tests.support import pg
    from tests.support.engines import ENGINES
    from tests.support.runners import RUNNERS

    pg15 = _pg15_here(metafunc)
    names = metafunc.fixturenames
    if "engine" in names and _fixture_is_ours(metafunc, "engine"):
        only = getattr(metafunc.module, ENGINE_IDS_ATTRIBUTE, None)
        marked = metafunc.definition.get_closest_marker("duckdb_only")
        if marked is not None:
            if not (marked.args and str(marked.args[0]).strip()):
                raise pytest.UsageError(f"{metafunc.definition.nodeid}: write pytest.mark.duckdb_only(\"<what covers it on PostgreSQL>\")")
            only = ("duckdb",)
        specs = [e for e in ENGINES if (pg15 or e.id != "pg15") and (only is None or e.id in only)]
        metafunc.parametrize("engine", specs, ids=[e.id for e in specs], indirect=True, scope="session")
    if "postgres_server" in names and _fixture_is_ours(metafunc, "postgres_server"):
        labels = [label for label in pg.LABELS if pg15 or label != "system"]
        metafunc.parametrize("postgres_server", labels, ids=[pg.LABEL_IDS[label] for label in labels],
                             indirect=True, scope="session")
    if "runner" in names and _fixture_is_ours(metafunc, "runner"):
        metafunc.parametrize("runner", list(RUNNERS), ids=list(RUNNERS), indirect=True, scope="session")


def _fixture_is_ours(metafunc, name: str) -> bool:
    defs = metafunc._arg2fixturedefs.get(name)
    return bool(defs) and getattr(defs[-1].func, "__code__", None) is not None and \
        defs[-1].func.__code__.co_filename == __file__


POSTGRES_FIXTURES = {"pg_servers", "postgres_server", "postgres_database"}


def _starts_postgres(item) -> bool:
    """Whether a test may start PostgreSQL: it takes a server fixture, or a PostgreSQL engine."""
    if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
        callspec = getattr(item, "callspec", None)
        engine = callspec.params.get("engine") if callspec else None
        # a test parametrised over engines takes the pool on every engine; it starts it on PostgreSQL
        return engine is None or getattr(engine, "kind", None) == "postgres"
    callspec = getattr(item, "callspec", None)
    return callspec is not None and getattr(callspec.params.get("engine"), "kind", None) == "postgres"


def pytest_runtest_setup(item):
    # what tests/support/pg.postgres_server checks: a server is started only by a test marked postgres
    os.environ["ASSAY_TEST_MARKED_POSTGRES"] = "1" if item.get_closest_marker("postgres") else ""


def pytest_collection_finish(session):
    """The libraries every suite uses, imported now, then out of the collector's way for the rest of
    this process (tests/support/heap.py: about 10% of an in-process SQLMesh suite's CPU)."""
    from tests.support import heap

    try:
        import duckdb  # noqa: F401
        import sqlmesh.core.context  # noqa: F401
    except ImportError:  # an environment without them fails in the tests that need them
        pass
    heap.settle()


def pytest_collection_modifyitems(config, items):
    """Markers from the engines a test really uses, then Spark test files first.

    Every test that starts PostgreSQL carries `postgres` (those parametrised over the engines
    get it here, from their parameter), so `-m "not postgres and not spark and not long"` is the
    fast loop of tests/README.md; a `long` test says what covers it there.

    The suite runs on several workers (scripts/test.sh: three on the 2-core CI machine), one file at a time each (`--dist loadfile`), in collection
    order (`--no-loadscope-reorder` in scripts/test.sh: by default xdist sends the files with the
    most tests first, which put the Spark files, few tests but minutes each, at the end). A Spark
    file costs minutes; run last, the Spark files ran alone while the other worker sat idle.
    Started first, they overlap with the many short files instead (longest jobs first).
    """
    dropped = [item for item in items if _pg_target_dropped(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
    for item in items:
        if _starts_postgres(item) and item.get_closest_marker("postgres") is None:
            item.add_marker(pytest.mark.postgres)
        long = item.get_closest_marker("long")
        if long is not None and not (long.args and str(long.args[0]).strip()):
            # the fast loop leaves the test out; without the reason nobody knows what covers it there
            raise pytest.UsageError(f"{item.nodeid}: write pytest.mark.long(\"<what covers it in the fast loop>\")")
    items[:] = sorted(items, key=lambda item: 0 if item.get_closest_marker("spark") else 1)




# test_init_spark (the example's own Sparks) stays out of that unit: two JVMs side by side on 2
# cores cost more CPU than one after the other (166 against 142 CPU-s, session 31), yet whole runs
# with it in the unit and without took the same 28.0 worker-minutes (the other worker's tests
# share the cores either way). The one hang seen with it in the unit was the resource-tracker
# deadlock `_resource_tracker_reentrant` above prevents, not the unit.


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: pytest runs without xdist too (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, except that the shared-Spark files are one unit (SHARED_SPARK_FILES)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedSparkTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return "shared Spark files" if path in SHARED_SPARK_FILES else path

    return SharedSparkTogether(config, log)


# --- where the time went: each module's total, printed after pytest's own slowest tests ---------

_MODULE_SECONDS: dict = {}


def pytest_runtest_logreport(report):
    """Add each phase's time (setup, call, teardown) to its module. Under xdist the controller
    receives every worker's reports, so the totals are the whole run's worker-seconds."""
    module = report.nodeid.split("::", 1)[0]
    _MODULE_SECONDS[module] = _MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """With `--durations` (scripts/test.sh sets it), every module's total time, slowest first."""
    if config.option.durations is None or not _MODULE_SECONDS or _is_worker(config):
        return
    total = sum(_MODULE_SECONDS.values())
    terminalreporter.write_sep("=", f"time per module ({total / 60:.1f} worker-minutes in all)")
    for module, seconds in sorted(_MODULE_SECONDS.items(), key=lambda kv: (-kv[1], kv[0])):
        terminalreporter.write_line(f"{seconds:9.1f}s  {100 * seconds / total:5.1f}%  {module}")
