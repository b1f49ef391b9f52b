"""`assay plan OLD_SPEC [--spec DIR] [--project DIR] [--data] [--json]`: classify a spec change and print
replay_scope and backfill_scope; with --data, what the next build and replay do to the data (decision 1020)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from ..errors import AssayUsageError
from .common import Directory, Progress, check_spec_dir, json_option, plural, project_option, resolve_spec, spec_option, warehouse_options


@click.command("plan")
@click.argument("old", metavar="OLD_SPEC", type=Directory("spec"))
# The new spec used to be a second positional argument; kept so that old scripts keep working.
@click.argument("new", metavar="[NEW_SPEC]", required=False, type=Directory("spec"))
@spec_option("The new spec: the directory holding assay.yml (default: the one `assay generate` recorded for the project).")
@project_option("The project whose recorded spec is the new one (default: the current directory).")
@warehouse_options
@click.option("--data", "with_data", is_flag=True,
              help="Also run the next build and the replays in a throwaway copy of the warehouse and say, per entity and "
                   "rule, what they would do to the rows there now; the warehouse itself is only read.")
@click.option("--execution-time", type=click.DateTime(), default=None,
              help="With --data on a SQLMesh project: the time of the next `sqlmesh plan` (default: now), as `sqlmesh plan "
                   "--execution-time` takes it; the run after it is at the next tick of the models' cron.")
@json_option("Print the plan as JSON.")
def plan_cmd(old: Path, new: Optional[Path], spec_dir: Optional[Path], project_dir: Path, profiles_dir: Optional[Path],
             target: Optional[str], with_data: bool, execution_time, as_json: bool) -> None:
    """Compare OLD_SPEC (the spec as deployed, e.g. a checkout of the last release) with the project's
    spec: what changed, what to replay, what to backfill; with --data, how many rows the next build
    would newly quarantine, flag or fail, take out of the reject table, and bring back by replay."""
    from ..plan import plan

    if new is not None and spec_dir is not None:
        raise AssayUsageError("pass the new spec once: --spec DIR (a second positional NEW_SPEC means the same).")
    if not with_data and (profiles_dir is not None or target is not None or execution_time is not None):
        raise AssayUsageError("--profiles-dir, --target and --execution-time are about the warehouse, which only "
                              "`assay plan --data` reads; add --data.")
    old_dir = check_spec_dir(old, given=True, argument="OLD_SPEC")
    new_dir = resolve_spec(new if new is not None else spec_dir, project_dir)
    new_project, old_project = _load_both(new_dir, old_dir)
    result = plan(old_project, new_project)
    data = None
    if with_data:
        from ..plandata import plan_data

        replays = sum(1 for name in result.replay_scope if new_project.entity(name).has_reject)
        with Progress("plan", 3 + replays + (1 if replays else 0), quiet=as_json) as progress:
            data = plan_data(new_project, new_dir, project_dir, result, profiles_dir=profiles_dir, target=target,
                             execution_time=execution_time, step=progress.step)
    notes = history_notes(old_project, new_project, project_dir)
    if as_json:
        out = result.as_dict()
        out["notes"] = notes
        if data is not None:
            out["data"] = data.as_dict()
        click.echo(json.dumps(out, indent=2, sort_keys=True))
        return
    for note in notes:
        click.echo("note: " + note, err=True)
    if not result.changes:
        click.echo("no changes")
    for c in result.changes:
        click.echo(f"{c.classification:<12} {c.entity}: {c.kind} {c.detail}")
    click.echo("replay_scope: " + (", ".join(result.replay_scope) or "(none)"))
    click.echo("backfill_scope: " + (", ".join(result.backfill_scope) or "(none)"))
    if data is not None:
        for line in data_lines(data):
            click.echo(line)


def _load_both(new_dir: Path, old_dir: Path):
    """Both specs' projects; when both are broken, one refusal with every problem of each, the old
    spec's after the new one's (it said only the new one's, and the old one's came after its fix)."""
    from dataclasses import replace

    from ..api import load_project
    from ..errors import SpecError, openable

    problems = []
    projects = []
    from ..errors import ProjectError
    from ..spec.loader import load_spec

    for which, spec in (("the new spec", new_dir), ("the old spec", old_dir)):
        loaded = load_spec(spec)
        if loaded.holds_nothing:
            # a mistyped path read as "no entity at all" planned every entity as added, exit 0
            # (an outside tester, session 44): nothing to compare is no plan
            raise ProjectError(f"{spec} holds no spec documents (*.yml, *.yaml), so it is not {which}; pass the "
                               "folder that holds its assay.yml and spec files (a checkout of the deployed release).")
        try:
            projects.append(load_project(spec))
        except SpecError as exc:
            problems.append((which, spec, exc))
    if len(problems) == 1:
        raise problems[0][2]
    if problems:
        out = [line for which, spec, exc in problems for line in [f"{which} ({spec}):", *exc.out]]
        n = sum(len(exc.diagnostics) for _w, _s, exc in problems)
        # each problem names its file as it opens from here: two specs hold files of one name
        diagnostics = [replace(d, file=openable(exc.spec_dir, d.file)) for _w, _s, exc in problems for d in exc.diagnostics]
        raise SpecError(diagnostics, out=out, summary=(
            f"{n} problems found in the two specs; nothing was changed. Fix each line above (file:line says where) "
            "and run the command again."))
    return projects[0], projects[1]


def data_lines(data) -> list[str]:
    """The text form of `assay plan --data`: one block per entity, one line per rule that the next build touches."""
    build = "sqlmesh plan, then run" if data.target == "sqlmesh" else "dbt build"
    lines = [f"next build ({build}, in a copy of the {data.engine} warehouse): {'ok' if data.build_ok else 'FAILED'}"
             + (f" ({data.build_summary})" if data.build_summary else "")]
    for name, e in sorted(data.entities.items()):
        if not e.measured:
            # a failed SQLMesh plan applied nothing: the tables hold the last build's rows
            lines.append(f"{name}: not measured (the plan failed and SQLMesh applied nothing; NOT published)")
            for model, audit, rule, n in e.stops:
                what = f"{rule} (fail)" if audit == "assay_fail_rule" and rule else f"{audit} on {model}"
                lines.append(f"  {what}: {plural(n, 'row')} failed")
            continue
        r = e.routes
        head = (f"{name}: {r.get('kept', 0)} kept, {r.get('quarantined', 0)} quarantined, {r.get('failed', 0)} failing, "
                f"{r.get('deduped', 0)} deduped")
        if e.published is False:
            head += "; NOT published (a blocking check or a fail rule stops it; the previous version stays)"
        elif e.kept:
            head += "; published and KEPT (a keep check fails: the models that read it are refused until its checks pass)"
        lines.append(head)
        lines += [f"  {said}" for said in e.failures]
        left = e.leave_reject
        leaving = left.get("admitted", 0) + left.get("deduped", 0)
        lines.append(f"  reject table: {plural(e.newly_quarantined, 'row')} newly quarantined; {plural(leaving, 'open row')} "
                     f"{'leaves' if leaving == 1 else 'leave'} it ({left.get('admitted', 0)} admitted, {left.get('deduped', 0)} deduped)")
        for rule, counts in sorted((rule_name, ri.as_dict(e.published)) for rule_name, ri in e.rules.items()):
            # a rule's failing rows by where they go: kept rows are flagged, diverted ones quarantined or failed
            parts = [f"{counts[w]} {w} ({counts['newly_' + w]} newly)" for w in ("quarantined", "flagged", "failed") if counts[w]]
            if parts:
                lines.append(f"  {rule} ({counts['disposition']}): " + ", ".join(parts))
        if e.replay is not None:
            rp = e.replay
            head = f"  replay: would re-deliver {plural(rp['redelivered'], 'row')} ({rp['superseded']} superseded); "
            left = rp.get("leave_reject")
            # every open reject row the build after the replays resolves: the re-delivered ones and
            # the ones still in bronze whose parent the replays bring back (a child that re-delivers
            # nothing itself may still gain rows; an outside tester, session 40)
            n = (left.get("admitted", 0) + left.get("deduped", 0)) if left is not None else 0
            leaving = (f"{plural(n, 'open row')} {'leaves' if n == 1 else 'leave'} the reject table "
                       f"({left.get('admitted', 0)} admitted, {left.get('deduped', 0)} deduped)") if left is not None else ""
            if not rp["redelivered"]:
                # its own open reject rows are all in bronze: the next build above re-judged them
                lines.append(head + (f"the build after the replays re-judges rows still in bronze: {leaving}" if n
                                     else "nothing for a build after it to judge"))
            else:
                line = (head + f"the build after it brings back {plural(rp.get('brought_back', 0), 'row')}, "
                        f"{rp.get('still_quarantined', 0)} stay quarantined, {rp.get('deduped', 0)} deduped")
                if left is not None:
                    line += f"; in that build {leaving}"
                lines.append(line)
    if data.replay_build_ok is False:
        lines.append("the build after the replays FAILED")
    return lines


COMMANDS = (plan_cmd,)


def history_notes(old, new, project_dir: Path) -> list[str]:
    """What a type-2 entity's kept history does with a column whose type changed or that is no longer
    a field (decision 1139; an outside tester, session 41: SQLMesh's plan refused the change with a
    step no document named, and on dbt a rename left the old column behind)."""
    from ..plan import history_columns
    from ..runtime.warehouse import SQLMESH, project_kind

    sqlmesh = project_kind(project_dir) == SQLMESH
    out = []
    for entity, retyped, dropped in history_columns(old, new):
        changed = ", ".join(retyped + dropped)
        if sqlmesh:
            out.append(f"{entity} is type 2, and SQLMesh keeps its history forward-only: the next `sqlmesh plan` "
                       f"refuses to change or drop its column{'s' if len(retyped + dropped) > 1 else ''} {changed} "
                       f"(\"destructive change to forward-only model\"). `sqlmesh plan --allow-destructive-model "
                       f"{new.schema('silver')}.{entity}` drops the stored values of {'those columns' if len(retyped + dropped) > 1 else 'that column'} "
                       "from every version; to keep them, migrate the history table yourself first (docs/sqlmesh.md, "
                       "\"Changing a type-2 entity\").")
            continue
        if retyped:
            out.append(f"{entity} is type 2: the next build alters its history's column{'s' if len(retyped) > 1 else ''} "
                       f"{', '.join(retyped)} to the new type before versioning (a stored value the new type cannot "
                       "hold stops the build: HISTORY_TYPE_CHANGED).")
        if dropped:
            out.append(f"{entity} is type 2: its history keeps the column{'s' if len(dropped) > 1 else ''} "
                       f"{', '.join(dropped)}, NULL in the versions the next builds open; and a field added or renamed "
                       "opens a new version of every key at the next build (its value was not recorded before).")
    return out
