"""`assay checks RUN_ID [--json] --project DIR`: the declared-check results of one dbt run.

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
from ..errors import AssayError, ChecksFailed

RESULTS_TABLE = "assay_check_results"
COLUMNS = "table_name, check_id, kind, passed, check_spec, measures, check_position"


def _result_rows(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], columns: str,
                 where: str = "", params: tuple = ()) -> list[tuple]:
    """Rows of every results table in the warehouse the project's profile names."""
    from ..runtime.warehouse import connect, describe, query, warehouse_errors

    conn, dialect = connect(project_dir, profiles_dir, target, read_only=True)
    try:
        with warehouse_errors(f"cannot read check results from the warehouse of {describe(project_dir, profiles_dir, target)}"):
            schemas = [r[0] for r in query(conn, dialect, "select distinct table_schema from information_schema.tables where table_name = ?", (RESULTS_TABLE,))]
            rows: list[tuple] = []
            for schema in sorted(schemas):
                rows += query(conn, dialect, f'select {columns} from "{schema}".{RESULTS_TABLE} {where}', params)
        return rows
    finally:
        conn.close()


def results_of_run(project_dir: Path, run_id: str, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None) -> list[dict[str, Any]]:
    """The wire results of one run, in table then declaration order."""
    rows = _result_rows(project_dir, profiles_dir, target, COLUMNS, "where run_id = ?", (run_id,))
    out = []
    for table, check_id, kind_, passed, spec, measures, position in sorted(rows, key=lambda r: (r[0], r[6], r[1])):
        verdict = verdict_of_row(kind_, spec, measures)
        # The recorded verdict is the one the run acted on; the sentence is rendered again here.
        out.append({"check_id": check_id, "passed": bool(passed), "detail": verdict.detail, "_table": table})
    return out


@click.command("checks")
@click.argument("run_id")
@click.option("--project", "project_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=".", help="The dbt project directory (its profile names the warehouse).")
@click.option("--profiles-dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Where profiles.yml is, when it is not beside the project.")
@click.option("--target", default=None, help="The profile output to read (default: the profile's target).")
@click.option("--json", "as_json", is_flag=True, help="Print 000's wire shape as a JSON list.")
def checks_cmd(run_id: str, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], as_json: bool) -> None:
    """Print the check results of dbt run RUN_ID (its invocation_id).

    Exit 0 when every result passed, 2 when any did not, 1 when the run recorded none.
    """
    results = results_of_run(project_dir, run_id, profiles_dir, target)
    if as_json:
        click.echo(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in results], indent=2))
    else:
        for r in results:
            click.echo(f"{r['_table']}: {r['check_id']}: {'passed' if r['passed'] else 'FAILED'}: {r['detail']}")
    if not results:
        raise AssayError(
            f"no check results are recorded for run {run_id}; check the run id (dbt's invocation_id, in "
            "target/run_results.json), or list the recorded runs with `assay check list`."
        )
    failed = [r for r in results if not r["passed"]]
    if failed:
        raise ChecksFailed(f"{len(failed)} of {len(results)} checks of run {run_id} did not pass: "
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
@click.option("--project", "project_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=".")
@click.option("--profiles-dir", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None)
@click.option("--target", default=None)
@click.option("--output", "output", type=click.Choice(["text", "json"]), default="text")
def check_list(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str], output: str) -> None:
    """Every recorded check result, newest first: run, table, check, outcome, rows, on_failure, finished_at."""
    rows = _result_rows(project_dir, profiles_dir, target, LIST_COLUMNS)
    rows.sort(key=lambda r: (str(r[8]), r[0], r[1], r[2]), reverse=True)
    items = []
    for run_id, table, check_id, kind, enforcement, passed, row_count, measures, recorded_at in rows:
        outcome, failing = _outcome(kind, enforcement, bool(passed), measures)
        items.append({"run": run_id, "table": table, "check": check_id, "outcome": outcome, "rows": failing,
                      "on_failure": enforcement, "finished_at": str(recorded_at)})
    if output == "json":
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
