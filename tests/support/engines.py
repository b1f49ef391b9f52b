"""The engines an oracle-judged suite runs on, as one fixture parameter each.

`ENGINES` lists them; a suite that takes the `engine` fixture (tests/integration/conftest.py)
runs once per entry, so adding an engine is adding an entry here (and, for a new kind of
server, the code that starts it). PostgreSQL servers are started once per session and shared
by every suite (`ServerPool`); each project gets a fresh database on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import pg


@dataclass(frozen=True)
class EngineSpec:
    id: str  # the test id: duckdb, pg18, pg15
    kind: str  # duckdb | postgres
    server_label: Optional[str] = None  # tests.support.pg label of the server, for postgres


ENGINES = (
    EngineSpec("duckdb", "duckdb"),
    EngineSpec("pg18", "postgres", "embedded"),
    EngineSpec("pg15", "postgres", "system"),
)
# Apache Spark in local mode (tests/support/spark.py): not in ENGINES, because a Spark build
# costs minutes; the Spark suites (tests/integration/test_spark_*.py) run the shared suites with
# `engine` overridden to this one, in one Spark process (and Derby metastore) per test process.
SPARK = EngineSpec("spark", "spark")


class ServerPool:
    """PostgreSQL servers by label, started on first use and stopped at the end of the session."""

    def __init__(self):
        self._running: dict = {}  # label -> (generator, PgServer)

    def get(self, label: str) -> "pg.PgServer":
        if label not in self._running:
            gen = pg.postgres_server(label)  # skips (pytest.skip) with the reason when unavailable
            self._running[label] = (gen, next(gen))
        return self._running[label][1]

    def close(self) -> None:
        for gen, _server in self._running.values():
            gen.close()  # runs the generator's finally: the server stops
        self._running.clear()


@dataclass
class Engine:
    spec: EngineSpec
    server: Optional["pg.PgServer"] = None
    _databases: set = field(default_factory=set)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def kind(self) -> str:
        return self.spec.kind

    def database(self, name: str) -> Optional[dict]:
        """A fresh, empty database on this engine's server (connection params); None on DuckDB."""
        if self.server is None:
            return None
        conn = self.server.connect()
        conn.autocommit = True
        try:
            cur = conn.cursor()
            cur.execute(f'drop database if exists "{name}" with (force)' if self.server.version_num >= 130000
                        else f'drop database if exists "{name}"')
            cur.execute(f'create database "{name}"')
        finally:
            conn.close()
        return {**self.server.params(), "dbname": name}

    def dbt_project(self, root: Path, spec_dir: Path, name: str):
        if self.kind == "spark":
            from .spark import make_spark_project

            return make_spark_project(root / "project", spec_dir)  # the worker's shared Spark process
        from .dbtproject import make_project

        return make_project(root, spec_dir, self.kind, self.database(name))

    def sqlmesh_project(self, root: Path, spec_dir: Path, name: str):
        from .sqlmeshproject import make_project

        return make_project(root, spec_dir, self.kind, self.database(name))
