"""A DB-API connection to a project's warehouse (DuckDB or Postgres): the profile of a dbt project,
the gateway of a SQLMesh project (runtime/sqlmesh_gateway.py), told apart by `project_kind`.

Every way this can fail (no profile, an unknown target, a server that is down, a DuckDB file
another process holds) becomes a :class:`WarehouseError` that names the profile, the target and
the driver's own cause, and says what to check; the CLI prints it and exits 1.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import yaml

from ..errors import AssayUsageError, ProjectError, WarehouseError
from .sqltext import PARAM_MARKS, execute, relation  # noqa: F401 - PARAM_MARKS is re-exported

# The packages whose exceptions are the warehouse talking (DuckDB's live in `_duckdb`).
_DRIVER_MODULES = ("duckdb", "_duckdb", "psycopg2")


@dataclass(frozen=True)
class ProfileTarget:
    """The profile output dbt itself would use for a project, and where it was found."""

    profile: str
    target: str
    path: Path  # the profiles.yml it came from
    output: dict

    def describe(self) -> str:
        """`profile 'shop', target 'dev' (duckdb at /x/warehouse.duckdb)`, for messages."""
        kind = self.output.get("type", "?")
        if kind == "spark":
            params = self.output.get("server_side_parameters") or {}
            where = str(params.get("spark.sql.warehouse.dir", "spark-warehouse"))
        elif kind == "postgres":
            where = f"{self.output.get('host')}:{self.output.get('port', 5432)}/{self.output.get('dbname') or self.output.get('database')}"
        else:
            where = str(self.output.get("path", ":memory:"))
        return f"profile {self.profile!r}, target {self.target!r} ({kind} at {where}, from {self.path})"


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ProjectError(f"{path} cannot be read as YAML ({_first_line(exc)}); fix it so that dbt can read it too.") from None
    return data if isinstance(data, dict) else {}


def profile_target(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> ProfileTarget:
    """Find the project's profile as dbt does: profiles.yml in --profiles-dir, else DBT_PROFILES_DIR,
    else beside the project (where dbt runs), else ~/.dbt; the target `--target`, else DBT_TARGET,
    else the profile's default."""
    project_file = Path(project_dir) / "dbt_project.yml"
    if not project_file.exists():
        raise ProjectError(f"{project_dir} has no dbt_project.yml; point --project at the dbt project whose profile names the warehouse.")
    name = _read_yaml(project_file).get("profile")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{project_file} names no `profile:`; add the name of the profiles.yml entry that holds the warehouse connection.")
    # A folder the user named (--profiles-dir, else DBT_PROFILES_DIR) is the one read, as dbt reads
    # it, also when the project holds a profiles.yml of its own: dbt's order puts the variable first,
    # and reading the project's instead read another warehouse than the build wrote, silently (an
    # outside tester, session 40).
    env = os.environ.get("DBT_PROFILES_DIR")
    if profiles_dir:
        folders = [profiles_dir]
    elif env:
        folders = [env]
    else:
        folders = [Path(project_dir), Path.home() / ".dbt"]
    looked = []
    for folder in folders:
        if not folder:
            continue
        path = Path(folder) / "profiles.yml"
        looked.append(str(path))
        if not path.exists():
            continue
        profiles = _read_yaml(path)
        if name not in profiles:
            continue
        prof = profiles[name] if isinstance(profiles[name], dict) else {}
        outputs = prof.get("outputs") if isinstance(prof.get("outputs"), dict) else {}
        # DBT_TARGET as dbt reads it: a build run with it set wrote that target (session 40)
        chosen = target or os.environ.get("DBT_TARGET") or prof.get("target", "dev")
        if chosen not in outputs or not isinstance(outputs[chosen], dict):
            known = ", ".join(repr(k) for k in outputs) or "none"
            raise WarehouseError(
                f"profile {name!r} in {path} has no target {chosen!r} (its targets: {known}); "
                "pass --target with one of them, or add the target to profiles.yml."
            )
        return ProfileTarget(name, str(chosen), path, dict(outputs[chosen]))
    raise WarehouseError(
        f"no profiles.yml defines the profile {name!r} that {project_file} names (looked in {', '.join(looked)}"
        + (", the folder --profiles-dir names" if profiles_dir else ", the folder DBT_PROFILES_DIR names" if folders == [env] else "")
        + "); write it beside dbt_project.yml or pass --profiles-dir with the folder that holds it."
    )


