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
                return dict(prof["outputs"][target or prof.get("target", "dev")])
    raise FileNotFoundError(f"no profiles.yml with profile {name!r} found for {project_dir}")


def connect(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None):
    """(connection, dialect) for the project's warehouse."""
    out = profile_output(project_dir, profiles_dir, target)
    if out["type"] == "duckdb":
        import duckdb

        path = Path(out.get("path", ":memory:"))
        if not path.is_absolute():
            path = Path(project_dir) / path
        return duckdb.connect(str(path)), "duckdb"
    if out["type"] == "postgres":
        import psycopg2

        conn = psycopg2.connect(
            host=out["host"], port=out.get("port", 5432), user=out["user"], password=out.get("password", ""), dbname=out.get("dbname") or out.get("database")
        )
        conn.autocommit = True
        return conn, "postgres"
    raise ValueError(f"assay talks to DuckDB and Postgres warehouses; this profile is {out['type']}")
