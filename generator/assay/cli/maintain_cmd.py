"""`assay maintain [--project DIR] [--spec DIR] [--dry-run] [--now TIMESTAMP] [--json]`: retention."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Optional

import click

from .common import PROJECT_HELP, Progress, environment_option, json_option, plural, project_option, resolve_spec, spec_option, warehouse_options


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
@project_option(PROJECT_HELP)
@spec_option()
@warehouse_options
@environment_option
@click.option("--dry-run", is_flag=True, help="Count what retention would delete; delete nothing and record nothing.")
@click.option("--now", "now_text", default=None, help="The clock retention measures from (ISO 8601, UTC; default: now).")
@json_option()
def maintain_cmd(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str], environment: Optional[str],
                 dry_run: bool, now_text: Optional[str], as_json: bool) -> None:
    """Delete reject rows older than their entity's `quarantine.retention`; record one event per entity.

    Unresolved rows are measured from `last_seen`, resolved rows from `resolved_at`; an unresolved row
    whose delivery bronze still holds is kept (the next build would write it back). This is the only
    command that ever deletes a row.
    """
    from ..api import load_project
    from ..errors import AssayError
    from ..retention import maintain, unclaimed_rejects
    from ..runtime.operator import open_warehouse

    now = _parse_now(now_text)
    with Progress("maintain", 3, quiet=as_json) as progress:
        progress.step("reading the spec")
        project = load_project(resolve_spec(spec_dir, project_dir))  # a SpecError carries its own exit code
        progress.step("connecting to the warehouse")
        with open_warehouse(project, project_dir, profiles_dir=profiles_dir, target=target, environment=environment,
                            read_only=False) as wh:
            kept = [e for e in wh.project.entities if e.has_reject and e.retention is not None]
            progress.step(f"{'counting' if dry_run else 'applying'} retention on "
                          f"{plural(len(kept), 'reject table')}")
            done = maintain(wh.conn, wh.dialect, wh.project, now, dry_run=dry_run)
            unclaimed = unclaimed_rejects(wh.conn, wh.dialect, wh.project)
            where = wh.describe
            silver = wh.project.schema("silver")
    for table in unclaimed:
        # on stderr: --json's output stays the list of what retention did
        click.echo(f"{table}: no entity of the spec quarantines into it any more (renamed or removed, or its "
                   "`quarantine:` dropped since the build), so no retention applies to it and maintain left it as it "
                   "is; drop it once its rows are no longer needed, or restore the entity.", err=True)
    if kept and not done:
        # The spec's entities keep reject tables with a retention, and the warehouse read holds none
        # of them: a retention job pointed at a target no build wrote passed, silently, deleting
        # nothing (an outside tester, session 45). Exit 1, naming what was read.
        names = ", ".join(f"{silver}.{e.name}__reject" for e in kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
        raise AssayError(f"the warehouse of {where} holds none of the spec's reject tables with a retention ({names}): "
                         "no build wrote them there yet, or the build wrote another warehouse (pass --target, "
                         "--profiles-dir or --project for the one it wrote); nothing was deleted.",
                         out=["[]"] if as_json else [])
    if as_json:
        click.echo(json.dumps([
            {"entity": e.entity, "table": e.table, "retention": e.retention, "cutoff": e.cutoff.isoformat(),
             "unresolved_deleted": e.unresolved, "resolved_deleted": e.resolved, "unresolved_kept_in_bronze": e.held,
             "dry_run": dry_run}
            for e in done], indent=2))
        return
    verb = "would delete" if dry_run else "deleted"
    if not done:
        click.echo("no reject tables with a retention were found" + (" for the spec's entities" if unclaimed else "")
                   + "; nothing to do")
    for e in done:
        click.echo(f"{e.table}: {verb} {plural(e.total, 'row')} (retention {e.retention}, cut-off {e.cutoff.isoformat(sep=' ')}: "
                   f"{e.unresolved} unresolved, {e.resolved} resolved)")
        if e.held:
            click.echo(f"{e.table}: kept {plural(e.held, 'unresolved row')} past retention: bronze still holds "
                       f"{'its' if e.held == 1 else 'their'} delivery, which the next build would divert again; "
                       f"{'it expires' if e.held == 1 else 'they expire'} once bronze's own retention drops "
                       f"{'it' if e.held == 1 else 'them'}")
    if done and not dry_run:
        click.echo("recorded one REJECTS_EXPIRED event per table in the meta schema's assay_events")


COMMANDS = (maintain_cmd,)
