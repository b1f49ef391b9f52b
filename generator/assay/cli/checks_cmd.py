"""`assay checks [RUN_ID] [--project DIR] [--json]`: the declared-check results of one dbt run
(the latest when no RUN_ID is given; a unique prefix of one, as `assay check list` shows it, will do);
`assay check list`; `assay check rows RUN CHECK`: the rows a failing check found (decision 0532).

Reads ``<meta>.assay_check_results`` (written by the ``assay_entity`` materialization) through
the connection of the dbt project's own profile, and prints document 000's wire shape
``[{"check_id", "passed", "detail"}]`` with the exact detail sentences, rendered here from the
recorded measurements (the warehouse only records numbers and values).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click

from ..checks.detail import NOT_EVALUATED_PREFIX
from ..checks.recorded import verdict_of_row
from ..errors import AssayError, AssayUsageError, ChecksFailed, ProjectError
from ..runtime.table_states import iso_utc
from .common import PROJECT_HELP, json_option, optional_spec, plural, project_option, shown, spec_option, warehouse_options

RESULTS_TABLE = "assay_check_results"
ROWS_TABLE = "assay_check_rows"
COLUMNS = "table_name, check_id, kind, passed, check_spec, measures, check_position"
SPEC_HELP = ("Read the results in this spec's meta schema (default: the spec `assay generate` recorded for the "
             "project; without one, the schema dbt's manifest or assay's record says the build wrote them to).")


def _meta_schema(spec_dir: Optional[Path], project_dir: Path, profiles_dir: Optional[Path] = None,
                 target: Optional[str] = None) -> str:
    """The one schema the build wrote the check results (and kept rows) to: the spec's meta schema
    as the build mapped it (runtime/built_relations.py), else what the build's own record says
    (dbt's manifest, the schemas `assay generate` recorded). With neither, the command is refused
    rather than read whatever results tables the warehouse holds: anyone who can create a schema
    could add one (decision 0913)."""
    from ..runtime.built_relations import built_project, manifest_path, results_schema

    if spec_dir is not None:
        from ..api import load_project

        return built_project(load_project(spec_dir), project_dir, profiles_dir=profiles_dir, target=target).schema("meta")
    found = results_schema(project_dir, profiles_dir, target)
    if found is None:
        from ..artifacts import MANIFEST
        from ..runtime.warehouse import SQLMESH, project_kind

        record = MANIFEST if project_kind(project_dir) == SQLMESH else f"{shown(manifest_path(Path(project_dir)))} nor {MANIFEST}"
        raise ProjectError(
            f"assay cannot tell where the build of {shown(project_dir)} wrote its check results: no spec is recorded "
            f"for the project and neither {record} names the schema; pass --spec with the directory holding "
            "assay.yml. (Results tables found elsewhere in the warehouse are not read: anyone who can create a "
            "schema could forge one.)"
        )
    return found


def _result_rows(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], columns: str,
                 where: str = "", params: tuple = (), *, meta: str, table: str = RESULTS_TABLE) -> list[tuple]:
    """Rows of `table` in `meta`, the schema the build wrote the results to (`_meta_schema`); none
    when the table is not there yet (no build recorded any)."""
    from ..runtime.warehouse import Reader, connect, describe, warehouse_errors

    conn, dialect = connect(project_dir, profiles_dir, target, read_only=True)
    try:
        with warehouse_errors(f"cannot read check results from the warehouse of {describe(project_dir, profiles_dir, target)}"):
            reader = Reader(conn, dialect)
            if not reader.exists(meta, table):
                return []
            return reader.query(f"select {columns} from {reader.relation(meta, table)} {where}", params)
    finally:
        conn.close()


# SQLMesh's run ids (its correlation id, decision 0204) start alike for every plan and every run:
# the short id a person reads and types is the start of the part after this prefix.
SQLMESH_RUN_PREFIXES = ("SQLMESH_PLAN: ", "SQLMESH_RUN: ")
SHORT_ID = 8


def _distinct_part(run_id: str) -> str:
    for prefix in SQLMESH_RUN_PREFIXES:
        if run_id.startswith(prefix):
            return run_id[len(prefix):]
    return run_id


def short_run_id(run_id: str) -> str:
    """The run id as `assay check list` shows it: the first 8 characters of what differs between
    runs (a dbt invocation id's start; a SQLMesh id's hex after `SQLMESH_PLAN: `/`SQLMESH_RUN: `)."""
    return _distinct_part(run_id)[:SHORT_ID]


def find_run(project_dir: Path, run_id: Optional[str], profiles_dir: Optional[Path] = None,
             target: Optional[str] = None, *, meta: str) -> Optional[str]:
    """The full id of the run meant: the latest recorded one when `run_id` is None, else the one
    `run_id` is a unique prefix of (of the whole id, or of a SQLMesh id's part after its prefix, as
    `check list` shows it); None when nothing matches. An ambiguous prefix is a usage error."""
    runs = _result_rows(project_dir, profiles_dir, target, "run_id, recorded_at", meta=meta)
    if run_id is None:
        if not runs:
            return None
        return max(runs, key=lambda r: (str(r[1]), r[0]))[0]
    ids = sorted({r[0] for r in runs})
    if run_id in ids:
        return run_id
    matching = [i for i in ids if i.startswith(run_id) or _distinct_part(i).startswith(run_id)]
    if len(matching) > 1:
        raise AssayUsageError(f"{run_id!r} is the start of {plural(len(matching), 'recorded run')} "
                              f"({', '.join(matching)}); give more of the run id.")
    return matching[0] if matching else None


def results_of_run(project_dir: Path, run_id: str, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None, *, meta: str) -> list[dict[str, Any]]:
    """The wire results of one run, in table then declaration order."""
    rows = _result_rows(project_dir, profiles_dir, target, COLUMNS, "where run_id = ?", (run_id,), meta=meta)
    out = []
    for table, check_id, kind_, passed, spec, measures, position in sorted(rows, key=lambda r: (r[0], r[6], r[1])):
        verdict = verdict_of_row(kind_, spec, measures)
        # The recorded verdict is the one the run acted on; the sentence is rendered again here.
        out.append({"check_id": check_id, "passed": bool(passed), "detail": verdict.detail, "_table": table})
    return out


@click.command("checks")
@click.argument("run_id", required=False)
@project_option(PROJECT_HELP)
@spec_option(SPEC_HELP)
@warehouse_options
@json_option("Print the results as a JSON list of {table, check_id, passed, detail}.")
def checks_cmd(run_id: Optional[str], project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
               target: Optional[str], as_json: bool) -> None:
    """Print the check results of the build RUN_ID (the run id `assay check list` shows, or the start
    of it: dbt's invocation_id, or the SQLMesh run's); without RUN_ID, of the latest build that
    recorded any.

    Exit 0 when every result passed, 2 when any did not, 1 when the run recorded none.
    """
    meta = _meta_schema(optional_spec(spec_dir, project_dir), project_dir, profiles_dir, target)
    wanted = run_id
    run_id = find_run(project_dir, wanted, profiles_dir, target, meta=meta)
    if run_id is None:
        if as_json:
            click.echo("[]")
        if wanted is None:
            raise AssayError(
                f"no check results are recorded in the warehouse of {shown(project_dir)} yet; run `dbt build` "
                "(entities with checks record theirs) and then `assay checks`."
            )
        raise AssayError(
            f"no check results are recorded for run {wanted}; check the run id (dbt's invocation_id, in "
            "target/run_results.json; `assay demo` prints it), or list the recorded runs with `assay check list`."
        )
    if wanted != run_id:
        # Say which run this is: the caller gave none, or only the start of its id.
        click.echo(f"run {run_id}" + (" (the latest)" if wanted is None else ""), err=True)
    results = results_of_run(project_dir, run_id, profiles_dir, target, meta=meta)
    if as_json:
        # 000's wire shape, and the table each result is of (a run checks several tables).
        click.echo(json.dumps([{"table": r["_table"], **{k: v for k, v in r.items() if not k.startswith("_")}}
                               for r in results], indent=2))
    else:
        for r in results:
            label = _label(r)
            # A not_evaluated detail already opens with its label: print it once.
            detail = r["detail"][len(NOT_EVALUATED_PREFIX):] if label == "not_evaluated" else r["detail"]
            click.echo(f"{r['_table']}: {r['check_id']}: {label}: {detail}")
    failed = [r for r in results if not r["passed"]]
    if failed:
        raise ChecksFailed(f"{len(failed)} of {plural(len(results), 'check')} of run {run_id} did not pass: "
                           + ", ".join(r["check_id"] for r in failed) + ".")


def _label(result: dict) -> str:
    """How the text output names a result: a detail opening ``not_evaluated: `` is neither a pass
    nor a failure (000), an unreadable candidate is an error (decision 0531)."""
    if result["passed"]:
        return "passed"
    if result["detail"].startswith(NOT_EVALUATED_PREFIX):
        return "not_evaluated"
    if result["detail"].startswith(("DECLARED_CHECK_UNREADABLE: ", "errored: ")):
        return "ERRORED"
    return "FAILED"


LIST_COLUMNS = "run_id, table_name, check_id, kind, enforcement, passed, row_count, measures, recorded_at"


def _outcome(kind: str, enforcement: str, passed: bool, measures: str) -> tuple[str, Optional[int]]:
    """(outcome, failing rows: a SQL check file's count, None for a check that counts none) of one
    recorded result, as `assay check list` prints them."""
    m = json.loads(measures or "{}")
    if m.get("not_evaluated"):
        return "not_evaluated", None
    if m.get("error") is not None:  # a declared check (0531) or a SQL check file (0511) that errored
        return "errored", None
    if kind == "sql":
        n = int(m.get("failing_rows", 0))
        if n == 0:
            return "passed", 0
        return {"warn": "warned", "keep": "failed (kept)"}.get(enforcement, "FAILED"), n
    return ("passed" if passed else ("FAILED" if enforcement == "required" else "warned")), None


@click.group("check")
def check_group() -> None:
    """Results of table checks recorded by the builds (dbt or SQLMesh)."""


@check_group.command("list")
@project_option(PROJECT_HELP)
@spec_option(SPEC_HELP)
@warehouse_options
@json_option("Print the results as a JSON list (full run ids).")
# `--output json` was this command's spelling before every command took --json; kept for scripts.
@click.option("--output", "output", type=click.Choice(["text", "json"]), default="text", hidden=True)
def check_list(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str],
               as_json: bool, output: str) -> None:
    """Every recorded check result, newest first: run, table, check, outcome, rows, on_failure, finished_at.

    The run column shows the first 8 characters of the run id (of a SQLMesh id, those after
    `SQLMESH_PLAN: ` or `SQLMESH_RUN: `); `assay checks` takes them as they are.
    """
    meta = _meta_schema(optional_spec(spec_dir, project_dir), project_dir, profiles_dir, target)
    rows = _result_rows(project_dir, profiles_dir, target, LIST_COLUMNS, meta=meta)
    rows.sort(key=lambda r: (str(r[8]), r[0], r[1], r[2]), reverse=True)
    items = []
    for run_id, table, check_id, kind, enforcement, passed, row_count, measures, recorded_at in rows:
        outcome, failing = _outcome(kind, enforcement, bool(passed), measures)
        items.append({"run": run_id, "table": table, "check": check_id, "outcome": outcome, "rows": failing,
                      "on_failure": enforcement, "finished_at": iso_utc(recorded_at)})
    if as_json or output == "json":
        click.echo(json.dumps(items, indent=2))
        return
    if not items:
        click.echo("no check results recorded yet")
        return
    cols = ["run", "table", "check", "outcome", "rows", "on_failure", "finished_at"]
    shown = [{**i, "run": short_run_id(i["run"]), "rows": "" if i["rows"] is None else i["rows"]} for i in items]
    widths = {c: max(len(c), *(len(str(i[c])) for i in shown)) for c in cols}
    click.echo("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for i in shown:
        click.echo("  ".join(str(i[c]).ljust(widths[c]) for c in cols).rstrip())


@check_group.command("rows")
@click.argument("run_id", metavar="RUN")
@click.argument("check_id", metavar="CHECK")
@project_option(PROJECT_HELP)
@spec_option(SPEC_HELP)
@warehouse_options
@json_option("Print the rows as a JSON list of {table, check_id, row_number, row}.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Print at most this many rows of each table (default: every kept row).")
def check_rows(run_id: str, check_id: str, project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
               target: Optional[str], as_json: bool, limit: Optional[int]) -> None:
    """Print the rows check CHECK found in run RUN (its id or the start of it), kept from the checked
    candidate: a declared check's violating rows, the rows a SQL check file returned (at most
    `assay_check_rows_kept` per check, 100 unless the dbt var says otherwise; redacted columns left out).

    Exit 0 when the rows (or the sentence saying why there are none) are printed, 1 when the run or
    the check is not recorded.
    """
    meta = _meta_schema(optional_spec(spec_dir, project_dir), project_dir, profiles_dir, target)
    found = find_run(project_dir, run_id, profiles_dir, target, meta=meta)
    if found is None:
        raise AssayError(
            f"no check results are recorded for run {run_id}; check the run id (dbt's invocation_id, in "
            "target/run_results.json), or list the recorded runs with `assay check list`."
        )
    recorded = results_of_run(project_dir, found, profiles_dir, target, meta=meta)
    # Declared ids are reported upper-cased (000), SQL check files by their file name: either case finds them.
    results = [r for r in recorded if r["check_id"].upper() == check_id.upper()]
    if not results:
        ids = sorted({r["check_id"] for r in recorded})
        raise AssayError(f"run {found} recorded no check {check_id}; its checks are {', '.join(ids)}. "
                         f"Run `assay checks {short_run_id(found)}` to see them.")
    wanted = results[0]["check_id"]
    kept = _result_rows(project_dir, profiles_dir, target, "table_name, row_number, row_json",
                        "where run_id = ? and check_id = ?", (found, wanted), meta=meta, table=ROWS_TABLE)
    items = []
    for table, number, text in sorted(kept, key=lambda r: (r[0], int(r[1]))):
        if limit is not None and sum(1 for i in items if i["table"] == table) >= limit:
            continue
        items.append({"table": table, "check_id": wanted, "row_number": int(number), "row": json.loads(text)})
    if as_json:
        click.echo(json.dumps(items, indent=2))
    else:
        for i in items:
            click.echo(f"{i['table']}: {wanted} #{i['row_number']}: {json.dumps(i['row'], separators=(', ', ': '))}")
    tables = {i["table"] for i in items}
    for r in results:
        if r["_table"] not in tables:
            # Say why there is nothing to show rather than print nothing.
            if r["passed"]:
                why = "it passed"
            elif _label(r) == "not_evaluated":
                why = "it was not evaluated"
            else:
                why = "no rows were kept for it (a row count, an unreadable table, or a check with no rows to show)"
            click.echo(f"{r['_table']}: {wanted}: no rows: {why}: {r['detail']}", err=True)


COMMANDS = (checks_cmd, check_group)
