"""`assay init DIR` (a runnable example project) and `assay demo DIR` (init, generate, build, report)."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

import click

from ..artifacts import record_spec_dir
from ..errors import AssayError, ChecksFailed, ProjectError
from ..scaffold import duckdb_profile, write_dbt_skeleton
from .common import Progress, plural, shown

TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "shop"


def init_project(directory: Path, now: Optional[datetime] = None) -> None:
    """Copy the example spec and bronze sample, and make a dbt project with a DuckDB profile beside it.

    The sample's `_ingested_at` values are moved so that the newest delivery is an hour before
    `now` (gaps between loads kept): loaded by hand within the freshness thresholds of the example
    (6 hours for orders), `dbt source freshness` passes (decision 0016). The profile names the
    DuckDB file by its absolute path, so dbt finds the same warehouse from any directory.
    """
    from ..runtime.bronze import restamp_csv_dir

    directory.mkdir(parents=True, exist_ok=True)
    for item in ("assay.yml", "spec", "bronze"):
        src = TEMPLATE / item
        dst = directory / item
        if dst.exists():
            continue
        if src.is_dir():
            shutil.copytree(src, dst)
            if item == "bronze":
                restamp_csv_dir(dst, (now or datetime.now(timezone.utc)) - timedelta(hours=1))
        else:
            shutil.copy2(src, dst)
    if not (directory / "dbt_project.yml").exists():
        warehouse = (directory / "warehouse.duckdb").resolve()
        write_dbt_skeleton(directory, "shop", duckdb_profile("shop", warehouse.as_posix()))


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
    where = shown(directory)
    click.echo(f"assay init: example project in {where} (spec: assay.yml and spec/; bronze sample: bronze/; "
               f"dbt project on DuckDB: {shown((directory / 'warehouse.duckdb').resolve())})")
    click.echo(f"next: load bronze/*.csv into the bronze schema (docs/quickstart.md), then assay generate dbt --project {where}")


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
    with Progress("demo", 6) as progress:
        progress.step("init and generate")
        init_project(directory)
        result = generate_dbt_project(directory, directory)
        if result.report.refused:
            from .generate_cmd import _refuse

            _refuse(result, directory)
        record_spec_dir(directory, directory)
        r = result.report
        progress.echo(f"1. generate: {len(r.written)} files written, {len(r.unchanged)} unchanged "
                      f"({plural(len(result.project.entities), 'entity', 'entities')})")
        database = directory / "warehouse.duckdb"
        progress.step("loading the bronze sample")
        with warehouse_errors(f"cannot load the bronze sample into {database}"):
            loaded = load_csv_dir_duckdb(database, directory / "bronze", result.project.schema("bronze"))
        progress.echo("2. bronze: " + ", ".join(f"{k} {plural(v, 'row')}" for k, v in loaded.items()))
        for step, args in (("3. dbt deps", ("deps",)), ("4. dbt build", ("build",))):
            progress.step(f"dbt {' '.join(args)}")
            run = run_dbt_step(directory, *args)
            progress.echo(f"{step}: {'ok' if run.ok else 'FAILED'} {run.summary()}".rstrip())
            if run.invocation_id and args == ("build",):
                # The id `assay checks` and `assay check list` know this build by.
                progress.echo(f"   run id: {run.invocation_id}")
            if not run.ok:
                raise _dbt_failed(run, directory)
        progress.step("dbt source freshness")
        fresh = run_dbt_step(directory, "source", "freshness")
        progress.echo("5. dbt source freshness: " + ("ok" if fresh.ok else "FAILED"))
        # dbt checks sources on several threads; sorted, the lines read in dbt's own numbering.
        for line in sorted(fresh.freshness_lines(), key=lambda x: int(x.split(" ", 1)[0]) if x[:1].isdigit() else 0):
            progress.echo("     " + line)
        progress.step("reading what landed where")
        with warehouse_errors(f"cannot read what landed where from {database}"):
            counts = format_counts(landing_counts(database, result.project))
    click.echo("\nWhat landed where:")
    click.echo(counts)
    click.echo(f"\nReject rows: silver.<entity>__reject; quality history: {result.project.schema('gold')}.mart_data_quality (in {database})")
    click.echo(f"next: assay checks --project {directory}   (this build's check results); "
               f"assay report --project {directory}   (an HTML page of what the build did)")
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
