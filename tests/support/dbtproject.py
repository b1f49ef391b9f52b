"""Make a throwaway dbt project from a spec, load bronze, and run dbt for real."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from assay.api import generate_dbt_project
from assay.scaffold import duckdb_profile, postgres_profile, write_dbt_skeleton

from . import dbtserver
from .corpus import Corpus, Relation

PROJECT_NAME = "assay_it"


@dataclass
class DbtProject:
    path: Path
    engine: str  # duckdb | postgres
    db_path: Optional[Path] = None
    pg: Optional[dict] = None

    def dbt(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        """Run the real dbt of this venv in the project (tests/support/dbtserver.py); returns the completed process."""
        env = dict(os.environ)
        env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
        proc = dbtserver.dbt([*args, "--project-dir", str(self.path), "--profiles-dir", str(self.path)], self.path, env)
        if check and proc.returncode != 0:
            raise AssertionError(f"dbt {' '.join(args)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}")
        return proc

    # --- data -------------------------------------------------------------------------
    def connect(self):
        if self.engine == "duckdb":
            import duckdb

            return duckdb.connect(str(self.db_path))
        import psycopg2

        conn = psycopg2.connect(**self.pg)
        conn.autocommit = True
        return conn

    def query(self, sql: str) -> list[tuple]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            conn.close()

    def load_bronze(self, relations: Iterable[Relation], schema: str = "bronze") -> None:
        """(Re)create each bronze relation as all-text columns with exactly the given rows."""
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"create schema if not exists {schema}")
            for rel in relations:
                cols = ", ".join(f'"{c}" varchar' if self.engine == "duckdb" else f'"{c}" text' for c in rel.columns)
                cur.execute(f'drop table if exists {schema}."{rel.name}"')
                cur.execute(f'create table {schema}."{rel.name}" ({cols})')
                if rel.rows:
                    marks = ", ".join(["%s" if self.engine == "postgres" else "?"] * len(rel.columns))
                    cur.executemany(f'insert into {schema}."{rel.name}" values ({marks})', rel.rows)
        finally:
            conn.close()


def make_project(root: Path, spec_dir: Path, engine: str = "duckdb", pg: Optional[dict] = None) -> DbtProject:
    """A dbt project in `root` with the spec generated into it and its package installed."""
    root = Path(root)
    if engine == "duckdb":
        db = root / "warehouse.duckdb"
        profile = duckdb_profile(PROJECT_NAME, str(db))
        project = DbtProject(root, engine, db_path=db)
    else:
        profile = postgres_profile(PROJECT_NAME, pg["host"], pg["port"], pg["user"], pg.get("password", ""), pg["dbname"])
        project = DbtProject(root, engine, pg=pg)
    write_dbt_skeleton(root, PROJECT_NAME, profile)
    result = generate_dbt_project(spec_dir, root)
    assert not result.report.conflicts, result.report.conflicts
    project.dbt("deps", check=True)
    return project


def copy_spec(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def load_corpus(project: DbtProject, corpus: Corpus) -> None:
    project.load_bronze(corpus.relations.values())
