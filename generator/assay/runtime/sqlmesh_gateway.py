"""The warehouse of a SQLMesh project: its gateway's connection, read with SQLMesh's own config loader.

SQLMesh reads `config.yaml` / `config.yml` / `config.py` (with `.env`, environment variables and
personal config under ~/.sqlmesh); loading the config the same way means the operator commands
reach exactly the warehouse `sqlmesh plan` writes to. The connection itself is opened with the
same drivers the dbt path uses (duckdb, psycopg2), so every command reads both kinds of project
through one `Reader`.

Every failure is a :class:`WarehouseError` naming the gateway, the config file and the cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import ProjectError, WarehouseError
from ..identifiers import quote_identifier

CONFIG_FILES = ("config.yaml", "config.yml", "config.py")


@dataclass(frozen=True)
class GatewayTarget:
    """The gateway a SQLMesh project's commands use, and its connection settings."""

    gateway: str
    path: Path  # the config file it came from
    kind: str  # duckdb | postgres | another SQLMesh connection type
    settings: dict  # the connection's fields (database, host, ...)

    def describe(self) -> str:
        """`gateway 'local' (duckdb at /x/warehouse.duckdb, from /x/config.yaml)`, for messages."""
        s = self.settings
        if self.kind == "postgres":
            where = f"{s.get('host')}:{s.get('port', 5432)}/{s.get('database')}"
        elif not s.get("database") and s.get("catalogs"):
            where = "catalogs " + ", ".join(f"{k}={v if isinstance(v, str) else (v or {}).get('path')}"
                                            for k, v in s["catalogs"].items())
        else:
            where = str(s.get("database") or ":memory:")
        return f"gateway {self.gateway!r} ({self.kind} at {where}, from {self.path})"


def config_file(project_dir: Path) -> Optional[Path]:
    """The project's SQLMesh config file, or None when it has none."""
    for name in CONFIG_FILES:
        if (Path(project_dir) / name).is_file():
            return Path(project_dir) / name
    return None


def _load_config(project_dir: Path, path: Path):
    """The project's SQLMesh Config, loaded as `sqlmesh` loads it."""
    try:
        from sqlmesh.core.config import Config, loader
    except ImportError:
        raise WarehouseError("reading a SQLMesh project's gateway needs SQLMesh; install assay with the sqlmesh extra: "
                             "pip install -e '.[sqlmesh]' in its checkout.") from None
    try:
        configs = loader.load_configs(None, Config, [Path(project_dir)])
        return next(iter(configs.values()))
    except Exception as exc:  # SQLMesh's ConfigError, a YAML error, an exception in config.py
        raise ProjectError(f"{path} cannot be loaded by SQLMesh ({_first_line(exc)}); fix it so that `sqlmesh plan` "
                           "can read it too.") from None


# The roles whose models SQLMesh publishes per environment (views in `<schema>__<env>`); bronze is
# external and meta holds plain tables (check results, events) shared by every environment.
PUBLISHED_ROLES = ("silver", "gold")


