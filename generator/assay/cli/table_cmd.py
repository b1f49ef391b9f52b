"""`assay table list` and `assay table get TABLE`: every table with checks and its state
(reference 002 "Keeping a table"; decision 0514).

A table is `published`, `not_published` (its first build failed a blocking check, so it does not
exist yet) or `kept` (a keep check failed; assay-built readers are refused until its checks pass).
The state is derived, never stored twice: `kept` from the newest TABLE_KEPT / TABLE_KEPT_CLEARED
event of the table in ``<meta>.assay_events``; otherwise `not_published` when the table is absent
from the warehouse (the why is its newest TABLE_ROLLED_BACK event), else `published`.

The tables are the spec's entities and `tables_version: 1` tables that have checks, and any table
the events name as kept (a table whose checks were removed stays kept until it is rebuilt).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click

from ..errors import AssayError, AssayUsageError, ChecksFailed
from .common import json_option, optional_spec, project_option, shown, spec_option, warehouse_options

EVENTS_TABLE = "assay_events"
MARKS = ("TABLE_KEPT", "TABLE_KEPT_CLEARED", "TABLE_ROLLED_BACK")
READ_ONLY = "not built by this project"


def _spec_tables(spec_dir: Path):
    """(project, {table name: (schema, relation name, built by this project)}) of every table with
    checks in the spec."""
    from ..api import load_project

    project = load_project(spec_dir)
    silver = project.schema("silver")
    tables: dict[str, tuple[str, str]] = {}
    for e in project.entities:
        if e.declared_checks or e.sql_checks:
            tables[e.name] = (silver, f"{e.name}__current" if e.scd == "type2" else e.name, True)
    for t in project.tables:
        if t.declared_checks or any(f"{c.namespace}.{c.table}" == t.name for c in project.sql_checks):
            schema, _, name = t.name.partition(".")
            tables[t.name] = (schema, name, False)
    return project, tables


def _events(reader, meta: str) -> list[tuple]:
    """(event_type, run_id, table_name, check_name, why, occurred_at) of the marks, oldest first."""
    schemas = [r[0] for r in reader.query(
        "select distinct table_schema from information_schema.tables where table_name = ?", (EVENTS_TABLE,))]
    rows: list[tuple] = []
    for schema in sorted(s for s in schemas if s == meta or s.endswith("_" + meta)):
        marks = ", ".join(f"'{m}'" for m in MARKS)
        rows += reader.query(
            f'select event_type, run_id, table_name, check_name, why, cast(occurred_at as varchar(64)) '
            f'from "{schema}".{EVENTS_TABLE} where event_type in ({marks})')
    return sorted(rows, key=lambda r: (str(r[5]), r[0]))


def table_states(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path] = None,
                 target: Optional[str] = None) -> list[dict[str, Any]]:
    """One state per table with checks, sorted by name: {table, state, run, check, why, since}."""
    from ..runtime.warehouse import Reader, connect, describe, warehouse_errors

    spec = optional_spec(spec_dir, project_dir)
    if spec is None:
        raise AssayError(f"{shown(project_dir)} has no spec recorded by `assay generate`; pass --spec with the "
                         "directory holding assay.yml.")
    project, tables = _spec_tables(spec)
    conn, dialect = connect(project_dir, profiles_dir, target, read_only=True)
    try:
        with warehouse_errors(f"cannot read table states from the warehouse of {describe(project_dir, profiles_dir, target)}"):
            reader = Reader(conn, dialect)
            events = _events(reader, project.schema("meta"))
            mark: dict[str, tuple] = {}
            rolled: dict[str, tuple] = {}
            for ev in events:
                (rolled if ev[0] == "TABLE_ROLLED_BACK" else mark)[ev[2]] = ev
            for name, ev in mark.items():
                if ev[0] == "TABLE_KEPT" and name not in tables:
                    tables[name] = (project.schema("silver"), name, True)
            out = []
            for name in sorted(tables):
                schema, relation, built = tables[name]
                ev = mark.get(name)
                if not built:
                    # 002: a table the project only reads is never set back or kept by it; its
                    # checks run in a check task before its readers (decision 0520).
                    present = reader.exists(schema, relation)
                    out.append({"table": name, "state": "published" if present else "not_published", "run": None,
                                "check": None, "why": READ_ONLY if present else f"{READ_ONLY}; the table does not exist",
                                "since": None, "built_by_project": False})
                    continue
                if ev is not None and ev[0] == "TABLE_KEPT":
                    out.append({"table": name, "state": "kept", "run": ev[1], "check": ev[3], "why": ev[4], "since": ev[5],
                                "built_by_project": True})
                elif not reader.exists(schema, relation):
                    back = rolled.get(name)
                    out.append({"table": name, "state": "not_published", "run": back[1] if back else None,
                                "check": back[3] if back else None, "why": back[4] if back else "never built",
                                "since": back[5] if back else None, "built_by_project": True})
                else:
                    out.append({"table": name, "state": "published", "run": None, "check": None, "why": None, "since": None,
                                "built_by_project": True})
        return out
    finally:
        conn.close()


def _line(t: dict[str, Any]) -> str:
    if not t.get("built_by_project", True):
        return f"{t['table']}: {t['state'].replace('_', ' ')} ({t['why']})"
    if t["state"] == "kept":
        return f"{t['table']}: kept since run {t['run']}: check {t['check']} failed"
    if t["state"] == "not_published":
        if t["run"] is None:
            return f"{t['table']}: not published (never built)"
        return f"{t['table']}: not published: run {t['run']} set it back, check {t['check']} did not pass"
    return f"{t['table']}: published"


@click.group("table")
def table_group() -> None:
    """The tables with checks: published, not published or kept, and why."""


def _common(func):
    func = json_option("Print the states as JSON.")(func)
    func = warehouse_options(func)
    func = spec_option()(func)
    return project_option("The dbt project whose profile names the warehouse (default: the current directory).")(func)


@table_group.command("list")
@_common
def table_list(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str],
               as_json: bool) -> None:
    """Every table with checks and its state. Exit 0."""
    states = table_states(project_dir, spec_dir, profiles_dir, target)
    if as_json:
        click.echo(json.dumps(states, indent=2))
        return
    if not states:
        click.echo("no table of this spec has checks")
    for t in states:
        click.echo(_line(t))


@table_group.command("get")
@click.argument("table")
@_common
def table_get(table: str, project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
              target: Optional[str], as_json: bool) -> None:
    """The state of TABLE (an entity name, `silver.<entity>`, or `schema.table` of a tables document).

    Exit 0 when it is published, 2 when it is kept or not published (its checks did not pass).
    """
    states = table_states(project_dir, spec_dir, profiles_dir, target)
    wanted = [t for t in states if t["table"] == table or t["table"] == table.split(".", 1)[-1] and "." in table]
    if not wanted:
        known = ", ".join(t["table"] for t in states) or "none"
        raise AssayUsageError(f"{table!r} is no table with checks in this spec (those with checks: {known}); "
                              "give one of them, or see `assay table list`.")
    t = wanted[0]
    click.echo(json.dumps(t, indent=2) if as_json else _line(t))
    if t["state"] != "published":
        raise ChecksFailed(f"{t['table']} is {t['state'].replace('_', ' ')}.")


COMMANDS = (table_group,)
