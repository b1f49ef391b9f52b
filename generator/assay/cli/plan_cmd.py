"""`assay plan OLD_SPEC [--spec DIR] [--project DIR] [--json]`: classify a spec change and print
replay_scope and backfill_scope."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from ..errors import AssayUsageError
from .common import check_spec_dir, json_option, project_option, resolve_spec, spec_option


@click.command("plan")
@click.argument("old", metavar="OLD_SPEC", type=click.Path(file_okay=False, exists=True, path_type=Path))
# The new spec used to be a second positional argument; kept so that old scripts keep working.
@click.argument("new", metavar="[NEW_SPEC]", required=False, type=click.Path(file_okay=False, exists=True, path_type=Path))
@spec_option("The new spec: the directory holding assay.yml (default: the one `assay generate` recorded for the project).")
@project_option("The project whose recorded spec is the new one (default: the current directory).")
@json_option("Print the plan as JSON.")
def plan_cmd(old: Path, new: Optional[Path], spec_dir: Optional[Path], project_dir: Path, as_json: bool) -> None:
    """Compare OLD_SPEC (the spec as deployed, e.g. a checkout of the last release) with the project's
    spec: what changed, what to replay, what to backfill."""
    from ..api import load_project
    from ..plan import plan

    if new is not None and spec_dir is not None:
        raise AssayUsageError("pass the new spec once: --spec DIR (a second positional NEW_SPEC means the same).")
    old_dir = check_spec_dir(old, given=True)
    new_dir = resolve_spec(new if new is not None else spec_dir, project_dir)
    result = plan(load_project(old_dir), load_project(new_dir))
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
