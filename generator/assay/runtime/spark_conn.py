"""A DB-API-like connection to a Spark (dbt-spark `session`) warehouse, for assay's read-only
operator commands (`report`, `checks`, `check list|rows`, `table list|get`, `explain`; decision 0840).

Spark starts in ONE child Python per command (`python -m assay.runtime.spark_conn PROJECT`), never
in the command's own process (decision 0821: the embedded Derby metastore admits one process, and
a JVM keeps one project's static settings). The child answers every query of the command: a JVM
costs about 20 s to start, and `assay check rows` alone connects three times. Inside a click
command the child lives until the command's context closes (also when it fails), so the
metastore is free again when the command returns; outside one, `close()` stops it.

assay's readers write SQL in DuckDB's spelling (double-quoted identifiers, `?` marks, `varchar`);
sqlglot turns each text into Spark SQL, and the parameters travel apart to `spark.sql(sql, args)`,
so no value is ever spliced into a text. `information_schema.tables`, which Spark's Hive catalog
does not have, is answered by a temporary view the child builds from the catalog.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

from ..errors import WarehouseError

READ_DIALECT = "duckdb"  # the spelling assay's readers write their SQL in (runtime/warehouse.py, report/, checks)
# Relations assay's readers ask for that Spark's catalog lacks: (schema, name) -> the child's temp view.
CATALOG_VIEWS = {("information_schema", "tables"): "assay_information_schema_tables"}
START_TIMEOUT = 300  # seconds for the JVM to start on a loaded machine
STOP_TIMEOUT = 60

# The writing commands whose only writes are INSERTs, which Spark's parquet tables take: `replay`
# appends rows to bronze (decision 0840, amended); `plan --data` builds and replays only in its
# sandbox's copy of the warehouse, the only Spark it connects to (decision 1020).
APPENDING = frozenset({"replay", "plan"})
# Why every other writing command is refused on Spark, and what to do instead; connect() picks the
# sentence by the running command's name.
WRITES_REFUSED = {
    "maintain": ("retention deletes expired reject rows, and Spark's parquet tables take no DELETE or UPDATE. "
                 "The reject rows stay; `assay report` shows their age against retention. To drop expired rows, "
                 "rewrite the reject table yourself (INSERT OVERWRITE with the rows to keep) while no dbt command runs"),
}
_WRITES_DEFAULT = "on Spark assay only reads and appends; the tables are written by dbt and the project's loader"


def session_settings(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> dict[str, str]:
    """The Spark settings the project's dbt profile starts its session with (`server_side_parameters`).

    dbt-spark turns ANSI mode off in every session it starts; so does assay, so that a query
    reads the tables under the rules the build wrote them with. A profile's own
    `hive.hmshandler.retry.attempts` wins over assay's one attempt.
    """
    from .warehouse import profile_target

    found = profile_target(Path(project_dir), profiles_dir, target)
    if found.output.get("type") != "spark" or found.output.get("method") != "session":
        raise WarehouseError(f"{found.describe()} is not a dbt-spark `method: session` profile; "
                             "assay reads Spark warehouses through such a profile (docs/engines.md).")
    settings = {str(k): str(v) for k, v in (found.output.get("server_side_parameters") or {}).items()}
    settings["spark.sql.ansi.enabled"] = "false"
    # A metastore another process holds (a dbt command running) fails at once, not after Hive's ten
    # attempts two seconds apart (29 s -> 12 s measured): Derby's lock lasts as long as that process.
    settings.setdefault("spark.hadoop.hive.hmshandler.retry.attempts", "1")
    return settings


class SparkQueryError(Exception):
    """Spark refused or failed a query: the warehouse's answer (`is_driver_error` treats it as such)."""

    warehouse_driver_error = True


