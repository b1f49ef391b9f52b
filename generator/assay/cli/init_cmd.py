"""`assay init DIR` (a runnable example project) and `assay demo DIR` (init, generate, build, report)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

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


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init_cmd(directory: Path) -> None:
    """Scaffold a runnable example: spec, bronze sample data with real defects, a dbt project on DuckDB."""
    if directory.exists() and any(directory.iterdir()) and not (directory / "assay.yml").exists():
        raise click.UsageError(f"{directory} is not empty; pick a new directory for the example project.")
    init_project(directory)
    click.echo(f"assay init: example project in {directory}")
    click.echo(f"  next: assay generate dbt --spec {directory} --project {directory}")


@click.command("demo")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def demo_cmd(directory: Path) -> None:
    """Run the example end to end on DuckDB: init, generate, load bronze, dbt build, dbt source freshness."""
    from ..api import generate_dbt_project
    from ..errors import SpecError
    from ..runtime.bronze import load_csv_dir_duckdb
    from ..runtime.dbt import run_dbt
    from ..runtime.report import format_counts, landing_counts

    init_project(directory)
    try:
        result = generate_dbt_project(directory, directory)
    except SpecError as exc:
        for d in exc.diagnostics:
            click.echo(d.render())
        sys.exit(1)
    r = result.report
    click.echo(f"1. generate: {len(r.written)} files written, {len(r.unchanged)} unchanged ({len(result.project.entities)} entities)")
    loaded = load_csv_dir_duckdb(directory / "warehouse.duckdb", directory / "bronze", result.project.schema("bronze"))
    click.echo("2. bronze: " + ", ".join(f"{k} {v} rows" for k, v in loaded.items()))
    for step, args in (("3. dbt deps", ("deps",)), ("4. dbt build", ("build",))):
        proc = run_dbt(directory, *args)
        last = [line for line in proc.stdout.splitlines() if "Done." in line or "Completed" in line]
        click.echo(f"{step}: {'ok' if proc.returncode == 0 else 'FAILED'} {last[-1].split('  ', 1)[-1] if last else ''}")
        if proc.returncode != 0:
            click.echo(proc.stdout[-4000:], err=True)
            sys.exit(1)
    proc = run_dbt(directory, "source", "freshness")
    fresh = [line.split("  ", 1)[-1] for line in proc.stdout.splitlines() if "freshness of" in line and " START " not in line]
    click.echo("5. dbt source freshness: " + ("ok" if proc.returncode == 0 else "stale sources"))
    for line in fresh:
        click.echo("     " + line.strip())
    click.echo("\nWhat landed where:")
    click.echo(format_counts(landing_counts(directory / "warehouse.duckdb", result.project)))
    click.echo(f"\nReject rows: silver.<entity>__reject; quality history: {result.project.schema('gold')}.mart_data_quality (in {directory / 'warehouse.duckdb'})")


COMMANDS = (init_cmd, demo_cmd)
