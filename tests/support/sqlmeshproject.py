"""Make a throwaway SQLMesh project from a spec, load bronze, and run `sqlmesh plan` for real.

Mirrors dbtproject.DbtProject (`query`, `load_bronze`) so the same outcome readers
(support.outcomes.observe) work on either target. SQLMesh runs in-process through its Python
API: `Context.plan(auto_apply=True, no_prompts=True)` is what `sqlmesh plan --auto-apply` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Optional

from assay.api_sqlmesh import duckdb_config, generate_sqlmesh_project, postgres_config

from .corpus import Corpus, Relation


@dataclass
class SQLMeshProject:
    path: Path
    engine: str  # duckdb | postgres
    pg: Optional[dict] = None
    dialect: str = "duckdb"
    server_version: int = 0  # PostgreSQL's server_version_num
    _context: object = field(default=None, repr=False)
    # Each load is one day after the previous one: SQLMesh evaluates a model once per interval
    # of its cron (@daily), so a new load needs a new interval, as it would in production.
    clock: datetime = field(default_factory=lambda: datetime.now(timezone.utc).replace(microsecond=0))

    # --- SQLMesh ----------------------------------------------------------------------------
    def context(self, fresh: bool = False):
        """The project's Context; `fresh` loads the project files again (after a regeneration)."""
        from sqlmesh import Context

        if self._context is None or fresh:
            if self._context is not None:
                self._context.close()
            self._context = Context(paths=str(self.path))
        return self._context

    def plan(self, advance: bool = True, **kwargs):
        """`sqlmesh plan --auto-apply` at the next day's execution time; returns the Plan.

        Raises when a blocking audit fails (the plan is not applied).
        """
        if advance:
            self.clock += timedelta(days=1)
        ctx = self.context()
        return ctx.plan(auto_apply=True, no_prompts=True, execution_time=self.clock, **kwargs)

    def run(self, advance: bool = True) -> bool:
        """`sqlmesh run` at the next day's execution time; True when every model and audit passed."""
        if advance:
            self.clock += timedelta(days=1)
        from sqlmesh.utils import CompletionStatus  # noqa: F401  (the return type)

        status = self.context().run(execution_time=self.clock)
        return getattr(status, "is_success", bool(status))

    def close(self) -> None:
        if self._context is not None:
            self._context.close()
            self._context = None

    def render(self, sql: str) -> str:
        """Expand assay macros in `sql` for this project's engine (and Postgres server version)."""
        from assay_sqlmesh import render_sql

        pinned = {"__sqlmesh__vars__": {"assay_postgres_version_num": self.server_version}} if self.server_version else {}
        return render_sql(sql, self.dialect, **pinned)

    # --- data -------------------------------------------------------------------------------
    def query(self, sql: str) -> list[tuple]:
        if self.engine == "postgres":
            conn = self._pg()
            try:
                cur = conn.cursor()
                cur.execute(sql)
                return [tuple(r) for r in cur.fetchall()]
            finally:
                conn.close()
        return [tuple(r) for r in self.context().engine_adapter.fetchall(sql)]

    def execute(self, sql: str, rows: Optional[list] = None) -> None:
        if self.engine == "postgres":
            conn = self._pg()
            try:
                cur = conn.cursor()
                if rows is None:
                    cur.execute(sql)
                else:
                    cur.executemany(sql, rows)
            finally:
                conn.close()
            return
        cursor = self.context().engine_adapter.cursor
        if rows is None:
            cursor.execute(sql)
        else:
            cursor.executemany(sql, rows)

    def _pg(self):
        import psycopg2

        conn = psycopg2.connect(**self.pg)
        conn.autocommit = True
        return conn

    def load_bronze(self, relations: Iterable[Relation], schema: str = "bronze") -> None:
        """(Re)create each bronze relation as all-text columns with exactly the given rows."""
        self.execute(f"create schema if not exists {schema}")
        mark = "%s" if self.engine == "postgres" else "?"
        for rel in relations:
            cols = ", ".join(f'"{c}" text' for c in rel.columns)
            self.execute(f'drop table if exists {schema}."{rel.name}"')
            self.execute(f'create table {schema}."{rel.name}" ({cols})')
            if rel.rows:
                marks = ", ".join([mark] * len(rel.columns))
                self.execute(f'insert into {schema}."{rel.name}" values ({marks})', [list(r) for r in rel.rows])


def _server_version(pg: dict) -> int:
    import psycopg2

    conn = psycopg2.connect(**pg)
    try:
        cur = conn.cursor()
        cur.execute("select current_setting('server_version_num')::int")
        return int(cur.fetchone()[0])
    finally:
        conn.close()


def make_project(root: Path, spec_dir: Path, engine: str = "duckdb", pg: Optional[dict] = None) -> SQLMeshProject:
    """A SQLMesh project in `root` with the spec generated into it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    version = 0
    if engine == "duckdb":
        config, dialect = duckdb_config(str(root / "warehouse.duckdb")), "duckdb"
    else:
        version = _server_version(pg)
        config = postgres_config(pg["host"], pg["port"], pg["user"], pg.get("password", ""), pg["dbname"], version)
        dialect = "postgres"
    (root / "config.yaml").write_text(config, encoding="utf-8")
    result = generate_sqlmesh_project(spec_dir, root, dialect=dialect)
    assert not result.report.conflicts, result.report.conflicts
    return SQLMeshProject(root, engine, pg=pg, dialect=dialect, server_version=version)


def load_corpus(project: SQLMeshProject, corpus: Corpus) -> None:
    project.load_bronze(corpus.relations.values())