# ---------------------------------------------------------------------------- the wire
def _send(stream, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def _receive(stream) -> Any:
    head = stream.read(4)
    if len(head) < 4:
        raise EOFError
    (size,) = struct.unpack(">I", head)
    return pickle.loads(stream.read(size))


# ---------------------------------------------------------------------------- the parent side
def to_spark(sql: str) -> str:
    """One reader's SQL text in Spark's spelling, with the catalog views put in (no parameter is touched)."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read=READ_DIALECT)
    for table in tree.find_all(exp.Table):
        view = CATALOG_VIEWS.get((table.db.lower(), table.name.lower()))
        if view is not None:
            table.replace(exp.to_table(view).as_(table.alias_or_name) if table.alias else exp.to_table(view))
    return tree.sql(dialect="spark")


def _refuse_a_held_metastore(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], describe: str) -> None:
    """Refuse before a JVM starts when another process has the project's Derby metastore open
    (derby_lock): the JVM would fail the same way, 15-20 s later."""
    from .derby_lock import holder_after_settling, metastore_dir

    settings = session_settings(project_dir, profiles_dir, target)
    pid = holder_after_settling(settings)
    if pid is not None:
        who = f"process {pid}" if pid > 0 else "another process"
        raise WarehouseError(
            f"Spark cannot open the Derby metastore {metastore_dir(settings)} of the warehouse of {describe}: {who} "
            "has it open, such as a dbt command still running or an earlier `assay` command's Spark; the Derby "
            "metastore admits one process at a time. Run the command again when that process has ended.")


class SparkChild:
    """The child process holding Spark for one project; `run(sql, params)` -> (columns, rows)."""

    def __init__(self, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], describe: str,
                 before: Optional[tuple[str, Any]] = None):
        self.describe = describe
        _refuse_a_held_metastore(project_dir, profiles_dir, target, describe)
        self._log = tempfile.TemporaryFile(mode="w+b")
        args = [sys.executable, "-m", "assay.runtime.spark_conn", str(project_dir), str(profiles_dir or ""), target or "",
                json.dumps(before) if before else ""]
        self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                      cwd=project_dir)
        _RUNNING.add(self)
        try:
            self._answer("starting")
        except BaseException:
            self.stop()
            raise

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def _stderr_tail(self) -> list[str]:
        self._log.seek(0)
        # Java's stack frames (`\tat ...`, `... 156 more`) say nothing to a user; the causes do.
        lines = [x for x in self._log.read().decode("utf-8", "replace").splitlines()
                 if x.strip() and not x[:1].isspace()]
        return ["  " + x for x in lines[-6:]]

    def _answer(self, doing: str) -> Any:
        try:
            reply = _receive(self._proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            try:
                self._proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:  # a garbled wire from a live child: end it
                self._proc.kill()
                self._proc.wait()
            raise WarehouseError(
                f"Spark stopped while {doing} for the warehouse of {self.describe}; its error is above (when it names "
                "the metastore or Derby, another process holds it, such as a dbt command still running: the Derby "
                "metastore admits one process at a time)", details=self._stderr_tail()) from None
        if reply[0] == "error":
            raise SparkQueryError(reply[1])
        return reply[1]

    def run(self, sql: str, params: tuple = ()) -> tuple[list[tuple], list[tuple]]:
        """(description, rows) of one query written in READ_DIALECT with `?` marks."""
        if not self.alive:
            raise WarehouseError(f"the Spark process reading the warehouse of {self.describe} has stopped; run the command again.")
        try:
            spark_sql = to_spark(sql)
        except Exception as exc:  # sqlglot's parse or generation error: a bug of the reader's SQL, said as such
            raise SparkQueryError(f"cannot spell this query for Spark ({exc}): {sql}") from None
        views = sorted(v for k, v in CATALOG_VIEWS.items() if v in spark_sql)
        _send(self._proc.stdin, ("query", (spark_sql, list(params), views)))
        return self._answer("running a query")

    def dbt(self, project_dir: Path, *args: str) -> subprocess.CompletedProcess:
        """`dbt <args>` inside the child, on its Spark (dbt-spark's session method finds the session
        running): what `runtime/dbt.py::run_dbt` returns for the CLI, without a JVM of its own."""
        _send(self._proc.stdin, ("dbt", (str(Path(project_dir).resolve()), list(args))))
        code, out, err = self._answer(f"running dbt {' '.join(args)}")
        return subprocess.CompletedProcess(["dbt", *args], code, out, err)

    def load_bronze(self, project_dir: Path, append: bool = False) -> dict[str, int]:
        """The project's own `load_bronze.py` (its `load(spark, append)`), run on the child's Spark; rows per table."""
        _send(self._proc.stdin, ("load_bronze", (str(Path(project_dir).resolve() / "load_bronze.py"), append)))
        return self._answer("loading bronze")

    def stop(self) -> None:
        """End the child (Spark stops, the JVM exits, the metastore is free); waits for it."""
        _RUNNING.discard(self)
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()  # the child's loop ends at end of input and stops Spark
                self._proc.wait(timeout=STOP_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._log.close()


_RUNNING: set = set()


@atexit.register
def _stop_all() -> None:
    """A process leaving with a child still running (a library caller that never closed) stops it."""
    for child in list(_RUNNING):
        child.stop()


class SparkCursor:
    """The part of a DB-API cursor assay's readers use: execute, executemany, fetchall, fetchone, description."""

    def __init__(self, child: SparkChild):
        self._child = child
        self.description: Optional[list[tuple]] = None
        self._rows: list[tuple] = []

    def execute(self, sql: str, params: tuple = ()) -> "SparkCursor":
        self.description, self._rows = self._child.run(sql, tuple(params or ()))
        return self

    def executemany(self, sql: str, seq) -> None:
        for params in seq:
            self.execute(sql, params)

    def fetchall(self) -> list[tuple]:
        rows, self._rows = self._rows, []
        return rows

    def fetchone(self) -> Optional[tuple]:
        return self._rows.pop(0) if self._rows else None

    def close(self) -> None:
        self._rows = []


class SparkConnection:
    """A connection whose cursors send their queries to one SparkChild. `close()` stops the child
    when the connection owns it; a child shared for a click command stops when the command ends."""

    def __init__(self, child: SparkChild, owned: bool):
        self._child, self._owned = child, owned

    def cursor(self) -> SparkCursor:
        return SparkCursor(self._child)

    def commit(self) -> None:
        """Nothing to commit: Spark has no transactions here."""

    def close(self) -> None:
        if self._owned:
            self._child.stop()


_META_KEY = "assay.spark_children"
_HELD: dict[tuple, SparkChild] = {}  # children a caller holds across commands (held_session)


def _key(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str]) -> tuple:
    return (str(Path(project_dir).resolve()), str(Path(profiles_dir).resolve()) if profiles_dir else "", target or "")


