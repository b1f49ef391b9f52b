"""`assay maintain [--project DIR] [--spec DIR] [--dry-run] [--now TIMESTAMP] [--json]`: retention."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Optional

import click


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _parse_now(text: Optional[str]) -> dt.datetime:
    if text is None:
        return _utc_now()
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not an ISO 8601 timestamp such as 2026-12-01T00:00:00Z", param_hint="--now") from None
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


@click.command("maintain")
@click.option("--project", "project_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=".",
              help="The dbt project whose profile names the warehouse (default: the current directory).")
@click.option("--spec", "spec_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="The spec directory (default: the project's spec/ directory).")
@click.option("--profiles-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--dry-run", is_flag=True, help="Count what retention would delete; delete nothing and record nothing.")
@click.option("--now", "now_text", default=None, help="The clock retention measures from (ISO 8601, UTC; default: now).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def maintain_cmd(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], dry_run: bool,
                 now_text: Optional[str], as_json: bool) -> None:
    """Delete reject rows older than their entity's `quarantine.retention`; record one event per entity.

    Unresolved rows are measured from `last_seen`, resolved rows from `resolved_at`. This is the only
    command that ever deletes a row.
    """
    from ..api import load_project
    from ..retention import maintain
    from ..runtime.warehouse import connect

    now = _parse_now(now_text)
    project = load_project(spec_dir or project_dir / "spec")  # a SpecError carries its own exit code
    # connect() raises a WarehouseError naming the profile, the target and the driver's cause.
    conn, dialect = connect(project_dir, profiles_dir)
    try:
        done = maintain(conn, dialect, project, now, dry_run=dry_run)
    finally:
        conn.close()
    if as_json:
        click.echo(json.dumps([
            {"entity": e.entity, "table": e.table, "retention": e.retention, "cutoff": e.cutoff.isoformat(),
             "unresolved_deleted": e.unresolved, "resolved_deleted": e.resolved, "dry_run": dry_run}
            for e in done], indent=2))
        return
    verb = "would delete" if dry_run else "deleted"
    if not done:
        click.echo("no reject tables with a retention were found; nothing to do")
    for e in done:
        rows = "row" if e.total == 1 else "rows"
        click.echo(f"{e.table}: {verb} {e.total} {rows} (retention {e.retention}, cut-off {e.cutoff.isoformat(sep=' ')}: "
                   f"{e.unresolved} unresolved, {e.resolved} resolved)")
    if done and not dry_run:
        click.echo("recorded one REJECTS_EXPIRED event per table in the meta schema's assay_events")


COMMANDS = (maintain_cmd,)