DBT, SQLMESH = "dbt", "sqlmesh"


def project_kind(project_dir: Path) -> str:
    """`dbt` or `sqlmesh`: the target `assay generate` recorded in the project's manifest, else the
    project's own file (dbt_project.yml, or SQLMesh's config.yaml / config.py); `dbt` when neither
    is there, so the dbt path's error says what is missing."""
    from ..artifacts import read_manifest
    from .sqlmesh_gateway import config_file

    recorded = read_manifest(Path(project_dir)).get("target")
    if recorded in (DBT, SQLMESH):
        return recorded
    if not (Path(project_dir) / "dbt_project.yml").exists() and config_file(project_dir) is not None:
        return SQLMESH
    return DBT


def _no_profiles_dir(project_dir: Path, profiles_dir: Optional[Path]) -> None:
    if profiles_dir is not None:
        raise AssayUsageError(f"{project_dir} is a SQLMesh project: its warehouse is its gateway, so --profiles-dir "
                              "(a dbt option) does not apply; pass --target GATEWAY to pick another gateway.")


def check_environment(project_dir: Path, environment: Optional[str]) -> None:
    """A usage error when `--environment` is given for a dbt project (checked before connecting)."""
    if environment is not None and project_kind(project_dir) != SQLMESH:
        raise AssayUsageError(f"--environment names a SQLMesh environment, and {project_dir} is a dbt project; pass "
                              "--target with the profile output to read instead.")


def in_environment(project, project_dir: Path, environment: Optional[str], conn, dialect: str, whole: bool = True):
    """The spec's Project with the schemas a SQLMesh environment publishes (`--environment`; prod,
    the default, is the spec's own schemas). Refused on a dbt project, whose environments are its
    profile's targets (`--target`). `whole`: refused too when the environment does not publish
    every entity, reject table and the mart (a development plan of the changed models only)."""
    if environment is None:
        return project
    check_environment(project_dir, environment)
    import dataclasses

    from .history_behind import MART
    from .sqlmesh_gateway import environment_schemas

    # the tables the operator commands read in the published schemas (not `__staged`: SQLMesh's
    # staged models are published too, and an environment changes them with their entity)
    tables: list[tuple[str, str]] = []
    if project.entities:
        tables.append(("gold", MART))
        for e in project.entities:
            tables += [("silver", e.name)] + ([("silver", f"{e.name}__reject")] if e.has_reject else [])
    # prod reads them to tell a schema the spec moved from one never built; another environment
    # asks for every one only when the command reads them all (`whole`)
    asked = tuple(tables) if whole or environment == "prod" else ()
    mapped = environment_schemas(project_dir, environment, dict(project.schemas), conn, dialect, asked)
    return dataclasses.replace(project, schemas=tuple((role, mapped[role]) for role, _ in project.schemas))


