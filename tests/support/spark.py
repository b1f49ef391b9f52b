"""Apache Spark in local mode for the tests: a profile, and one Spark process per warehouse.

The profile (`spark_profile`) is dbt-spark's `session` method with parquet tables, the one
DESIGN.md section 5 records as working on these machines, with one difference from the example's
profile (`assay init --engine spark`): the catalog is Spark's in-memory one, not an embedded Derby
metastore (decision 1040). Nothing but the process below ever reads these warehouses, and
Derby's bookkeeping (every create, rename and drop of a table is a metastore transaction) cost
about 30% of a build's CPU. The Derby metastore, read across processes, is what
tests/cli/test_init_spark.py builds the example on and runs every operator command against.

A JVM costs about 20 s to start, so a test does not run the `dbt` CLI (a JVM per command) and
then open its own session to read the results. `SparkWarehouse` starts ONE child process per
warehouse directory that holds a SparkSession for its whole life and runs, on request, dbt
in-process (dbtRunner: dbt-spark's session method calls `SparkSession.builder.getOrCreate()`,
which returns the session already running), SQL queries, and bronze loads; an in-memory catalog
lives exactly as long as that process.

Each test process (xdist worker) has one such Spark process, `shared_warehouse()`, in a
directory of its own, so two workers never share a warehouse, and every Spark module of the
worker uses it: the JVM starts once per worker, not once per project. A new project empties the
warehouse first (every database but `default` dropped with its tables), as a fresh process would
have been; a project whose tables a later project dropped refuses every call, so two projects
used in turn can never read each other's tables. A Spark process that died or hung is replaced
by the next project.

`SparkProject` has the DbtProject interface the shared suites use (`dbt`, `query`,
`load_bronze`, `path`, `engine`), so a suite written for DuckDB/PostgreSQL runs unchanged.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import pytest

from assay.runtime.spark_conn import naive_timestamps  # read as assay's own Spark reader reads (year 0001 included)
from assay.scaffold import SPARK_LOCAL_JVM_OPTIONS as JVM_OPTIONS  # the example profile's, for the same reason

from . import heap
from .dbtserver import run_dbt

PROJECT_NAME = "assay_it"
# Seconds one call into the Spark process (a dbt command, a query) may take before the test fails.
TIMEOUT = float(os.environ.get("ASSAY_TEST_SPARK_TIMEOUT", "1200"))


def spark_conf(warehouse: Path) -> dict[str, str]:
    """The Spark settings of a local warehouse in `warehouse` (an absolute directory)."""
    warehouse = Path(warehouse).resolve()
    return {
        "spark.master": "local[2]",
        "spark.driver.memory": "2g",
        "spark.sql.warehouse.dir": str(warehouse / "spark-warehouse"),
        # Spark's in-memory catalog, not a Derby metastore (decision 1040): only this process ever
        # reads the warehouse, and Derby's bookkeeping was about 30% of a build's CPU here. The
        # metastore the example's profile uses is built on and read across processes by
        # tests/cli/test_init_spark.py (the demo and every operator command).
        "spark.sql.catalogImplementation": "in-memory",
        "spark.ui.enabled": "false",
        # progress bars are written over dbt's log lines
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        # Adaptive query execution re-plans each stage from its statistics: worth it on real data,
        # a fixed cost per stage on tests' few rows (one incremental story: 110 -> 97 s). The
        # results do not depend on it; the example profile (assay init) keeps Spark's default.
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        # row_json / json_object keep null members (DuckDB's and PostgreSQL's JSON do)
        "spark.sql.jsonGenerator.ignoreNullFields": "false",
        # The JIT's first tier only, and the serial collector: on tests' data Spark spends its time
        # starting and planning, not in hot loops, and the optimising compiler's threads cost about
        # a third of a build's CPU, taken from the other test process on a 2-core machine.
        "spark.driver.extraJavaOptions": JVM_OPTIONS,
        # shuffle blocks and session resources under the warehouse, not loose in /tmp
        "spark.local.dir": str(warehouse / "local"),
    }


# dbt threads on Spark: local[2] runs two tasks at once, and most of a node's time is the driver's
# round trips, so two nodes side by side keep both cores busy.
THREADS = 2


def spark_profile(name: str, warehouse: Path, threads: int = THREADS) -> str:
    """profiles.yml text for dbt-spark's session method on a local warehouse directory."""
    params = "".join(f'        {k}: "{v}"\n' for k, v in spark_conf(warehouse).items())
    return f"""{name}:
  target: dev
  outputs:
    dev:
      type: spark
      method: session
      host: NA
      schema: default
      threads: {threads}
      server_side_parameters:
{params}"""


# --- the Spark process -------------------------------------------------------------------

