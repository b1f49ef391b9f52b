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
`table list|get` read through it; they only render what they read.
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


@contextmanager
def open_warehouse(project: Project, project_dir: Path, *, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None, environment: Optional[str] = None,
                   read_only: bool = True) -> Iterator[Warehouse]:
    """The built warehouse of `project_dir` for one command (see the module docstring).

    connect() raises a WarehouseError naming the profile, the target and the driver's cause;
    built_project a ProjectError when the build's schemas cannot be known."""
    from .built_relations import built_project
    from .warehouse import Reader, check_environment, connect, describe

    check_environment(project_dir, environment)
    conn, dialect = connect(project_dir, profiles_dir, target, read_only=read_only)
    try:
        built = built_project(project, project_dir, conn=conn, dialect=dialect, environment=environment,
                              profiles_dir=profiles_dir, target=target)
        yield Warehouse(built, conn, dialect, Reader(conn, dialect), describe(project_dir, profiles_dir, target))
    finally:
        conn.close()
