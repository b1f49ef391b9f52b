"""`assay table list` and `assay table get TABLE`: every table with checks and its state
(reference 002 "Keeping a table"; decision 0514).

A table is `published`, `set_back`, `not_published` or `kept` (runtime/table_states.py says how
each is derived, from the warehouse the build wrote: runtime/built_relations.py).

The tables are the spec's entities and `tables_version: 1` tables that have checks, and any table
the events name as kept (a table whose checks were removed stays kept until it is rebuilt).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click

from ..errors import AssayError, AssayUsageError, ChecksFailed
from ..runtime.table_sentences import event_line, line
from .common import PROJECT_HELP, environment_option, json_option, one_line, optional_spec, project_option, shown, spec_option, warehouse_options

def table_states(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path] = None,
                 target: Optional[str] = None, events_of: Optional[str] = None,
                 environment: Optional[str] = None) -> list[dict[str, Any]]:
    """One state per table with checks, sorted by name: {table, state, run, check, why, since};
    the table named `events_of` also gets its newest `events`, read on the same connection;
    `environment`: the SQLMesh environment read (default prod)."""
    from ..api import load_project
    from ..runtime.operator import open_warehouse
    from ..runtime.table_states import table_events
    from ..runtime.table_states import table_states as states_of
    from ..runtime.warehouse import warehouse_errors

    spec = optional_spec(spec_dir, project_dir)
    if spec is None:
        raise AssayError(f"{shown(project_dir)} has no spec recorded by `assay generate`; pass --spec with the "
                         "directory holding assay.yml.")
    # an entity a development plan left unchanged is read as prod's, and said so (table_states)
    with open_warehouse(load_project(spec), project_dir, profiles_dir=profiles_dir, target=target,
                        environment=environment, whole_environment=False) as wh:
        with warehouse_errors(f"cannot read table states from the warehouse of {wh.describe}"):
            states = states_of(wh.project, wh.reader, environment=wh.environment)
            for t in states:
                if events_of is not None and _names(t["table"], events_of):
                    t["events"] = table_events(wh.project, wh.reader, t["table"])
            return states


def _declared_entity(given: str, project_dir: Path, spec_dir: Optional[Path]) -> bool:
    """Whether TABLE names an entity the spec declares (checks or none)."""
    from ..api import load_project

    spec = optional_spec(spec_dir, project_dir)
    return spec is not None and any(_names(e.name, given) for e in load_project(spec).entities)


def _names(name: str, given: str) -> bool:
    """Whether TABLE as the user gave it names the table `name` (an entity is also `silver.<entity>`)."""
    return name == given or ("." in given and name == given.split(".", 1)[-1])


@click.group("table")
def table_group() -> None:
    """The tables with checks: published, set back, not published or kept, and why."""


def _common(func):
    func = json_option("Print the states as JSON.")(func)
    func = environment_option(func)
    func = warehouse_options(func)
    func = spec_option()(func)
    return project_option(PROJECT_HELP)(func)


@table_group.command("list")
@_common
def table_list(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str],
               environment: Optional[str], as_json: bool) -> None:
    """Every table with checks and its state. Exit 0."""
    states = table_states(project_dir, spec_dir, profiles_dir, target, environment=environment)
    if as_json:
        click.echo(json.dumps(states, indent=2))
        return
    if not states:
        click.echo("no table of this spec has checks")
    for t in states:
        click.echo(one_line(line(t)))


@table_group.command("get")
@click.argument("table")
@_common
def table_get(table: str, project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
              target: Optional[str], environment: Optional[str], as_json: bool) -> None:
    """The state of TABLE (an entity name, `silver.<entity>`, or `schema.table` of a tables document),
    then its newest events (set back, kept, cleared, failed checks), newest first.

    Exit 0 when it is published, 2 when it is set back, kept or not published (its checks did not pass).
    """
    states = table_states(project_dir, spec_dir, profiles_dir, target, events_of=table, environment=environment)
    wanted = [t for t in states if _names(t["table"], table)]
    if not wanted:
        known = ", ".join(t["table"] for t in states) or "none"
        if _declared_entity(table, project_dir, spec_dir):
            # the spec declares it, so no usage error (exit 3 is for a name the spec lacks: an
            # outside tester, session 45); it has no checks whose verdict is a state
            raise AssayError(f"{table!r} is an entity of this spec without checks (no `checks:`, SQL check file, "
                             f"threshold or `fail` rule), and `table get` tells the state a table's checks decide; "
                             f"give one with checks ({known}), or see `assay report` for its counts.")
        raise AssayUsageError(f"{table!r} is no table with checks in this spec (those with checks: {known}); "
                              "give one of them, or see `assay table list`.")
    t = wanted[0]
    if as_json:
        click.echo(json.dumps(t, indent=2))
    else:
        click.echo(one_line(line(t)))
        if t.get("events"):
            click.echo("events, newest first:")
            for ev in t["events"]:
                click.echo(one_line(event_line(ev, environment)))
    if t["state"] != "published":
        raise ChecksFailed(f"{t['table']} is {t['state'].replace('_', ' ')}.")


COMMANDS = (table_group,)