def _serve(conn, warehouse: str) -> None:
    """The child: one SparkSession, then dbt / query / load requests until told to stop."""
    os.environ["TZ"] = "UTC"  # pyspark turns timestamps into naive datetimes in this zone
    time.tzset()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for k, v in spark_conf(Path(warehouse)).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # dbt runs in this process build after build, project after project: its parse caches keyed
    # by text (tests/support/dbtserver.py, _compile_macros) save every new project's full parse
    # the macros the previous project already parsed.
    from dbt_common.tests import enable_test_caching

    enable_test_caching()
    heap.settle()  # the builds' parsing and rendering collect less often (tests/support/heap.py)
    conn.send(("ready", spark.version))
    while True:
        op, args = conn.recv()
        try:
            if op == "stop":
                spark.stop()
                conn.send(("ok", None))
                return
            if op == "dbt":
                conn.send(("ok", run_dbt(*args)))
            elif op == "query":
                rows = [tuple(r) for r in naive_timestamps(spark.sql(args)).collect()]
                conn.send(("ok", rows))
            elif op == "named":  # a query's column names with its rows
                frame = naive_timestamps(spark.sql(args))
                conn.send(("ok", (list(frame.columns), [tuple(r) for r in frame.collect()])))
            elif op == "load":
                _load(spark, *args)
                conn.send(("ok", None))
            elif op == "reset":
                _reset(spark)
                conn.send(("ok", None))
            else:
                conn.send(("error", f"unknown op {op}"))
        except Exception as exc:  # the parent re-raises it with the message
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


def _load(spark, schema: str, name: str, columns: list, rows: list, fmt: str) -> None:
    from pyspark.sql.types import StringType, StructField, StructType

    schema_t = StructType([StructField(c, StringType(), True) for c in columns])
    spark.sql(f"create schema if not exists `{schema}`")
    spark.sql(f"drop table if exists `{schema}`.`{name}`")
    df = spark.createDataFrame([tuple(r) for r in rows], schema_t)
    df.coalesce(1).write.format(fmt).saveAsTable(f"`{schema}`.`{name}`")


def _reset(spark) -> None:
    """Drop every database but `default`, and every table in `default`: an empty warehouse."""
    for (name,) in spark.sql("show databases").collect():
        if name != "default":
            spark.sql(f"drop database if exists `{name}` cascade")
    for row in spark.sql("show tables in default").collect():
        if not row.isTemporary:
            spark.sql(f"drop table if exists default.`{row.tableName}`")
    spark.catalog.clearCache()


_OPEN: list = []  # every warehouse this process started, for close_all()


def close_all() -> None:
    """Stop every Spark process this process started but the shared one (a test module's teardown)."""
    for warehouse in [w for w in _OPEN if w is not _SHARED.get("warehouse")]:
        _OPEN.remove(warehouse)
        warehouse.close()


# The test files whose Spark work runs in the worker's shared Spark process (`shared_warehouse`).
# The scheduler (tests/conftest.py) sends them to ONE worker as one unit, so the run starts one
# such JVM, not one per worker, and every file after the first finds its JIT warm. A file that
# takes the shared Spark and is not listed here would start a second JVM in the other worker
# (about 15 s of CPU, as tests/lower/test_field_chains_engines.py did until session 39), so
# `shared_warehouse` refuses a test of an unlisted file.
SHARED_SPARK_FILES = frozenset({
    "tests/integration/test_spark_checks.py", "tests/integration/test_spark_corpus.py",
    "tests/integration/test_spark_freshness.py", "tests/integration/test_spark_incremental.py",
    "tests/integration/test_spark_macro_table.py",
    "tests/integration/test_spark_multiload.py", "tests/integration/test_spark_redact_json_keys.py",
    "tests/integration/test_spark_stopped_builds.py",
    "tests/integration/test_spark_type2.py",
    "tests/lower/test_authored.py", "tests/lower/test_field_chains_engines.py",
    "tests/security/test_inert_spark.py",
})

_SHARED: dict = {}  # "warehouse": this test process's SparkWarehouse, "projects": how many it held


