"""`assay generate dbt|sqlmesh --spec DIR --project DIR`."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ProjectError


@click.group("generate")
def generate() -> None:
    """Write the files assay owns into a dbt or SQLMesh project."""


def _report(result, project_dir: Path) -> None:
    r = result.report
    if r.conflicts:
        raise ProjectError(
            f"{len(r.conflicts)} of the files assay generates already exist in {project_dir} and are not assay's; "
            "nothing was written. Move them away or remove them and run `assay generate` again: assay never "
            "overwrites your files.",
            details=[f"{project_dir / rel}: exists and is not assay's" for rel in r.conflicts],
        )
    click.echo(
        f"assay generate: {len(r.written)} written, {len(r.unchanged)} unchanged, {len(r.removed)} removed "
        f"({len(result.project.entities)} entities, spec {result.project.fingerprint})"
    )


@generate.command("dbt")
@click.option("--spec", "spec_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True, help="The spec directory.")
@click.option("--project", "project_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="The dbt project to write into.")
def generate_dbt_cmd(spec_dir: Path, project_dir: Path) -> None:
    """Generate models, snapshots, tests and sources into a dbt project."""
    from ..api import generate_dbt_project

    if not (project_dir / "dbt_project.yml").exists():
        raise ProjectError(f"{project_dir} has no dbt_project.yml; point --project at a dbt project (or make one with `assay init DIR`).")
    _report(generate_dbt_project(spec_dir, project_dir), project_dir)


@generate.command("sqlmesh")
@click.option("--spec", "spec_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True, help="The spec directory.")
@click.option("--project", "project_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="The SQLMesh project to write into.")
@click.option(
    "--dialect",
    type=click.Choice(["bigquery", "databricks", "duckdb", "postgres", "redshift", "snowflake", "spark", "trino"]),
    default="duckdb",
    show_default=True,
    help="The SQL dialect the generated models are written in (the macros render for the engine that runs them).",
)
def generate_sqlmesh_cmd(spec_dir: Path, project_dir: Path, dialect: str) -> None:
    """Generate models, audits, external models and the macro hook into a SQLMesh project."""
    from ..api_sqlmesh import generate_sqlmesh_project, is_sqlmesh_project

    if not is_sqlmesh_project(project_dir):
        raise ProjectError(f"{project_dir} has no config.yaml or config.py; point --project at a SQLMesh project (make one with `sqlmesh init`).")
    _report(generate_sqlmesh_project(spec_dir, project_dir, dialect=dialect), project_dir)


COMMANDS = (generate,)
