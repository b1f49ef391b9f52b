"""`assay checks [RUN_ID] [--project DIR] [--json]`: the declared-check results of one dbt run
(the latest when no RUN_ID is given; a unique prefix of one, as `assay check list` shows it, will do).

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

from ..checks.recorded import verdict_of_row
from ..errors import AssayError, AssayUsageError, ChecksFailed
from .common import json_option, optional_spec, plural, project_option, shown, spec_option, warehouse_options

RESULTS_TABLE = "assay_check_results"
COLUMNS = "table_name, check_id, kind, passed, check_spec, measures, check_position"


def _meta_schema(spec_dir: Optional[Path]) -> Optional[str]:
    """The meta schema the spec names, when a spec is known (results of other specs are left out)."""
    if spec_dir is None:
        return None
    from ..api import load_project

    return load_project(spec_dir).schema("meta")


def _result_rows(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], columns: str,
                 where: str = "", params: tuple = (), meta: Optional[str] = None) -> list[tuple]:
    """Rows of every results table in the warehouse the project's profile names.

    With `meta`, only the tables in that schema, or in `<target schema>_<meta>` where dbt's default
    schema naming put it: a warehouse shared by several specs keeps each one's results apart.
    """
    from ..runtime.warehouse import connect, describe, query, warehouse_errors

    conn, dialect = connect(project_dir, profiles_dir, target, read_only=True)
    try:
        with warehouse_errors(f"cannot read check results from the warehouse of {describe(project_dir, profiles_dir, target)}"):
            schemas = [r[0] for r in query(conn, dialect, "select distinct table_schema from information_schema.tables where table_name = ?", (RESULTS_TABLE,))]
            if meta is not None:
                schemas = [s for s in schemas if s == meta or s.endswith("_" + meta)]
            rows: list[tuple] = []
            for schema in sorted(schemas):
                rows += query(conn, dialect, f'select {columns} from "{schema}".{RESULTS_TABLE} {where}', params)
        return rows
    finally:
        conn.close()


def find_run(project_dir: Path, run_id: Optional[str], profiles_dir: Optional[Path] = None,
             target: Optional[str] = None, meta: Optional[str] = None) -> Optional[str]:
    """The full id of the run meant: the latest recorded one when `run_id` is None, else the one
    `run_id` is a unique prefix of; None when nothing matches. An ambiguous prefix is a usage error."""
    runs = _result_rows(project_dir, profiles_dir, target, "run_id, recorded_at", meta=meta)
    if run_id is None:
        if not runs:
            return None
        return max(runs, key=lambda r: (str(r[1]), r[0]))[0]
    ids = sorted({r[0] for r in runs})
    if run_id in ids:
        return run_id
    matching = [i for i in ids if i.startswith(run_id)]
    if len(matching) > 1:
        raise AssayUsageError(f"{run_id!r} is the start of {plural(len(matching), 'recorded run')} "
                              f"({', '.join(matching)}); give more of the run id.")
    return matching[0] if matching else None


def results_of_run(project_dir: Path, run_id: str, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None, meta: Optional[str] = None) -> list[dict[str, Any]]:
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
@project_option("The dbt project whose profile names the warehouse (default: the current directory).")
@spec_option("Read only the results of this spec's meta schema (default: the spec `assay generate` "
             "recorded for the project; without one, every results table in the warehouse).")
@warehouse_options
@json_option("Print 000's wire shape as a JSON list.")
def checks_cmd(run_id: Optional[str], project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
               target: Optional[str], as_json: bool) -> None:
    """Print the check results of dbt run RUN_ID (its invocation_id, or the start of it as `assay check
    list` shows it); without RUN_ID, of the latest run that recorded any.

    Exit 0 when every result passed, 2 when any did not, 1 when the run recorded none.
    """
    meta = _meta_schema(optional_spec(spec_dir, project_dir))
    wanted = run_id
    run_id = find_run(project_dir, wanted, profiles_dir, target, meta)
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
    results = results_of_run(project_dir, run_id, profiles_dir, target, meta)
    if as_json:
        click.echo(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in results], indent=2))
    else:
        for r in results:
            click.echo(f"{r['_table']}: {r['check_id']}: {'passed' if r['passed'] else 'FAILED'}: {r['detail']}")
    failed = [r for r in results if not r["passed"]]
    if failed:
        raise ChecksFailed(f"{len(failed)} of {plural(len(results), 'check')} of run {run_id} did not pass: "
                           + ", ".join(r["check_id"] for r in failed) + ".")


LIST_COLUMNS = "run_id, table_name, check_id, kind, enforcement, passed, row_count, measures, recorded_at"


def _outcome(kind: str, enforcement: str, passed: bool, measures: str) -> tuple[str, str]:
    """(outcome, rows shown) of one recorded result, as `assay check list` prints them."""
    m = json.loads(measures or "{}")
    if kind == "sql":
        n = int(m.get("failing_rows", 0))
        if n == 0:
            return "passed", "0"
        return {"warn": "warned", "keep": "failed (kept)"}.get(enforcement, "FAILED"), str(n)
    return ("passed" if passed else ("FAILED" if enforcement == "required" else "warned")), ""


@click.group("check")
def check_group() -> None:
    """Results of table checks recorded by dbt runs."""


@check_group.command("list")
@project_option("The dbt project whose profile names the warehouse (default: the current directory).")
@spec_option("Read only the results of this spec's meta schema (default: the spec `assay generate` "
             "recorded for the project; without one, every results table in the warehouse).")
@warehouse_options
@json_option("Print the results as a JSON list (full run ids).")
# `--output json` was this command's spelling before every command took --json; kept for scripts.
@click.option("--output", "output", type=click.Choice(["text", "json"]), default="text", hidden=True)
def check_list(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str],
               as_json: bool, output: str) -> None:
    """Every recorded check result, newest first: run, table, check, outcome, rows, on_failure, finished_at.

    The run column shows the first 8 characters of the run id; `assay checks` takes them as they are.
    """
    meta = _meta_schema(optional_spec(spec_dir, project_dir))
    rows = _result_rows(project_dir, profiles_dir, target, LIST_COLUMNS, meta=meta)
    rows.sort(key=lambda r: (str(r[8]), r[0], r[1], r[2]), reverse=True)
    items = []
    for run_id, table, check_id, kind, enforcement, passed, row_count, measures, recorded_at in rows:
        outcome, failing = _outcome(kind, enforcement, bool(passed), measures)
        items.append({"run": run_id, "table": table, "check": check_id, "outcome": outcome, "rows": failing,
                      "on_failure": enforcement, "finished_at": str(recorded_at)})
    if as_json or output == "json":
        click.echo(json.dumps(items, indent=2))
        return
    if not items:
        click.echo("no check results recorded yet")
        return
    cols = ["run", "table", "check", "outcome", "rows", "on_failure", "finished_at"]
    shown = [{**i, "run": i["run"][:8]} for i in items]
    widths = {c: max(len(c), *(len(str(i[c])) for i in shown)) for c in cols}
    click.echo("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for i in shown:
        click.echo("  ".join(str(i[c]).ljust(widths[c]) for c in cols).rstrip())


COMMANDS = (checks_cmd, check_group)