@contextmanager
def held_session(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None,
                 before: Optional[tuple[str, Any]] = None) -> Iterator[SparkChild]:
    """One child Spark for every command run in this process inside the block, instead of one per
    command: for a caller that runs several commands in a row (a notebook, a test module, the Spark
    demo's loader, dbt steps and counts), which would otherwise pay a JVM start per command. The
    metastore is held until the block ends; the block gets the child (`dbt`, `load_bronze`).
    `before`: ("module:function", arg), called in the child as function(spark, arg) before Spark
    opens the metastore (`assay plan --data` moves its copied metastore's locations, decision 1020)."""
    from .warehouse import profile_target

    key = _key(project_dir, profiles_dir, target)
    describe = profile_target(Path(project_dir), profiles_dir, target).describe()
    child = SparkChild(Path(project_dir).resolve(), profiles_dir, target, describe, before)
    _HELD[key] = child
    try:
        yield child
    finally:
        del _HELD[key]
        child.stop()


def connect_spark(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], describe: str,
                  read_only: bool) -> SparkConnection:
    """A connection to the project's Spark warehouse; the child is shared by every connect() of one
    click command and stopped when the command ends (decision 0840). Writing is refused (why:
    WRITES_REFUSED) but for the commands that only append (APPENDING)."""
    import click

    ctx = click.get_current_context(silent=True)
    command = ctx.info_name if ctx is not None else None
    if not read_only and command not in APPENDING:
        why = WRITES_REFUSED.get(command, _WRITES_DEFAULT)
        raise WarehouseError(f"`assay {command or 'this command'}` cannot run on the Spark warehouse of {describe}: {why}.")
    key = _key(project_dir, profiles_dir, target)
    if key in _HELD and _HELD[key].alive:
        return SparkConnection(_HELD[key], owned=False)
    if ctx is None:
        return SparkConnection(SparkChild(Path(project_dir).resolve(), profiles_dir, target, describe), owned=True)
    root = ctx.find_root()
    children = root.meta.setdefault(_META_KEY, {})
    child = children.get(key)
    if child is None or not child.alive:
        child = SparkChild(Path(project_dir).resolve(), profiles_dir, target, describe)
        children[key] = child
        root.call_on_close(child.stop)
    return SparkConnection(child, owned=False)