def environment_schemas(project_dir: Path, environment: str, schemas: dict[str, str], conn, dialect: str,
                        tables: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """`schemas` (role -> schema) as `environment` publishes them: prod as given, another
    environment with SQLMesh's default suffix (`silver__dev`); an error naming the environments
    there are when its views are not in the warehouse (decision 0700), and one naming the
    `tables` ((role, name) the command reads) the environment does not publish: a development
    plan publishes the models it changed only, unless planned with `--include-unmodified`."""
    from .warehouse import query

    name = _sanitize(environment)
    # Compared in Python, not with LIKE: a `_` or `%` in the schema name would be a wildcard there.
    prefix = schemas["silver"] + "__"
    names = [r[0] for r in query(conn, dialect, "select schema_name from information_schema.schemata")]
    found = sorted({n[len(prefix):] for n in names if n.startswith(prefix)})
    has_prod = schemas["silver"] in names
    held = (["prod"] if has_prod else []) + found
    if name == "prod":
        if not has_prod and found:
            # only development plans ran: prod read as an empty environment answered "never built"
            # for tables a plan did build (an outside tester, session 40)
            raise WarehouseError(f"the warehouse holds no prod environment of this project yet (no schema "
                                 f"{schemas['silver']}); its environments: {', '.join(held)}. Pass one of them to "
                                 "--environment, or run `sqlmesh plan` (prod) first.")
        _moved(schemas, names, tables, conn, dialect)
        if "meta" in schemas:
            meta_recorded(project_dir, schemas, conn, dialect)
        return dict(schemas)
    path = config_file(project_dir)
    config = _load_config(project_dir, path)
    target = str(getattr(config.environment_suffix_target, "value", config.environment_suffix_target)).lower()
    if target != "schema":
        raise WarehouseError(f"{path} puts development environments' views at environment_suffix_target: {target}; assay "
                             "reads environments suffixed on the schema (SQLMesh's default) only. Read prod (leave "
                             "out --environment).")
    out = {role: (schema + environment_suffix(environment) if role in PUBLISHED_ROLES else schema)
           for role, schema in schemas.items()}
    if name not in found:
        raise WarehouseError(f"the warehouse holds no environment {name!r} of this project (no schema {out['silver']}); "
                             f"its environments: {', '.join(held) or 'none yet'}. Pass one of them to "
                             f"--environment, or run `sqlmesh plan {name}` first.")
    wanted = [(out[role], table) for role, table in tables if role in PUBLISHED_ROLES]
    if wanted:
        held = {(str(r[0]).lower(), str(r[1]).lower()) for r in query(
            conn, dialect, "select table_schema, table_name from information_schema.tables")}
        missing = sorted(f"{schema}.{table}" for schema, table in wanted if (schema.lower(), table.lower()) not in held)
        if missing:
            # Unchanged models resolve to prod's tables in SQLMesh, which this schema mapping cannot
            # follow: reading half an environment would answer for tables it does not hold (session 36).
            raise WarehouseError(
                f"environment {name!r} publishes {len(wanted) - len(missing)} of the {len(wanted)} tables this command "
                f"reads (not {', '.join(missing[:4])}{' and more' if len(missing) > 4 else ''}): a development plan "
                f"publishes only the models it changed. Run `sqlmesh plan {name} --include-unmodified` so that it "
                "publishes every model, or read prod (leave out --environment).")
    return out


def _moved(schemas: dict[str, str], names: list[str], tables: tuple[tuple[str, str], ...], conn, dialect: str) -> None:
    """An error when a published role's schema (assay.yml's `silver` or `gold`) is not in the
    warehouse while another schema publishes every table of it this command reads: the spec moved
    it since the last plan, and the new schema read as "never built" (an outside tester, session
    40). Every table must be there, so another project's schema that shares a name or two with
    this spec's is not taken for this one's."""
    from .warehouse import query

    wanted = {role: {t.lower() for r, t in tables if r == role} for role in PUBLISHED_ROLES}
    if not any(wanted.values()) or all(schemas.get(role) in names for role in wanted if wanted[role]):
        return
    held: dict[str, set[str]] = {}
    for schema, table in query(conn, dialect, "select table_schema, table_name from information_schema.tables"):
        held.setdefault(str(schema), set()).add(str(table).lower())
    for role in PUBLISHED_ROLES:
        now = schemas.get(role)
        if not wanted[role] or now in names:
            continue
        # SQLMesh's own schemas (`sqlmesh__silver`: physical tables, named apart) and environments'
        # views (`silver__dev`: beside a prod that holds them too) are not where a plan published prod
        was = sorted(s for s, t in held.items() if wanted[role] <= t and not s.startswith("sqlmesh")
                     and not any(s.startswith(o + "__") for o in held if o != s and wanted[role] <= held[o]))
        if was:
            raise WarehouseError(
                f"the spec's {role} schema `{now}` is not in the warehouse, but `{', '.join(was)}` publishes every "
                f"table of it this command reads: the spec's {role} schema moved (assay.yml) since the last plan. Run "
                f"`sqlmesh plan` so that it publishes them in `{now}` (the old schema's views stay there, unread), "
                "then run this again.")


def meta_recorded(project_dir: Path, schemas: dict[str, str], conn, dialect: str) -> None:
    """An error when the plans record their check results and events where the spec's meta schema
    is not: the config's `@assay_record_environment` names another schema, or prod is built and the
    meta schema holds no plan's record at all (the spec moved it since the last plan). Either way
    the commands would read an empty schema as "no results" (an outside tester, session 43; dbt
    reads where its manifest says the build wrote them)."""
    from ..api_sqlmesh import statement_meta
    from ..errors import ProjectError
    from .warehouse import query

    meta = schemas["meta"]
    said = statement_meta(project_dir)
    if said is None:
        return
    if said != meta:
        raise ProjectError(
            f"{config_file(project_dir)} records each plan's environment into `{said}` (its before_all), but the spec's "
            f"meta schema is `{meta}`: plans record their check results and events where the spec does not read them. "
            f"Write \"@assay_record_environment('{meta}')\" there, run `sqlmesh plan`, then run this again.")
    held = {(str(r[0]), str(r[1]).lower()) for r in query(
        conn, dialect, "select table_schema, table_name from information_schema.tables")}
    if any(schema == schemas["silver"] for schema, _t in held) and (meta, "assay_events") not in held:
        raise ProjectError(
            f"prod is built (schema `{schemas['silver']}`), but the spec's meta schema `{meta}` holds no record of any "
            "plan: the meta schema moved (assay.yml) since the last plan, and the check results and events are in "
            f"the old one, unread. Run `sqlmesh plan` so that it records into `{meta}`, then run this again.")


def known_environment(project_dir: Path, environment: str, silver: str, conn, dialect: str) -> None:
    """An error naming the environments there are when `environment` is neither prod nor one whose
    views the warehouse holds (for commands that read no published table, only the check results)."""
    environment_schemas(project_dir, environment, {"silver": silver}, conn, dialect)


def _sanitize(environment: str) -> str:
    # SQLMesh's own rule for environment names (EnvironmentNamingInfo): word characters, lower case
    return re.sub(r"\W", "_", environment).lower()


def environment_suffix(environment: str) -> str:
    """What SQLMesh's default `environment_suffix_target: schema` appends to a published schema
    for `environment` (`__dev`)."""
    return "__" + _sanitize(environment)


def gateway_target(project_dir: Path, gateway: Optional[str] = None) -> GatewayTarget:
    """The gateway `sqlmesh plan` would use (`default_gateway`, or the one named), from SQLMesh's loader."""
    path = config_file(project_dir)
    if path is None:
        raise ProjectError(f"{project_dir} has no config.yaml or config.py; point --project at the SQLMesh project "
                           "whose gateway names the warehouse.")
    config = _load_config(project_dir, path)
    name = gateway or config.default_gateway_name
    known = sorted(config.gateways) if isinstance(config.gateways, dict) else []
    if gateway is not None and gateway not in known:
        raise WarehouseError(f"{path} has no gateway {gateway!r} (its gateways: {', '.join(repr(k) for k in known) or 'none'}); "
                             "pass --target with one of them, or add the gateway to the config.")
    try:
        connection = config.get_gateway(gateway).connection
    except Exception as exc:
        raise WarehouseError(f"{path} names no usable gateway ({_first_line(exc)}); set `default_gateway` or pass --target "
                             "with a gateway name.") from None
    if connection is None:
        raise WarehouseError(f"gateway {name!r} in {path} has no `connection`; add one (DuckDB or Postgres).")
    settings: dict[str, Any] = connection.model_dump() if hasattr(connection, "model_dump") else dict(connection)
    kind = str(settings.get("type_") or settings.get("type") or getattr(connection, "type_", "?"))
    return GatewayTarget(str(name), path, kind, settings)


def connect_gateway(project_dir: Path, gateway: Optional[str], read_only: bool, driver, errors):
    """(connection, dialect) for a SQLMesh project's gateway; `driver` and `errors` are warehouse.py's."""
    from .warehouse import postgres_session
    found = gateway_target(project_dir, gateway)
    s = found.settings
    if found.kind == "duckdb" and not s.get("database") and s.get("catalogs"):
        return _attach_catalogs(found, project_dir, read_only, driver, errors)
    if found.kind == "duckdb":
        database = s.get("database")
        if not database or database == ":memory:":
            raise WarehouseError(f"{found.describe()} is an in-memory DuckDB: nothing outlives `sqlmesh plan`, so there "
                                 "is nothing to read; give the connection a `database:` file.")
        path = _local_file(project_dir, str(database))
        if not path.exists():
            raise WarehouseError(f"cannot read the warehouse of {found.describe()}: the DuckDB file {path} does not exist; "
                                 "run `sqlmesh plan` in the project first, or check the connection's `database:`.")
        duckdb = driver("duckdb")
        with errors(f"cannot connect to the warehouse of {found.describe()}", "sqlmesh"):
            return duckdb.connect(str(path), read_only=read_only), "duckdb"
    if found.kind == "postgres":
        missing = [k for k in ("host", "user", "database") if not s.get(k)]
        if missing:
            raise WarehouseError(f"{found.describe()} has no {', '.join(f'`{k}`' for k in missing)}; add it to the gateway's connection.")
        psycopg2 = driver("psycopg2")
        with errors(f"cannot connect to the warehouse of {found.describe()}", "sqlmesh"):
            conn = psycopg2.connect(host=s["host"], port=s.get("port") or 5432, user=s["user"],
                                    password=str(s.get("password") or ""), dbname=s["database"], connect_timeout=10)
            return postgres_session(conn, read_only), "postgres"
    raise WarehouseError(f"assay talks to DuckDB and Postgres warehouses; {found.describe()} is {found.kind!r}. "
                         "Pass --target with a DuckDB or Postgres gateway.")


def _local_file(project_dir: Path, path: str) -> Path:
    # SQLMesh opens a relative path from where it runs; assay takes the project directory,
    # where `sqlmesh plan` runs when started there.
    return Path(path) if Path(path).is_absolute() else Path(project_dir) / path


def _attach_catalogs(found: GatewayTarget, project_dir: Path, read_only: bool, driver, errors):
    """A DuckDB gateway with `catalogs:` instead of `database:`: each file attached under its
    catalog name (the name SQLMesh's views use), the first one the default, as SQLMesh does."""
    catalogs = found.settings["catalogs"]
    files = {}
    for name, value in catalogs.items():
        path = value if isinstance(value, str) else (value or {}).get("path")
        if not isinstance(path, str) or path == ":memory:" or "://" in path or path.startswith("md:"):
            raise WarehouseError(f"{found.describe()}: catalog {name!r} is not a local DuckDB file, which is all assay "
                                 "reads; give it a file path.")
        files[name] = _local_file(project_dir, path)
        if not files[name].exists():
            raise WarehouseError(f"cannot read the warehouse of {found.describe()}: the DuckDB file {files[name]} of catalog "
                                 f"{name!r} does not exist; run `sqlmesh plan` in the project first, or check its path.")
    duckdb = driver("duckdb")
    with errors(f"cannot connect to the warehouse of {found.describe()}", "sqlmesh"):
        conn = duckdb.connect(":memory:")
        mode = " (READ_ONLY)" if read_only else ""
        for name, path in files.items():
            conn.execute(f"ATTACH '{str(path).replace(chr(39), chr(39) * 2)}' AS {quote_identifier(name, 'duckdb')}{mode}")
        return _UsingCatalog(conn, next(iter(files))), "duckdb"


class _UsingCatalog:
    """A DuckDB connection whose cursors start in `catalog`: a DuckDB cursor is a connection of
    its own that does not inherit `USE`, and every reader in assay asks for cursors."""

    def __init__(self, conn, catalog: str):
        self._conn, self._use = conn, f"USE {quote_identifier(catalog, 'duckdb')}"
        conn.execute(self._use)

    def cursor(self):
        cur = self._conn.cursor()
        cur.execute(self._use)
        return cur

    def __getattr__(self, name: str):
        return getattr(self._conn, name)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")[:1]).strip()
    return text or type(exc).__name__
