"""`assay plan OLD NEW`: classify a spec change and print replay_scope and backfill_scope."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("plan")
@click.argument("old", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.argument("new", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_cmd(old: Path, new: Path, as_json: bool) -> None:
    """Compare two spec directories: what changed, what to replay, what to backfill."""
    from ..api import load_project
    from ..plan import plan

    result = plan(load_project(old), load_project(new))
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, sort_keys=True))
        return
    if not result.changes:
        click.echo("no changes")
    for c in result.changes:
        click.echo(f"{c.classification:<12} {c.entity}: {c.kind} {c.detail}")
    click.echo("replay_scope: " + (", ".join(result.replay_scope) or "(none)"))
    click.echo("backfill_scope: " + (", ".join(result.backfill_scope) or "(none)"))


COMMANDS = (plan_cmd,)