# ---------------------------------------------------------------------------- the child
def _plain(value: Any) -> Any:
    """A collected value as DuckDB's driver gives it: structs as dicts, arrays as lists."""
    from pyspark.sql import Row

    if isinstance(value, Row):
        return value.asDict(recursive=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def naive_timestamps(df):
    """Timestamps as zoneless UTC values, as DuckDB returns them: pyspark turns a TIMESTAMP into a
    local datetime through mktime, which fails before 1900; the session's time zone is UTC."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampNTZType, TimestampType

    if not any(isinstance(f.dataType, TimestampType) for f in df.schema.fields):
        return df
    return df.select(*[
        F.col(f"`{f.name}`").cast(TimestampNTZType()).alias(f.name) if isinstance(f.dataType, TimestampType) else F.col(f"`{f.name}`")
        for f in df.schema.fields
    ])


def _catalog_view(spark, view: str) -> None:
    """`information_schema.tables` (catalog, schema, name, type) of every non-temporary table.

    SHOW TABLES and SHOW VIEWS read names only; `spark.catalog.listTables` fetches every table's
    metadata from the metastore, seconds per schema."""
    from ..identifiers import quote_identifier

    rows = []
    for (db,) in spark.sql("show databases").collect():
        # a schema name read from the catalog: quoted (a backtick in it doubled), never trusted
        name = quote_identifier(db, "spark")
        views = {r.viewName for r in spark.sql(f"show views in {name}").collect() if not r.isTemporary}
        for r in spark.sql(f"show tables in {name}").collect():
            if not r.isTemporary:
                rows.append(("spark_catalog", db, r.tableName, "VIEW" if r.tableName in views else "BASE TABLE"))
    schema = "table_catalog string, table_schema string, table_name string, table_type string"
    spark.createDataFrame(rows, schema).createOrReplaceTempView(view)


def _run_dbt(project: str, profiles: Optional[str], target: Optional[str], args: list[str]) -> tuple[int, str, str]:
    """dbt in this process (dbtRunner), its stdout and stderr caught at the descriptors (dbt's
    logger and the JVM write there); the CLI's exit code: 0 ok, 1 failed, 2 could not run."""
    from dbt.cli.main import dbtRunner

    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    os.environ.setdefault("DBT_USE_COLORS", "false")
    argv = [*args, "--project-dir", project, "--profiles-dir", profiles or project, *(["--target", target] if target else [])]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = (os.dup(1), os.dup(2))
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            result = dbtRunner().invoke(argv)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)
        texts = []
        for stream in (out, err):
            stream.seek(0)
            texts.append(stream.read().decode("utf-8", "replace"))
    if result.success:
        return 0, texts[0], texts[1]
    if result.exception is not None:  # what the CLI prints before its exit 2 (dbtRunner hands it back instead)
        return 2, texts[0], texts[1] + f"Error: {result.exception}\n"
    return 1, texts[0], texts[1]


def _load_bronze(spark, loader: str, append: bool) -> dict[str, int]:
    """The project's loader run on this Spark: its `load(spark, append)` (rows per table)."""
    import runpy

    return dict(runpy.run_path(loader, run_name="assay_load_bronze")["load"](spark, append))


def _serve(argv: list[str]) -> int:
    """The child: start Spark from the profile, answer requests from stdin until it closes."""
    wire_in = sys.stdin.buffer
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else prints (the JVM, pyspark) goes to stderr, not onto the wire
    project, profiles, _target = argv[0], argv[1] or None, argv[2] or None
    try:
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.appName("assay").enableHiveSupport()
        for key, value in session_settings(Path(project), Path(profiles) if profiles else None, _target).items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if len(argv) > 3 and argv[3]:
            where, arg = json.loads(argv[3])
            module, name = where.split(":")
            getattr(importlib.import_module(module), name)(spark, arg)
        # Open the metastore now: Spark connects to it lazily, and a metastore another process holds
        # should fail the connection (with the hint of _answer), not the command's first question.
        spark.sql("show databases").collect()
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        _end_jvm()  # a JVM that started and then failed (a held metastore) goes before the child says so
        return 1
    try:
        _send(wire_out, ("ready", None))
        built: set = set()
        while True:
            try:
                op, payload = _receive(wire_in)
            except EOFError:
                return 0
            try:
                if op == "dbt":
                    _send(wire_out, ("ok", _run_dbt(payload[0], profiles, _target, payload[1])))
                    built.clear()  # dbt may have created tables: the catalog views are read again
                    continue
                if op == "load_bronze":
                    _send(wire_out, ("ok", _load_bronze(spark, *payload)))
                    built.clear()
                    continue
                sql, params, views = payload
                for view in views:
                    if view not in built:  # no command creates a table (replay only adds rows): built once
                        _catalog_view(spark, view)
                        built.add(view)
                df = naive_timestamps(spark.sql(sql, args=params) if params else spark.sql(sql))
                description = [(f.name, f.dataType.simpleString(), None, None, None, None, None) for f in df.schema.fields]
                rows = [tuple(_plain(v) for v in r) for r in df.collect()]
                _send(wire_out, ("ok", (description, rows)))
            except Exception as exc:  # Spark's answer; the parent raises it as SparkQueryError
                text = str(exc).strip().splitlines()
                _send(wire_out, ("error", f"{type(exc).__name__}: {text[0] if text else ''}"))
    finally:
        spark.stop()
        _end_jvm()


def _end_jvm() -> None:
    """Let the JVM exit before this child does. Left alone it exits only after the child (it watches
    its stdin, which closes with the child), and until it has exited it holds the Derby metastore:
    the command that stopped the child would return with the metastore still busy for a moment, and a
    dbt command or another `assay` command started right then would find it held (derby_lock)."""
    try:
        from pyspark import SparkContext
    except ImportError:  # no pyspark: no JVM was started
        return
    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        return
    try:
        proc.stdin.close()  # pyspark's gateway ends the JVM at the end of its input
        proc.wait(timeout=STOP_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1:]))
