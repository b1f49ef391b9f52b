"""`assay replay ENTITY --spec DIR --project DIR [--dry-run]`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click


@click.command("replay")
@click.argument("entity")
@click.option("--spec", "spec_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True)
@click.option("--project", "project_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True, help="The dbt project whose profile names the warehouse.")
@click.option("--profiles-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--dry-run", is_flag=True, help="Say what would be re-delivered; change nothing.")
def replay_cmd(entity: str, spec_dir: Path, project_dir: Path, profiles_dir: Optional[Path], dry_run: bool) -> None:
    """Re-deliver an entity's open reject rows whose bronze row has aged out, for the next build to judge."""
    from ..api import load_project
    from ..replay import replay
    from ..runtime.warehouse import connect, describe, warehouse_errors

    project = load_project(spec_dir)
    names = [e.name for e in project.entities]
    if entity not in names:
        raise click.BadParameter(f"no entity {entity!r} in the spec; pass one of {', '.join(names) or '(none: the spec declares no entities)'}.",
                                 param_hint="ENTITY")
    ent = project.entity(entity)
    if not ent.has_reject:
        raise click.BadParameter(f"{entity} has no reject table (it declares no quality rules), so there is nothing to replay; "
                                 "pass an entity that quarantines rows.", param_hint="ENTITY")
    conn, dialect = connect(project_dir, profiles_dir)
    try:
        with warehouse_errors(f"cannot replay {entity} in the warehouse of {describe(project_dir, profiles_dir)}"):
            report = replay(conn, dialect, project, ent, dry_run=dry_run)
    finally:
        conn.close()
    verb = "would re-deliver" if dry_run else "re-delivered"
    click.echo(f"{entity}: {report.in_bronze} open reject rows are still in bronze and are re-judged by the next build")
    for source, n in sorted(report.redelivered.items()):
        click.echo(f"{entity}: {verb} {n} rows into bronze.{source} with _load_id '__replay__'")
    if report.unrecoverable:
        click.echo(f"{entity}: {report.unrecoverable} rows have no raw payload and cannot be replayed")
    if not dry_run:
        click.echo("next: dbt build (the rows are judged under the current spec)")


COMMANDS = (replay_cmd,)
