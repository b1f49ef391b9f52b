"""`assay replay ENTITY [--project DIR] [--spec DIR] [--dry-run] [--json]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from .common import (PROJECT_HELP, Progress, build_command, environment_option, json_option, known_entities, plural, project_option,
                     require_built, resolve_spec, spec_option, warehouse_options)


@click.command("replay")
@click.argument("entity")
@project_option(PROJECT_HELP)
@spec_option()
@warehouse_options
@environment_option
@click.option("--dry-run", is_flag=True, help="Say what would be re-delivered; change nothing.")
@json_option("Print what was (or would be) re-delivered as JSON.")
def replay_cmd(entity: str, spec_dir: Optional[Path], project_dir: Path, profiles_dir: Optional[Path],
               target: Optional[str], environment: Optional[str], dry_run: bool, as_json: bool) -> None:
    """Re-deliver an entity's open reject rows whose bronze row has aged out, for the next build to judge
    (`dbt build`; on SQLMesh the next `sqlmesh plan` or `sqlmesh run`). On an entity without dedupe, at
    most one row per key goes back and none for a key bronze delivers; the others are marked (superseded)."""
    from ..api import load_project
    from ..replay import replay
    from ..runtime.operator import open_warehouse
    from ..runtime.warehouse import project_kind, warehouse_errors

    with Progress("replay", 3, quiet=as_json) as progress:
        progress.step("reading the spec")
        spec = resolve_spec(spec_dir, project_dir)
        project = load_project(spec)
        known_entities(project, [entity], spec)
        ent = project.entity(entity)
        if not ent.has_reject:
            raise click.BadParameter(f"{entity} has no reject table (it declares no quality rules), so there is nothing to replay; "
                                     "pass an entity that quarantines rows.", param_hint="ENTITY")
        progress.step("connecting to the warehouse")
        with open_warehouse(project, project_dir, profiles_dir=profiles_dir, target=target, environment=environment,
                            read_only=False) as wh:
            project = wh.project
            ent = project.entity(entity)
            require_built(wh, entity, "__reject", project_dir, ", so it has no reject rows to replay")
            progress.step(f"{'counting' if dry_run else 're-delivering'} {entity}'s open reject rows")
            with warehouse_errors(f"cannot replay {entity} in the warehouse of {wh.describe}", project_kind(project_dir)):
                report = replay(wh.conn, wh.dialect, project, ent, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps({"entity": entity, "dry_run": dry_run, "in_bronze": report.in_bronze,
                               "needs_full_refresh": report.needs_full_refresh,
                               "redelivered": dict(sorted(report.redelivered.items())),
                               "unrecoverable": report.unrecoverable, "superseded": report.superseded}, indent=2))
        return
    verb = "would re-deliver" if dry_run else "re-delivered"
    click.echo(_in_bronze_line(entity, ent.materialized == "incremental", report.in_bronze, report.needs_full_refresh))
    for source, n in sorted(report.redelivered.items()):
        click.echo(f"{entity}: {verb} {plural(n, 'row')} into {project.schema('bronze')}.{source} with _load_id '__replay__'")
    if report.unrecoverable:
        click.echo(f"{entity}: {plural(report.unrecoverable, 'row')} {'has' if report.unrecoverable == 1 else 'have'} "
                   "no raw payload and cannot be replayed")
    if report.superseded:
        # decision 0920: at most one row per key goes back to an entity without dedupe
        marked = ("stay open, re-stamped (superseded)" if report.marked else "stay open (this engine's reject table "
                  "takes no update, so they are not re-stamped)") if not dry_run else "would stay open, re-stamped (superseded)"
        click.echo(f"{entity}: {plural(report.superseded, 'row')} not re-delivered: {'its' if report.superseded == 1 else 'their'} "
                   f"key is held by a row bronze delivers, or by a later replayed row; {marked}")
    if not dry_run:
        click.echo(_next_step(project_dir, project.schema("silver"), entity, environment))


def _in_bronze_line(entity: str, incremental: bool, in_bronze: int, stuck: int) -> str:
    """What becomes of the open reject rows bronze still holds. A full rebuild re-judges them; an
    incremental entity's ledger judged each delivery once, so replay re-delivers them like rows
    that aged out, except those replayed already and still diverted (decision 1100)."""
    rows = f"{entity}: {plural(in_bronze, 'open reject row')} {'is' if in_bronze == 1 else 'are'} still in bronze"
    if not incremental:
        return f"{rows} and re-judged by the next build"
    if not in_bronze:
        return rows
    line = (f"{rows}; an incremental entity's next build does not judge {'it' if in_bronze == 1 else 'them'} again, "
            f"so replay re-delivers {'it' if in_bronze == 1 else ('them' if not stuck else f'{in_bronze - stuck} of them')}"
            " with the rows that aged out")
    if not stuck:
        return line
    if stuck == in_bronze:
        line = f"{rows}; an incremental entity's next build does not judge {'it' if in_bronze == 1 else 'them'} again"
    return (f"{line}; {stuck} {'was' if stuck == 1 else 'were'} replayed already (bronze holds the `__replay__` delivery), "
            f"so replay does not deliver {'it' if stuck == 1 else 'them'} again: a replayed delivery the build diverts "
            f"again is judged again only by `dbt build --full-refresh --select {entity}__staged+`")


def _next_step(project_dir: Path, silver: str, entity: str, environment: Optional[str] = None) -> str:
    """What judges the re-delivered rows: the next build (dbt), the next plan or run (SQLMesh, decision 0702).
    An incremental entity's ledger takes a replayed delivery as new and never as late, so a plain
    build judges it too (decision 1100)."""
    from ..runtime.warehouse import SQLMESH, project_kind

    step = build_command(project_dir)
    if project_kind(project_dir) != SQLMESH:
        return f"next: {step} (the rows are judged under the current spec)"
    if environment is not None:
        step += f" {environment}"
    run = step.replace(" plan", " run")
    return (f"next: {step} after `assay generate sqlmesh` of a spec fix, else {run} at the next interval (the rows are "
            f"judged under the current models; {silver}.{entity}__reject, forward-only, takes them in at its next interval)")


COMMANDS = (replay_cmd,)
