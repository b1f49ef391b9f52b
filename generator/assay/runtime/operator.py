"""The operator core: what every operator command stands on (issue 19), as SQLMesh's `Context` is for
its CLI.

`open_warehouse` takes the spec's project and the project directory and gives the command, for its
whole life, the project with the schemas the build actually wrote (runtime/built_relations.py:
dbt's manifest, a SQLMesh environment), ONE connection to the warehouse (DuckDB, PostgreSQL, Spark
through its child, a SQLMesh gateway; runtime/warehouse.py::connect) and one `Reader` over it
(`?` marks, quoted names; Spark's spelling through sqlglot). The order is fixed here, once: a
dbt-only `--environment` is refused before connecting, the connection is opened, the built
relations are read (on SQLMesh through that connection), and the connection is closed when the
command's block ends, also when it fails. `report`, `explain`, `maintain`, `replay`, `anomalies` and
`table list|get` read through it; they only render what they read. `open_results` is the same for
the commands that read only the recorded check results (`checks`, `check list|rows`), which also
work without the spec.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from ..ir.model import Project


@dataclass(frozen=True)
class Warehouse:
    """One command's view of the built warehouse."""

    project: Project  # the spec's project, with each schema role where the build wrote it
    conn: Any  # the DB-API connection (writers: maintain, replay)
    dialect: str
    reader: Any  # runtime.warehouse.Reader over `conn`
    describe: str  # the profile and target (dbt) or gateway (SQLMesh), for messages
    environment: Optional[str] = None  # the SQLMesh environment read (None: prod; dbt: None)


@contextmanager
def open_warehouse(project: Project, project_dir: Path, *, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None, environment: Optional[str] = None,
                   read_only: bool = True, whole_environment: bool = True) -> Iterator[Warehouse]:
    """The built warehouse of `project_dir` for one command (see the module docstring).

    connect() raises a WarehouseError naming the profile, the target and the driver's cause;
    built_project a ProjectError when the build's schemas cannot be known. `whole_environment`
    false: a SQLMesh environment that does not publish every entity is read all the same (the
    command follows an unchanged table to prod's itself, as `assay table` does)."""
    from .built_relations import built_project
    from .warehouse import Reader, check_environment, connect, describe

    check_environment(project_dir, environment)
    conn, dialect = connect(project_dir, profiles_dir, target, read_only=read_only)
    try:
        built = built_project(project, project_dir, conn=conn, dialect=dialect, environment=environment,
                              profiles_dir=profiles_dir, target=target, whole_environment=whole_environment)
        yield Warehouse(built, conn, dialect, Reader(conn, dialect), describe(project_dir, profiles_dir, target), environment)
    finally:
        conn.close()


@contextmanager
def open_results(project_dir: Path, project: Optional[Project] = None, *, profiles_dir: Optional[Path] = None,
                 target: Optional[str] = None, environment: Optional[str] = None) -> Iterator[Any]:
    """The recorded check results of `project_dir`'s builds, over one read-only connection, for one
    command (`assay checks`, `check list`, `check rows`): a runtime.check_results.CheckResults.

    The results are read only in the schema the build wrote them to: the spec's meta schema as the
    build mapped it when `project` is given, else what the build's own record says (dbt's manifest,
    the schemas `assay generate` recorded). With neither, a ProjectError: results tables found
    elsewhere are never read, since anyone who can create a schema could forge one (decision 0913).
    A driver error inside the block is a WarehouseError naming the warehouse; any other error is
    not dressed up as one."""
    from .check_results import CheckResults
    from .warehouse import SQLMESH, Reader, connect, describe, project_kind, warehouse_errors

    from .warehouse import check_environment

    check_environment(project_dir, environment)
    meta = results_meta(project_dir, project, profiles_dir=profiles_dir, target=target)
    conn, dialect = connect(project_dir, profiles_dir, target, read_only=True)
    try:
        with warehouse_errors(f"cannot read check results from the warehouse of {describe(project_dir, profiles_dir, target)}",
                              project_kind(project_dir)):
            if environment is not None:
                # an environment the warehouse does not hold is refused, as every other command refuses it
                _known_environment(project_dir, project, environment, conn, dialect)
            if project_kind(project_dir) == SQLMESH:
                _meta_recorded(project_dir, project, meta, conn, dialect)
            yield CheckResults(Reader(conn, dialect), meta, environment)
    finally:
        conn.close()


def _meta_recorded(project_dir: Path, project: Optional[Project], meta: str, conn, dialect: str) -> None:
    from ..artifacts import recorded_schemas
    from .sqlmesh_gateway import meta_recorded

    silver = project.schema("silver") if project is not None else (recorded_schemas(Path(project_dir)) or {}).get("silver")
    if silver:
        meta_recorded(project_dir, {"silver": silver, "meta": meta}, conn, dialect)


def _known_environment(project_dir: Path, project: Optional[Project], environment: str, conn, dialect: str) -> None:
    from ..artifacts import recorded_schemas
    from .sqlmesh_gateway import known_environment

    silver = project.schema("silver") if project is not None else (recorded_schemas(Path(project_dir)) or {}).get("silver")
    if silver:
        known_environment(project_dir, environment, silver, conn, dialect)


def not_a_project(project_dir: Path, inside_one: bool = False):
    """A ProjectError saying `project_dir` is no dbt or SQLMesh project (and naming the one above it,
    when it is inside one), or None when it is one (with `inside_one`: also when none is above it)."""
    from ..errors import ProjectError
    from .built_relations import _shown as shown
    from .sqlmesh_gateway import config_file

    here = Path(project_dir).resolve()
    if (here / "dbt_project.yml").exists() or config_file(here) is not None:
        return None
    above = next((d for d in here.parents if (d / "dbt_project.yml").exists() or config_file(d) is not None), None)
    if inside_one and above is None:
        return None
    return ProjectError(
        f"{shown(project_dir)} is not a dbt or SQLMesh project (it has no dbt_project.yml, config.yaml or "
        "config.py); run the command in the project `assay generate` wrote, or pass --project with it"
        + (f": {shown(above)} is one." if above is not None else "."))


def results_meta(project_dir: Path, project: Optional[Project] = None, *, profiles_dir: Optional[Path] = None,
                 target: Optional[str] = None) -> str:
    """The one schema the build wrote the check results (and kept rows) to (see `open_results`)."""
    from ..errors import ProjectError
    from .built_relations import _shown as shown, built_project, manifest_path, results_schema

    if project is not None:
        return built_project(project, project_dir, profiles_dir=profiles_dir, target=target).schema("meta")
    found = results_schema(project_dir, profiles_dir, target)
    if found is not None:
        return found
    from ..artifacts import MANIFEST
    from .sqlmesh_gateway import config_file
    from .warehouse import SQLMESH, project_kind

    outside = not_a_project(project_dir)
    if outside is not None:
        # not a project at all (a subdirectory of one, or elsewhere): saying so first, since passing
        # --spec, the advice below, then fails on the missing dbt_project.yml (an outside tester)
        raise outside
    record = MANIFEST if project_kind(project_dir) == SQLMESH else f"{shown(manifest_path(Path(project_dir)))} nor {MANIFEST}"
    raise ProjectError(
        f"assay cannot tell where the build of {shown(project_dir)} wrote its check results: no spec is recorded "
        f"for the project and neither {record} names the schema; pass --spec with the directory holding "
        "assay.yml. (Results tables found elsewhere in the warehouse are not read: anyone who can create a "
        "schema could forge one.)"
    )
