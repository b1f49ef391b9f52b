"""The sandbox `assay plan --data` runs the next build in (decision 1020).

A sandbox is a throwaway copy of the dbt project and of the warehouse it builds into:
- the project directory is copied (without dbt's `target/`, `logs/` and any DuckDB file), dbt's
  manifest kept so the built schemas are known before the sandbox builds; the installed packages
  are kept too (`dbt deps` may need a network the build does not), a link into the project
  (dbt's install of a `local:` package, e.g. assay's own) re-pointed into the copy;
- DuckDB: the database file (and its WAL) is copied beside it; the original is only read, as
  bytes, never opened;
- PostgreSQL: a new database on the same server, `assay_plan_<random>`, into which the tables of
  the project's schemas are copied over a READ ONLY session of the warehouse database; it is
  dropped when the sandbox closes. This needs CREATEDB and writes to the server (not to the
  warehouse database): the command says so;
- Spark (dbt-spark `session`, Derby metastore): the warehouse directory and the metastore copied
  as files, the copied metastore's locations moved under the copy when the sandbox's Spark starts
  (plandata/sparkcopy.py).
The sandbox's profiles.yml holds the user's profile with the one output, pointed at the copy.

A SQLMesh project's sandbox (`sqlmesh_sandbox`) is the project copied with its config.yaml's
gateway pointed at the copy: on DuckDB the `database:` file (SQLMesh's state is in it); on
PostgreSQL a scratch database as above, holding SQLMesh's state schema too, moved to the scratch
database's catalog (plandata/sqlmesh_state.py).
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import yaml

from ..errors import ProjectError, WarehouseError

_SKIP_DIRS = {"target", "logs", ".git", "__pycache__", ".cache"}
_DUCKDB_SUFFIXES = (".duckdb", ".duckdb.wal", ".db", ".db.wal")


@dataclass(frozen=True)
class Sandbox:
    """A copy of a dbt project whose profile points at a copy of its warehouse."""

    path: Path
    engine: str  # duckdb | postgres
    where: str  # what the copy is, for messages (a file, or a database on the server)
    dialect: str = ""  # a SQLMesh project's model dialect
    relocation: Optional[dict] = None  # Spark: what the sandbox's Spark moves in its metastore (sparkcopy.py)


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in _SKIP_DIRS or n.endswith(_DUCKDB_SUFFIXES)}


def _relink_packages(project_dir: Path, dest: Path) -> None:
    packages = dest / "dbt_packages"
    if not packages.is_dir():
        return
    home = project_dir.resolve()
    for link in sorted(packages.iterdir()):
        if not link.is_symlink():
            continue
        points = Path(link.parent / link.readlink()).resolve() if not link.readlink().is_absolute() else link.readlink()
        try:
            inside = points.relative_to(home)
        except ValueError:
            continue  # a package outside the project is the same for the copy
        link.unlink()
        link.symlink_to(dest / inside, target_is_directory=True)


def _copy_project(project_dir: Path, dest: Path, skip: tuple = ()) -> None:
    skipped = {Path(p).resolve() for p in skip}

    def ignore(directory: str, names: list[str]) -> set[str]:
        # `skip`: what is copied apart (a Spark warehouse and metastore inside the project)
        return _ignore(directory, names) | {n for n in names if (Path(directory) / n).resolve() in skipped}

    shutil.copytree(project_dir, dest, ignore=ignore, symlinks=True)
    _relink_packages(Path(project_dir), dest)
    manifest = project_dir / "target" / "manifest.json"
    if manifest.exists():
        (dest / "target").mkdir(exist_ok=True)
        shutil.copy2(manifest, dest / "target" / "manifest.json")


def _write_profile(dest: Path, profile: str, target: str, output: dict) -> None:
    text = yaml.safe_dump({profile: {"target": target, "outputs": {target: output}}}, sort_keys=True)
    (dest / "profiles.yml").write_text(text, encoding="utf-8")


def _duckdb_file(project_dir: Path, output: dict) -> Path:
    path = Path(str(output.get("path", ":memory:")))
    if str(path) == ":memory:":
        raise WarehouseError("the profile's DuckDB `path` is :memory:, a warehouse no other process can read; "
                             "point it at the database file the builds write.")
    return path if path.is_absolute() else project_dir / path


def _copy_duckdb(source: Path, dest_dir: Path) -> Path:
    if not source.exists():
        raise WarehouseError(f"the DuckDB file {source} does not exist: nothing has been built yet. Run `dbt build` "
                             "with the spec as deployed first; `assay plan --data` compares a new spec with what that build holds.")
    # the same file name: DuckDB names the catalog after it, and views (SQLMesh's, a user's) name the catalog
    (dest_dir / "db").mkdir()
    copy = dest_dir / "db" / source.name
    shutil.copy2(source, copy)
    wal = source.with_name(source.name + ".wal")
    if wal.exists():
        shutil.copy2(wal, copy.with_name(copy.name + ".wal"))
    return copy


@contextmanager
def sandbox(project_dir: Path, schemas: list[str], *, profiles_dir: Optional[Path] = None,
            target: Optional[str] = None) -> Iterator[Sandbox]:
    """A sandbox of `project_dir` (see the module docstring), removed when the block ends, also on failure.

    `schemas`: the schemas whose tables a PostgreSQL sandbox copies (the built bronze, silver, gold
    and meta schemas); a DuckDB sandbox copies the whole file."""
    from ..runtime.warehouse import profile_target

    found = profile_target(project_dir, profiles_dir, target)
    kind = found.output.get("type")
    if kind not in ("duckdb", "postgres", "spark"):
        raise WarehouseError(f"`assay plan --data` runs the next build in a copy of the warehouse, which it can make "
                             f"for DuckDB, PostgreSQL and Spark (a Derby metastore); {found.describe()} is {kind!r}.")
    spark_dirs: tuple = ()
    if kind == "spark":
        from .sparkcopy import spark_places

        spark_dirs = spark_places(found.output, found.describe())
    root = Path(tempfile.mkdtemp(prefix="assay-plan-"))
    try:
        dest = root / "project"
        _copy_project(Path(project_dir), dest, skip=spark_dirs)
        output = dict(found.output)
        if kind == "spark":
            from .sparkcopy import copy_spark

            output, relocation = copy_spark(output, found.describe(), root / "spark")
            _write_profile(dest, found.profile, found.target, output)
            yield Sandbox(dest, kind, f"{root / 'spark'} (a copy of {spark_dirs[0]} and its metastore)",
                          relocation=relocation)
            return
        if kind == "duckdb":
            copy = _copy_duckdb(_duckdb_file(Path(project_dir), output), root)
            output["path"] = str(copy)
            _write_profile(dest, found.profile, found.target, output)
            yield Sandbox(dest, kind, str(copy))
            return
        from .pgcopy import scratch_database

        with scratch_database(output, schemas) as dbname:
            output["dbname"] = dbname
            output.pop("database", None)
            _write_profile(dest, found.profile, found.target, output)
            yield Sandbox(dest, kind, f"database {dbname} on {output.get('host')}:{output.get('port', 5432)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def sqlmesh_sandbox(project_dir: Path, gateway: Optional[str] = None, schemas: tuple = ()) -> Iterator[Sandbox]:
    """A sandbox of a SQLMesh project, the copy's config.yaml pointed at a copy of the warehouse:
    - DuckDB gateway: the `database:` file, which holds SQLMesh's state beside the tables, copied;
    - PostgreSQL gateway: a scratch database on the same server holding SQLMesh's state, moved to
      the scratch database's catalog, and the schemas it names and `schemas` (plandata/sqlmesh_state.py)."""
    from ..runtime.sqlmesh_gateway import _load_config, _local_file, config_file, gateway_target

    path = config_file(project_dir)
    found = gateway_target(project_dir, gateway)
    config = _load_config(project_dir, path)
    duck = found.kind == "duckdb" and bool(found.settings.get("database"))
    unsupported = path.suffix == ".py" or not (duck or found.kind == "postgres") \
        or config.get_gateway(gateway).state_connection is not None
    if unsupported:
        raise WarehouseError(f"`assay plan --data` on a SQLMesh project copies the gateway's warehouse with SQLMesh's "
                             f"state in it (a DuckDB `database:` file, or a PostgreSQL database), named in config.yaml; "
                             f"{found.describe()} is not one (decision 1020). Without --data the plan still classifies "
                             "the change.")
    dialect = str(config.model_defaults.dialect or found.kind)
    root = Path(tempfile.mkdtemp(prefix="assay-plan-"))
    try:
        dest = root / "project"
        _copy_project(Path(project_dir), dest)
        config_path = dest / path.name
        raw = yaml.safe_load(config_path.read_text(encoding="utf-8"))

        def point(database: str) -> None:
            raw["gateways"][found.gateway]["connection"]["database"] = database
            config_path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")

        if duck:
            copy = _copy_duckdb(_local_file(Path(project_dir), str(found.settings["database"])), root)
            point(str(copy))
            yield Sandbox(dest, "duckdb", str(copy), dialect)
            return
        from .sqlmesh_state import scratch_state

        gw = config.get_gateway(gateway)
        (root / "cache").mkdir()
        with scratch_state(gw.connection, gw.state_schema, list(schemas), root / "cache") as dbname:
            point(dbname)
            where = f"database {dbname} on {found.settings.get('host')}:{found.settings.get('port')}"
            yield Sandbox(dest, "postgres", where, dialect)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def scratch_name() -> str:
    """A database name no one else uses: `assay_plan_` and 12 random hex digits."""
    return "assay_plan_" + secrets.token_hex(6)


def refuse_unbuilt(missing: list[str]) -> None:
    """A ProjectError when the last build left none of the relations the plan compares with."""
    if missing:
        raise ProjectError(
            "nothing to compare with: the warehouse holds no " + ", ".join(missing)
            + ". Run `dbt build` with the spec as deployed first; `assay plan --data` compares a new spec with what that build holds."
        )