def describe(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> str:
    """The profile and target (dbt) or the gateway (SQLMesh) a project's warehouse is reached through, for messages."""
    if project_kind(project_dir) == SQLMESH:
        from .sqlmesh_gateway import gateway_target

        _no_profiles_dir(project_dir, profiles_dir)
        return gateway_target(project_dir, target).describe()
    return profile_target(project_dir, profiles_dir, target).describe()


def profile_output(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> dict:
    """The profile output dbt itself would use: profiles.yml beside the project, then DBT_PROFILES_DIR, then ~/.dbt."""
    return profile_target(project_dir, profiles_dir, target).output


def connect(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None, read_only: bool = False):
    """(connection, dialect) for the project's warehouse; a WarehouseError naming profile, target and cause otherwise.

    A SQLMesh project (see `project_kind`) is reached through its gateway: `target` names the
    gateway (default: the config's `default_gateway`), and `profiles_dir` must be None.
    """
    if project_kind(project_dir) == SQLMESH:
        from .sqlmesh_gateway import connect_gateway

        _no_profiles_dir(project_dir, profiles_dir)
        return connect_gateway(project_dir, target, read_only, _driver, warehouse_errors)
    found = profile_target(project_dir, profiles_dir, target)
    out = found.output
    kind = out.get("type")
    if kind == "duckdb":
        path = Path(str(out.get("path", ":memory:")))
        if not path.is_absolute():
            # dbt resolves a relative path against its working directory; assay takes the project
            # directory, where dbt runs when started there (`assay init` writes an absolute path).
            path = Path(project_dir) / path
        # Also when writing (maintain, replay): DuckDB would create an empty file, and the
        # command would then report on a warehouse that was never built.
        if not path.exists():
            raise WarehouseError(
                f"cannot read the warehouse of {found.describe()}: the DuckDB file {path} does not exist; "
                "run `dbt build` in the project first, or check the target's `path:`."
            )
        duckdb = _driver("duckdb")
        with warehouse_errors(f"cannot connect to the warehouse of {found.describe()}"):
            return duckdb.connect(str(path), read_only=read_only), "duckdb"
    if kind == "postgres":
        missing = [k for k in ("host", "user") if not out.get(k)] + ([] if out.get("dbname") or out.get("database") else ["dbname"])
        if missing:
            raise WarehouseError(f"{found.describe()} has no {', '.join(f'`{k}`' for k in missing)}; add it to the target in profiles.yml.")
        psycopg2 = _driver("psycopg2")
        with warehouse_errors(f"cannot connect to the warehouse of {found.describe()}"):
            conn = psycopg2.connect(
                host=out["host"], port=out.get("port", 5432), user=out["user"], password=str(out.get("password") or ""),
                dbname=out.get("dbname") or out.get("database"), connect_timeout=10,
            )
            return postgres_session(conn, read_only), "postgres"
    if kind == "spark" and out.get("method") == "session":
        # Spark runs in one child process per command (decision 0840); only reading is offered.
        from .spark_conn import connect_spark

        return connect_spark(Path(project_dir), profiles_dir, target, found.describe(), read_only), "spark"
    raise WarehouseError(f"assay talks to DuckDB, Postgres and Spark (dbt-spark `method: session`) warehouses; {found.describe()} "
                         f"is {kind!r}{' with method ' + repr(out.get('method')) if kind == 'spark' else ''}. "
                         "Pass --target with a DuckDB, Postgres or Spark session target.")


def postgres_session(conn, read_only: bool):
    """`conn` in autocommit, and read-only when the command only reads: every transaction of the
    session is then READ ONLY, so the server refuses any write the command's SQL might attempt.
    Dates and timestamps Python cannot hold come back as their text (`_lenient_times`)."""
    conn.set_session(readonly=True if read_only else None, autocommit=True)
    _lenient_times(conn)
    return conn


# date, timestamp, timestamptz: PostgreSQL holds years up to 294276 and before year 1, Python's
# datetime only 1-9999, and psycopg2 raised "year 10000 is out of range" for a value a build
# legitimately stored (`9999-12-31T23:59:59-01:00` read as ISO 8601 is in year 10000): `assay
# explain` then refused to read the entity at all (an outside tester, session 37).
_TIME_OIDS = {1082: "DATE", 1114: "TIMESTAMP", 1184: "TIMESTAMPTZ"}


def _lenient_times(conn) -> None:
    """Register, on `conn` only, casters that read a date or timestamp as psycopg2 does and give
    the server's text where Python has no such value."""
    import psycopg2.extensions as ext

    for oid, name in _TIME_OIDS.items():
        default = ext.string_types.get(oid)
        if default is None:
            continue

        def cast(value, cur, default=default):
            try:
                return default(value, cur)
            except (ValueError, OverflowError):
                return value
        ext.register_type(ext.new_type((oid,), f"ASSAY_{name}", cast), conn)


def _driver(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise WarehouseError(f"the {name} driver is not installed in this environment; install assay with the dbt extra: pip install -e '.[dbt]' in its checkout.") from None


def is_driver_error(exc: BaseException) -> bool:
    """True for an exception raised by the DuckDB or Postgres driver or by Spark (the warehouse's answer, not a bug)."""
    return type(exc).__module__.split(".")[0] in _DRIVER_MODULES or getattr(exc, "warehouse_driver_error", False)


# What to check after a driver error, by the kind of project (the words a user of each tool knows).
_ADVICE = {
    DBT: "Check that the warehouse is running and reachable with the profile's settings, that no other process "
         "holds it, and that `dbt build` has run in the project.",
    SQLMESH: "Check that the warehouse is running and reachable with the gateway's settings, that no other process "
             "holds it, and that `sqlmesh plan` has run in the project.",
}


@contextmanager
def warehouse_errors(doing: str, kind: str = DBT) -> Iterator[None]:
    """Turn a driver exception raised inside the block into a WarehouseError: `<doing>: <cause>. <advice>`
    (`kind`: the project's, `dbt` or `sqlmesh`, for the advice)."""
    try:
        yield
    except Exception as exc:
        if not is_driver_error(exc):
            raise
        raise WarehouseError(f"{doing}: {_first_line(exc)}. {_ADVICE.get(kind, _ADVICE[DBT])}") from None


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")[:1]).strip()
    return text or type(exc).__name__


def query(conn, dialect: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Run one query with `?` placeholders on any engine (names in it quoted with `relation`)."""
    return [tuple(r) for r in execute(conn.cursor(), dialect, sql, params).fetchall()]


def remember(reader: Any, key: tuple, compute: Callable[[], Any]) -> Any:
    """`compute()`, asked once per connection where `reader` remembers (`Reader.remembered`; the
    report's gatherer too), else every time: for the facts a command only reads."""
    remembered = getattr(reader, "remembered", None)
    return remembered(key, compute) if remembered else compute()


class Memo:
    """Answers kept for one connection's life, each computed the first time its key is asked
    (`Reader.remembered`, the report's gatherer): for facts a command only reads."""

    def __init__(self) -> None:
        self._answers: dict = {}

    def __call__(self, key: tuple, compute: Callable[[], Any]) -> Any:
        if key not in self._answers:
            self._answers[key] = compute()
        return self._answers[key]


class Reader:
    """Read-only questions about a warehouse connection, in one spelling for every engine:
    `query` with `?` placeholders, the `columns` of a relation, whether a table `exists`, and the
    quoted name of a `relation`.

    The operator commands (explain, report) hand these to their core, which never sees a driver."""

    def __init__(self, conn, dialect: str):
        self._cur = conn.cursor()
        self._dialect = dialect
        # Answers a command asks more than once over this connection (the report asks whether the
        # events table exists a dozen times): on Spark each question is a planned statement, about
        # 0.1 s. Only what a command cannot change under itself is kept (see `exists`, `remembered`).
        self._known: set[tuple[str, str]] = set()
        self._memo = Memo()

    @property
    def dialect(self) -> str:
        """The engine's sqlglot dialect name."""
        return self._dialect

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Rows of one query whose placeholders are written `?`."""
        return [tuple(r) for r in execute(self._cur, self._dialect, sql, params).fetchall()]

    def relation(self, *parts: str) -> str:
        """`schema.table` quoted for this connection (any text stays one name)."""
        return relation(self._dialect, *parts)

    def columns(self, relation: str) -> list[str]:
        """Column names of a (quoted) relation, from a query that reads no row."""
        execute(self._cur, self._dialect, f"select * from {relation} where 1 = 0")
        return [d[0] for d in self._cur.description]

    def exists(self, schema: str, table: str) -> bool:
        """Whether `schema.table` is a table or view the connection can see. A table once seen is
        not asked about again: no command drops a table, and a build run between two questions
        (plan --data) runs between two connections. One not seen is asked again each time."""
        if (schema, table) in self._known:
            return True
        found = self.query("select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
                           (schema, table))[0][0] > 0
        if found:
            self._known.add((schema, table))
        return found

    def remembered(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """`compute()`'s answer, asked once per connection for `key`: for facts a command only
        reads (the runs' environments), never for rows a command writes (replay's bronze, maintain's
        deletions)."""
        return self._memo(key, compute)
