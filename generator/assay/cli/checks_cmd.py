"""`assay checks RUN_ID [--json] --project DIR`: the declared-check results of one dbt run.

Reads ``<meta>.assay_check_results`` (written by the ``assay_entity`` materialization) through
the connection of the dbt project's own profile, and prints document 000's wire shape
``[{"check_id", "passed", "detail"}]`` with the exact detail sentences, rendered here from the
recorded measurements (the warehouse only records numbers and values).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import click
import yaml

from ..checks.recorded import verdict_of_row

RESULTS_TABLE = "assay_check_results"
COLUMNS = "table_name, check_id, kind, passed, check_spec, measures, check_position"


def _profile_output(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str]) -> dict:
    """The output of the project's profile that dbt itself would use (profiles.yml beside the
    project, then $DBT_PROFILES_DIR, then ~/.dbt)."""
    project_yml = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    name = project_yml.get("profile")
    candidates = [profiles_dir] if profiles_dir else []
    candidates += [project_dir]
    if os.environ.get("DBT_PROFILES_DIR"):
        candidates.append(Path(os.environ["DBT_PROFILES_DIR"]))
    candidates.append(Path.home() / ".dbt")
    for folder in candidates:
        path = Path(folder) / "profiles.yml"
        if path.is_file():
            profiles = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if name in profiles:
                profile = profiles[name]
                output = (profile.get("outputs") or {}).get(target or profile.get("target"))
                if output is None:
                    raise click.ClickException(f"profile {name} in {path} has no output {target or profile.get('target')}")
                return output
    raise click.ClickException(f"no profiles.yml with profile {name!r} found for {project_dir}")


def _rows_duckdb(output: dict, project_dir: Path, run_id: str) -> list[tuple]:
    import duckdb

    path = Path(str(output.get("path", ":memory:")))
    if not path.is_absolute():
        # dbt resolves a relative path against where it runs, which is the project directory.
        path = project_dir / path
    if not path.exists():
        raise click.ClickException(f"the DuckDB database {path} does not exist; run dbt first")
    conn = duckdb.connect(str(path), read_only=True)
    try:
        schemas = [r[0] for r in conn.execute(
            "select distinct table_schema from information_schema.tables where table_name = ?", [RESULTS_TABLE]
        ).fetchall()]
        rows: list[tuple] = []
        for schema in schemas:
            rows += conn.execute(
                f'select {COLUMNS} from "{schema}".{RESULTS_TABLE} where run_id = ?', [run_id]
            ).fetchall()
        return rows
    finally:
        conn.close()


def _rows_postgres(output: dict, run_id: str) -> list[tuple]:
    import psycopg2

    conn = psycopg2.connect(host=output.get("host"), port=output.get("port"), user=output.get("user"),
                            password=str(output.get("password") or ""), dbname=output.get("dbname") or output.get("database"))
    try:
        cur = conn.cursor()
        cur.execute("select distinct table_schema from information_schema.tables where table_name = %s", [RESULTS_TABLE])
        rows: list[tuple] = []
        for (schema,) in cur.fetchall():
            cur.execute(f'select {COLUMNS} from "{schema}".{RESULTS_TABLE} where run_id = %s', [run_id])
            rows += cur.fetchall()
        return rows
    finally:
        conn.close()


def results_of_run(project_dir: Path, run_id: str, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None) -> list[dict[str, Any]]:
    """The wire results of one run, in table then declaration order."""
    output = _profile_output(project_dir, profiles_dir, target)
    kind = output.get("type")
    if kind == "duckdb":
        rows = _rows_duckdb(output, project_dir, run_id)
    elif kind == "postgres":
        rows = _rows_postgres(output, run_id)
    else:
        raise click.ClickException(f"assay checks reads DuckDB and Postgres profiles; this one is {kind}")
    out = []
    for table, check_id, kind_, passed, spec, measures, position in sorted(rows, key=lambda r: (r[0], r[6], r[1])):
        verdict = verdict_of_row(kind_, spec, measures)
        # The recorded verdict is the one the run acted on; the sentence is rendered again here.
        out.append({"check_id": check_id, "passed": bool(passed), "detail": verdict.detail, "_table": table})
    return out


@click.command("checks")
@click.argument("run_id")
@click.option("--project", "project_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=".", help="The dbt project directory (its profile names the warehouse).")
@click.option("--profiles-dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Where profiles.yml is, when it is not beside the project.")
@click.option("--target", default=None, help="The profile output to read (default: the profile's target).")
@click.option("--json", "as_json", is_flag=True, help="Print 000's wire shape as a JSON list.")
def checks_cmd(run_id: str, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], as_json: bool) -> None:
    """Print the declared-check results of dbt run RUN_ID (its invocation_id)."""
    results = results_of_run(project_dir, run_id, profiles_dir, target)
    if as_json:
        click.echo(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in results], indent=2))
    else:
        if not results:
            click.echo(f"no declared-check results recorded for run {run_id}", err=True)
        for r in results:
            click.echo(f"{r['_table']}: {r['check_id']}: {'passed' if r['passed'] else 'FAILED'}: {r['detail']}")
    sys.exit(0 if results else 1)


COMMANDS = (checks_cmd,)