def _refuse_unlisted_caller() -> None:
    """A test of a file outside SHARED_SPARK_FILES may not take the shared Spark (see there)."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    path = current.split("::", 1)[0]
    if path and path not in SHARED_SPARK_FILES:
        raise RuntimeError(f"{path} takes the shared Spark (tests/support/spark.py, shared_warehouse) but is not in "
                           "SHARED_SPARK_FILES there: add it, so the run starts one shared JVM, not one per worker")


def shared_warehouse() -> "SparkWarehouse":
    """This test process's Spark process, emptied for a new project (started on first use, and
    again when the previous one died or was stopped at a deadline)."""
    _refuse_unlisted_caller()
    warehouse = _SHARED.get("warehouse")
    if warehouse is None or not warehouse.alive():
        import atexit
        import tempfile

        directory = Path(tempfile.mkdtemp(prefix="assay-spark-"))
        warehouse = SparkWarehouse(directory)
        _SHARED["warehouse"] = warehouse
        atexit.register(_stop_shared, warehouse)
    else:
        warehouse.call("reset", None)
    warehouse.generation += 1
    return warehouse


def _stop_shared(warehouse: "SparkWarehouse") -> None:
    import shutil

    warehouse.close()
    shutil.rmtree(warehouse.directory, ignore_errors=True)


class SparkWarehouse:
    """One Spark process on one warehouse directory (its own Derby metastore)."""

    def __init__(self, directory: Path):
        _OPEN.append(self)
        self.directory = Path(directory).resolve()
        self.directory.mkdir(parents=True, exist_ok=True)
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, str(self.directory)), daemon=True)
        self._proc.start()
        self.generation = 0  # which project holds the warehouse now (shared_warehouse)
        status, self.version = self._recv()

    def alive(self) -> bool:
        return self._proc.is_alive()

    def _recv(self):
        # A build may take minutes; a dead process never answers, so stop waiting when it dies,
        # and one that hangs is stopped at the deadline, so the test fails instead of the run.
        deadline = time.monotonic() + TIMEOUT
        while not self._conn.poll(1):
            if not self._proc.is_alive():
                raise RuntimeError(f"the Spark process on {self.directory} died (exit code {self._proc.exitcode})")
            if time.monotonic() > deadline:
                self._proc.kill()
                raise RuntimeError(f"the Spark process on {self.directory} did not answer in {TIMEOUT:.0f} s "
                                   "(ASSAY_TEST_SPARK_TIMEOUT); it was stopped")
        status, payload = self._conn.recv()
        if status == "error":
            raise RuntimeError(payload)
        return status, payload

    def call(self, op: str, args):
        self._conn.send((op, args))
        return self._recv()[1]

    def close(self) -> None:
        if self._proc.is_alive():
            try:
                self.call("stop", None)
            finally:
                self._proc.join(60)
                if self._proc.is_alive():
                    self._proc.terminate()


_DQ = re.compile(r"'(?:[^']|'')*'|\"((?:[^\"]|\"\")*)\"")


def spark_sql(sql: str) -> str:
    """SQL written for DuckDB/PostgreSQL (double-quoted identifiers) in Spark's spelling (backticks)."""
    return _DQ.sub(lambda m: m.group(0) if m.group(1) is None else "`" + m.group(1).replace('""', '"') + "`", sql)


@dataclass
class SparkProject:
    """A dbt project on a SparkWarehouse, with DbtProject's interface."""

    path: Path
    warehouse: SparkWarehouse
    engine: str = "spark"
    generation: int = 0  # the warehouse's generation this project was made in

    def __post_init__(self):
        self.generation = self.warehouse.generation

    def _call(self, op: str, args):
        if self.warehouse.generation != self.generation or not self.warehouse.alive():
            raise RuntimeError(f"the Spark project in {self.path} is gone: a later project (or a restart after a "
                               "failure) emptied the shared Spark warehouse; use one project at a time")
        return self.warehouse.call(op, args)

    def dbt(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        """dbt in the warehouse's Spark process; a CompletedProcess like the CLI's."""
        argv = [*args, "--project-dir", str(self.path), "--profiles-dir", str(self.path)]
        rc, out = self._call("dbt", (argv, str(self.path)))
        proc = subprocess.CompletedProcess(["dbt", *argv], rc, out, "")
        if check and rc != 0:
            raise AssertionError(f"dbt {' '.join(args)} failed:\n{out[-8000:]}")
        return proc

    def query(self, sql: str) -> list[tuple]:
        return self._call("query", spark_sql(sql))

    def load_bronze(self, relations: Iterable, schema: str = "bronze", fmt: str = "parquet") -> None:
        """(Re)create each bronze relation as all-string columns with exactly the given rows."""
        for rel in relations:
            self._call("load", (schema, rel.name, list(rel.columns), [list(r) for r in rel.rows], fmt))


def make_spark_project(root: Path, spec_dir: Path, warehouse: Optional[SparkWarehouse] = None) -> SparkProject:
    """A dbt project in `root` on `warehouse` (default: this test process's shared one, emptied),
    with the spec generated into it and its package installed."""
    if warehouse is None:
        warehouse = shared_warehouse()
    from assay.api import generate_dbt_project
    from assay.scaffold import write_dbt_skeleton

    root = Path(root)
    write_dbt_skeleton(root, PROJECT_NAME, spark_profile(PROJECT_NAME, warehouse.directory))
    result = generate_dbt_project(spec_dir, root)
    assert not result.report.conflicts, result.report.conflicts
    project = SparkProject(root, warehouse)
    project.dbt("deps", check=True)
    return project


def java_missing() -> Optional[str]:
    """Why Spark cannot run here (no Java runtime), or None."""
    try:
        subprocess.run(["java", "-version"], capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "Spark needs a Java runtime (java on PATH); .ci/run installs openjdk-17-jre-headless"
    return None


@pytest.fixture(scope="module", name="engine")
def suite_engine():
    """The `engine` of a module that runs a shared suite on Spark instead of the session's engines
    (decision 0025; import it into the module): fails when Java is missing; its projects use the
    test process's shared Spark process (`shared_warehouse`)."""
    from .engines import SPARK, Engine

    reason = java_missing()
    if reason:
        pytest.fail(reason)
    yield Engine(SPARK)
    close_all()


@pytest.fixture(scope="module", name="runner")
def suite_runner():
    """The `runner` of such a module: the dbt target (SQLMesh on Spark is refused, decision 0830)."""
    from .runners import RUNNERS

    return RUNNERS["dbt"]
