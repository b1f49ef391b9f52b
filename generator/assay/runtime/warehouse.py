"""A DB-API connection to the warehouse a dbt project's profile points at (DuckDB or Postgres)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import yaml


def profile_output(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> dict:
    """The profile output dbt itself would use: profiles.yml beside the project, then DBT_PROFILES_DIR, then ~/.dbt."""
    project = yaml.safe_load((Path(project_dir) / "dbt_project.yml").read_text())
    name = project["profile"]
    folders = [profiles_dir, Path(project_dir), os.environ.get("DBT_PROFILES_DIR"), Path.home() / ".dbt"]
    for folder in folders:
        if not folder:
            continue
        path = Path(folder) / "profiles.yml"
        if path.exists():
            profiles = yaml.safe_load(path.read_text()) or {}
            if name in profiles:
                prof = profiles[name]
                outputs = prof.get("outputs") or {}
                chosen = target or prof.get("target", "dev")
                if chosen not in outputs:
                    raise FileNotFoundError(f"profile {name} in {path} has no output {chosen}")
                return dict(outputs[chosen])
    raise FileNotFoundError(f"no profiles.yml with profile {name!r} found for {project_dir}")


def connect(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None, read_only: bool = False):
    """(connection, dialect) for the project's warehouse."""
    out = profile_output(project_dir, profiles_dir, target)
    if out["type"] == "duckdb":
        import duckdb

        path = Path(str(out.get("path", ":memory:")))
        if not path.is_absolute():
            # dbt resolves a relative path against where it runs, which is the project directory.
            path = Path(project_dir) / path
        if read_only and not path.exists():
            raise FileNotFoundError(f"the DuckDB database {path} does not exist; run dbt first")
        return duckdb.connect(str(path), read_only=read_only), "duckdb"
    if out["type"] == "postgres":
        import psycopg2

        conn = psycopg2.connect(
            host=out["host"], port=out.get("port", 5432), user=out["user"], password=str(out.get("password") or ""),
            dbname=out.get("dbname") or out.get("database"),
        )
        conn.autocommit = True
        return conn, "postgres"
    raise ValueError(f"assay talks to DuckDB and Postgres warehouses; this profile is {out['type']}")


def query(conn, dialect: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Run one query with `?` placeholders on either engine."""
    cur = conn.cursor()
    cur.execute(sql.replace("?", "%s") if dialect == "postgres" else sql, params)
    return [tuple(r) for r in cur.fetchall()]
