"""`assay init DIR` (a runnable example project) and `assay demo DIR` (init, generate, build, report)."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from ..errors import AssayError, ChecksFailed, ProjectError
from ..scaffold import duckdb_profile, write_dbt_skeleton

TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "shop"


def init_project(directory: Path) -> None:
    """Copy the example spec and bronze sample, and make a dbt project with a DuckDB profile beside it."""
    directory.mkdir(parents=True, exist_ok=True)
    for item in ("assay.yml", "spec", "bronze"):
        src = TEMPLATE / item
        dst = directory / item
        if dst.exists():
            continue
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    if not (directory / "dbt_project.yml").exists():
        write_dbt_skeleton(directory, "shop", duckdb_profile("shop", "warehouse.duckdb"))


def _refuse_foreign(directory: Path) -> None:
    # The example is copied only into a new directory or one holding an earlier example:
    # anything else is somebody's work, which init must not mix files into.
    if directory.exists() and any(directory.iterdir()) and not (directory / "assay.yml").exists():
        raise click.BadParameter(f"{directory} is not empty and holds no assay example; pick a new directory for the example project.",
                                 param_hint="DIRECTORY")


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init_cmd(directory: Path) -> None:
    """Scaffold a runnable example: spec, bronze sample data with real defects, a dbt project on DuckDB."""
    _refuse_foreign(directory)
    init_project(directory)
    click.echo(f"assay init: example project in {directory}")
    click.echo(f"  next: assay generate dbt --spec {directory} --project {directory}")


@click.command("demo")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def demo_cmd(directory: Path) -> None:
    """Run the example end to end on DuckDB: init, generate, load bronze, dbt build, dbt source freshness.

    Exit 0 when the build passed, 2 when it ran but blocking checks did not pass, 1 when dbt
    could not run the project (its own error lines are printed).
    """
    from ..api import generate_dbt_project
    from ..runtime.bronze import load_csv_dir_duckdb
    from ..runtime.dbt import run_dbt_step
    from ..runtime.report import format_counts, landing_counts
    from ..runtime.warehouse import warehouse_errors

    # Absolute from here on: dbt runs with the project as its working directory, where a
    # path relative to the caller's directory would point somewhere else.
    directory = directory.resolve()
    _refuse_foreign(directory)
    init_project(directory)
    result = generate_dbt_project(directory, directory)
    r = result.report
    click.echo(f"1. generate: {len(r.written)} files written, {len(r.unchanged)} unchanged ({len(result.project.entities)} entities)")
    database = directory / "warehouse.duckdb"
    with warehouse_errors(f"cannot load the bronze sample into {database}"):
        loaded = load_csv_dir_duckdb(database, directory / "bronze", result.project.schema("bronze"))
    click.echo("2. bronze: " + ", ".join(f"{k} {v} rows" for k, v in loaded.items()))
    for step, args in (("3. dbt deps", ("deps",)), ("4. dbt build", ("build",))):
        run = run_dbt_step(directory, *args)
        click.echo(f"{step}: {'ok' if run.ok else 'FAILED'} {run.summary()}".rstrip())
        if not run.ok:
            raise _dbt_failed(run, directory)
    fresh = run_dbt_step(directory, "source", "freshness")
    click.echo("5. dbt source freshness: " + ("ok" if fresh.ok else "FAILED"))
    # dbt checks sources on several threads; sorted, the lines read in dbt's own numbering.
    for line in sorted(fresh.freshness_lines(), key=lambda x: int(x.split(" ", 1)[0]) if x[:1].isdigit() else 0):
        click.echo("     " + line)
    click.echo("\nWhat landed where:")
    with warehouse_errors(f"cannot read what landed where from {database}"):
        click.echo(format_counts(landing_counts(database, result.project)))
    click.echo(f"\nReject rows: silver.<entity>__reject; quality history: {result.project.schema('gold')}.mart_data_quality (in {database})")
    if not fresh.ok:
        raise _dbt_failed(fresh, directory)


def _dbt_failed(run, directory: Path) -> AssayError:
    """The error a failed dbt step of the demo ends with, carrying dbt's own error lines."""
    command = "dbt " + " ".join(run.args)
    details = [f"  {line}" for line in run.error_lines()]
    if run.checks_failed():
        return ChecksFailed(
            f"`{command}` ran, but checks did not pass (dbt's report is above): the tables they guard were not "
            "published. The rows that failed are in the candidate tables and silver.<entity>__reject; "
            f"`assay check list --project {directory}` shows every result.",
            details=details,
        )
    return ProjectError(
        f"`{command}` failed in {directory} (dbt exit code {run.returncode}); dbt's own error is above. "
        f"Fix what it names and run `assay demo {directory}` again.",
        details=details,
    )


COMMANDS = (init_cmd, demo_cmd)
