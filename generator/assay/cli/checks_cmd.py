"""`assay checks [RUN_ID] [--project DIR] [--json]`: the declared-check results of one dbt run
(the latest when no RUN_ID is given; a unique prefix of one, as `assay check list` shows it, will do);
`assay check list`; `assay check rows RUN CHECK`: the rows a failing check found (decision 0532).

Thin renderers over the operator core (runtime/operator.py::open_results, one connection per
command; runtime/check_results.py asks the questions): `checks --json` prints document 000's wire
shape ``[{"check_id", "passed", "detail", "scope"}]`` (the reported id upper-cased, the table in
`scope`; decision 0948) with the exact detail sentences, rendered from the recorded measurements
(the warehouse only records numbers and values); its text lines name each check as `check list` does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn, Optional

import click

from .. import exactjson
from ..checks.detail import NOT_EVALUATED_PREFIX
from ..checks.increases import INCREASE_KINDS
from ..checks.kept_values import shown_rows
from ..checks.rates import RATE_KINDS
from ..errors import AssayError, ChecksFailed
from ..runtime.check_results import AUDIT, WIRE, did_pass, short_run_id
from ..runtime.table_states import records_check_results, records_every_build
from .common import (PROJECT_HELP, build_command, environment_option, json_option, one_line, optional_spec, plural, project_option, run_id_hint, shown,
                     spec_option, warehouse_options)

# Why a check that found rows kept none of them (said after "none were kept").
NONE_KEPT = ("(`assay_check_rows_kept: 0` keeps none; a SQL check file whose output columns cannot all be traced "
             "keeps none, decision 0914; on SQLMesh, a check the staged model measured because a repeated key stopped "
             "the run before the entity was written keeps none, decision 0921)")

SPEC_HELP = ("Read the results in this spec's meta schema (default: the spec `assay generate` recorded for the "
             "project; without one, the schema dbt's manifest or assay's record says the build wrote them to).")


def _spec_project(spec_dir: Optional[Path], project_dir: Path):
    """The spec's IR (`--spec` or the one `assay generate` recorded), or None without one."""
    spec = optional_spec(spec_dir, project_dir)
    if spec is None:
        return None
    from ..api import load_project

    return load_project(spec)


def _results(spec_dir: Optional[Path], project_dir: Path, profiles_dir: Optional[Path], target: Optional[str],
             environment: Optional[str] = None, project=None):
    """The operator core's view of the recorded results (runtime/operator.py::open_results);
    `environment`: the SQLMesh environment whose latest run is meant (default prod); `project`:
    the spec's IR when the caller has loaded it already."""
    from ..runtime.operator import open_results

    project = project if project is not None else _spec_project(spec_dir, project_dir)
    return open_results(project_dir, project, profiles_dir=profiles_dir, target=target, environment=environment)


def _dbt_stopped_run(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str],
                     run_id: Optional[str] = None):
    """dbt's last invocation against the target read, when it recorded no check result (and is
    `run_id`, when given): a build that stopped before any table's checks ran, e.g. on a `fail`
    rule or the ingestion test."""
    from ..runtime.dbt import last_invocation
    from ..runtime.warehouse import SQLMESH, project_kind

    if project_kind(project_dir) == SQLMESH:
        return None
    last = last_invocation(project_dir, profiles_dir, target)
    if last is None or (run_id is not None and not last.invocation_id.startswith(run_id)):
        return None
    return last


def unrecorded_run(run_id: str, project_dir: Path, profiles_dir: Optional[Path] = None,
                   target: Optional[str] = None) -> str:
    """Why run `run_id` has no check results: dbt's last invocation (against the target read) that
    stopped first, or an id that names no recorded run."""
    last = _dbt_stopped_run(project_dir, profiles_dir, target, run_id)
    if last is not None:
        why = (f"it stopped before any table's checks ran ({last.stopped_by()})" if last.not_ok
               else "it built no table that has checks")
        return (f"run {last.invocation_id} (dbt's last invocation) recorded no check results: {why}; "
                "target/run_results.json says more, and `assay check list` lists the runs that recorded results.")
    return (f"no check results are recorded for run {run_id}; check the run id ({run_id_hint(project_dir)}), "
            "or list the recorded runs with `assay check list`.")


def _latest_label(found: str, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str]) -> str:
    """` (the latest)`, unless dbt's last invocation against the target read is another run that
    recorded nothing."""
    last = _dbt_stopped_run(project_dir, profiles_dir, target)
    if last is not None and last.invocation_id != found and last.not_ok:
        return (f" (the latest that recorded check results; dbt's last invocation {last.invocation_id} recorded none: "
                f"{last.stopped_by()})")
    return " (the latest)"


def _why_none(project) -> str:
    """Why a build of `project` recorded no check result, as a sentence part."""
    if project is not None and not records_check_results(project):
        return "the spec declares no check (no `checks:`, SQL check file, threshold or `fail` rule)"
    if project is not None and not records_every_build(project):
        return ("the spec's only checks are `fail` rules and the build's own audits, which record a result only "
                "when one stops a build, and none did")
    return _NO_TABLE


_NO_TABLE = "it built no table that records checks"


def _superseded(found: str, project, recorded, project_dir: Path, profiles_dir: Optional[Path],
                target: Optional[str]) -> Optional[str]:
    """Why `found`, the latest run that recorded results, is not the latest build, or None: every
    table it recorded results for was built since (a newer run in the quality history) by a build
    that recorded none, because the spec no longer declares its checks (an outside tester, session
    41: on SQLMesh `assay checks` kept printing a removed check's old failure "(the latest)", exit 2,
    every day; the rule is table_states.current_results, decision 1133)."""
    from ..runtime.built_relations import built_project
    from ..runtime.history_behind import mart_started
    from ..runtime.table_states import current_results

    of_found = {t: v for t, v in recorded.latest_per_table().items() if v[1] == found}
    if not of_found:
        return None
    built = built_project(project, project_dir, profiles_dir=profiles_dir, target=target)
    if current_results(of_found, mart_started(built, recorded.reader)):
        return None
    return (f"every table run {found} recorded check results for ({', '.join(sorted(of_found))}) was built since by a "
            f"run that recorded none: {_why_none(project)}. So no run's results describe the tables now; run {found}'s "
            f"are those of an earlier spec (`assay checks {short_run_id(found)}` prints them).")


def _no_newer_clean_build(found: str, project, project_dir: Path, profiles_dir: Optional[Path],
                          target: Optional[str], as_json: bool) -> None:
    """The latest run is dbt's last build when that build passed and recorded nothing: an older
    run's results are not "the latest", and its failures are not the project's state now (a
    `dbt build && assay checks` step would fail on a problem already fixed). Says so and exits 1,
    naming the run that did record results."""
    last = _dbt_stopped_run(project_dir, profiles_dir, target)
    if last is None or not last.built or last.not_ok or last.invocation_id == found:
        return
    why = _why_none(project)
    checked = {e.name for e in project.entities if e.declared_checks or e.sql_checks} if project is not None else set()
    if why == _NO_TABLE and checked & set(last.succeeded):
        # the spec's tables record their checks on every build, yet the warehouse read holds none
        # of this build's: it wrote another one (an outside tester, session 45: a relative DuckDB
        # path, with dbt run from another folder), not "no table that records checks"
        why = (f"the warehouse read here ({_where(project_dir, profiles_dir, target)}) holds none of its results, "
               f"although it built {', '.join(sorted(checked & set(last.succeeded)))}, whose checks record a result on "
               "every build, so the build wrote another warehouse "
               "(a relative DuckDB path is read from the dbt project's folder; dbt reads it from the folder it runs "
               "in) or its results were removed")
    _nothing_found(as_json, f"run {last.invocation_id} (dbt's last build, the latest) passed and recorded no check "
                            f"results: {why}. The latest run that recorded results is {found} (`assay checks "
                            f"{short_run_id(found)}` prints them).")


def _nothing_found(as_json: bool, why: str) -> NoReturn:
    """A run or check the warehouse did not record: with --json an empty list on stdout (valid JSON,
    the shape of a result that found nothing), then exit 1 with `why` on stderr. Every lookup of a
    recorded run or check ends here, so `assay checks` and `assay check rows` answer alike (decision
    0973; a usage error, exit 3, prints nothing on stdout)."""
    raise AssayError(why, out=["[]"] if as_json else [])


@click.command("checks")
@click.argument("run_id", required=False)
@project_option(PROJECT_HELP)
@spec_option(SPEC_HELP)
@warehouse_options
@environment_option
@json_option("Print the results as a JSON list of {check_id, passed, detail, scope}: the check's id upper-cased, "
             "the table it covered in scope.")
def checks_cmd(run_id: Optional[str], project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
               target: Optional[str], environment: Optional[str], as_json: bool) -> None:
    """Print the check results of the build RUN_ID (the run id `assay check list` shows, or the start
    of it: dbt's invocation_id, or the SQLMesh run's); without RUN_ID, of the latest build that
    recorded any (on SQLMesh, the latest of the environment read: prod, or --environment). When
    dbt's last build passed and recorded none, that build is the latest: it says so and names the
    run that recorded results last.

    The checks that stopped or set back a table without recording a result of their own (a `fail`
    rule, the ingestion-metadata check, the conservation law, the key audit) are listed as failed,
    with the counts the build recorded.

    Exit 0 when every result passed, 2 when any did not, 1 when the run recorded none.
    """
    project = _spec_project(spec_dir, project_dir)
    with _results(spec_dir, project_dir, profiles_dir, target, environment, project=project) as recorded:
        found = recorded.find_run(run_id)
        if run_id is None and found is not None:
            # dbt's last build against the target read is this project's latest when it recorded
            # results: a newer run in a results table another project shares is not (an outside
            # tester, session 45)
            last = _dbt_stopped_run(project_dir, profiles_dir, target)
            if last is not None and last.invocation_id != found and recorded.of_run(last.invocation_id):
                found = last.invocation_id
        results = recorded.of_run(found) if found is not None else []
        env = recorded.environment_of(found) if found is not None else None
        superseded = (_superseded(found, project, recorded, project_dir, profiles_dir, target)
                      if run_id is None and found is not None and project is not None and environment is None else None)
    if found is None:
        if run_id is None and project is not None and not records_check_results(project):
            _nothing_found(as_json, "no check results are recorded: the spec declares no table check (`checks:` or a "
                                    "SQL check file), threshold or `fail` rule, so a build records results only when it "
                                    "stops on one of its own audits (the key, the conservation law, the ingestion "
                                    "metadata). Declare checks (docs/checks.md) for every build to record them.")
        if run_id is None and project is not None and not records_every_build(project):
            _nothing_found(as_json, "no check results are recorded: the spec's only checks are `fail` rules, which record "
                                    "a result only when one stops a build, and none has. Declare checks (docs/checks.md) "
                                    "for every build to record them.")
        if run_id is None:
            _nothing_found(as_json,
                           f"no check results are recorded in the warehouse of {_where(project_dir, profiles_dir, target)} "
                           f"yet; run "
                           f"`{build_command(project_dir)}` (entities with checks record theirs) and then `assay checks`.")
        _nothing_found(as_json, unrecorded_run(run_id, project_dir, profiles_dir, target))
    if run_id is None:
        _no_newer_clean_build(found, project, project_dir, profiles_dir, target, as_json)
        if superseded:
            _nothing_found(as_json, superseded)
    if run_id != found or (env is not None and env != (environment or "prod")):
        # Say which run this is: the caller gave none, or only the start of its id; and, on
        # SQLMesh, the environment a run of another one than the read one was for (0936).
        where = f" (environment {env})" if env is not None and env != (environment or "prod") else ""
        click.echo(f"run {found}{where}" + (_latest_label(found, project_dir, profiles_dir, target) if run_id is None else ""), err=True)
    if as_json:
        # 000's wire shape; `scope` is the table each result is of (a run checks several tables).
        click.echo(json.dumps([{k: r[k] for k in WIRE} for r in results], indent=2))
    else:
        for r in results:
            label = _label(r)
            # A not_evaluated or errored detail already opens with its label: print it once.
            detail = r["detail"]
            for opening in (NOT_EVALUATED_PREFIX, "errored: "):
                if detail.startswith(opening) and label.lower().split(" (")[0] == opening.rstrip(": "):
                    detail = detail[len(opening):]
            for worded, suffix in (("warned", " (warned)"), ("failed (kept)", " (kept)")):
                if label == worded and detail.endswith(suffix):  # a warn or keep file's rows: said once
                    detail = detail[: -len(suffix)]
            click.echo(f"{r['table']}: {r['name']}: {label}: {one_line(detail)}")
    failed = [r for r in results if not did_pass(r)]
    if failed:
        # a check id names a check within its table: two tables may declare the same one
        raise ChecksFailed(f"{len(failed)} of {plural(len(results), 'check')} of run {found} did not pass: "
                           + ", ".join(f"{r['table']}: {r['name']}" for r in failed) + ".")


def _rate_rows(kind: str, table: str, what: str = "a threshold") -> str:
    """Where the rows a threshold (a rate, or a change since the previous run) counted are: it keeps
    none of its own, the build routed them."""
    if kind == "volume_change":
        return "a volume check counts the rows a load brought and keeps none (assay report shows the rows per run)"
    quarantined = f"they are the rows of {table}__reject this run quarantined"
    fired = f"they carry the rule: in {table}__reject when it quarantines, in {table}'s _quality_flags when it flags"
    where = {"quarantine_rate": quarantined, "quarantine_increase": quarantined, "rule_rate": fired,
             "rule_increase": fired, "flag_rate": f"they are the rows of {table} whose _quality_flags is not empty"}[kind]
    return f"{what} keeps no rows of its own; {where} (assay report shows examples of each rule)"


# How `assay check list` names a result that did not pass without blocking (002's words): the text
# output of `assay checks` says the same (decision 0949).
WORDED_OUTCOMES = ("warned", "failed (kept)")


def _label(result: dict) -> str:
    """How the text output names a result: `passed` when it passed (did_pass, decision 1120); a
    detail opening ``not_evaluated: `` is neither a pass nor a failure (000), an unreadable
    candidate is an error (decision 0531); a failure of a check that only warns (an advisory
    check, a `warn` threshold) reads `warned` and of a `keep` check file `failed (kept)`, as
    `assay check list` names them; any other failure `FAILED`. 002's check line: a `warn` check
    file that returned rows passed (a warning counts as passed) and reads `warned`; an error reads
    `ERRORED`, `errored` for a check that only warns, `ERRORED (kept)` for a `keep` file."""
    if did_pass(result):
        return "warned" if result.get("outcome") == "warned" else "passed"
    if result["detail"].startswith(NOT_EVALUATED_PREFIX):
        return "not_evaluated"
    if result["detail"].startswith(("DECLARED_CHECK_UNREADABLE: ", "errored: ")):
        return {"warn": "errored", "advisory": "errored", "keep": "ERRORED (kept)"}.get(result.get("enforcement"), "ERRORED")
    if result.get("outcome") in WORDED_OUTCOMES:
        return result["outcome"]
    return "FAILED"


@click.group("check")
def check_group() -> None:
    """Results of table checks recorded by the builds (dbt or SQLMesh)."""


@check_group.command("list")
@project_option(PROJECT_HELP)
@spec_option(SPEC_HELP)
@warehouse_options
@click.option("--environment", default=None,
              help="SQLMesh projects: list only the runs of this environment (default: every run, each with "
                   "the environment it recorded).")
@json_option("Print the results as a JSON list (full run ids).")
# `--output json` was this command's spelling before every command took --json; kept for scripts.
@click.option("--output", "output", type=click.Choice(["text", "json"]), default="text", hidden=True)
def check_list(project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path], target: Optional[str],
               environment: Optional[str], as_json: bool, output: str) -> None:
    """Every recorded check result, newest first: run, table, check, outcome, rows, kept, on_failure,
    finished_at.

    The run column shows the first 8 characters of the run id (of a SQLMesh id, those after
    `SQLMESH_PLAN: ` or `SQLMESH_RUN: `); `assay checks` takes them as they are. `rows` is how many
    rows the check found failing (the rows a SQL check file returned; the null, out-of-range or
    repeating-key rows of a declared check; empty for a check that counts no rows), `kept` how many
    of its rows were kept for `assay check rows` (at most the build's cap).
    """
    project = _spec_project(spec_dir, project_dir)
    with _results(spec_dir, project_dir, profiles_dir, target, environment, project) as recorded:
        items = recorded.listing()
    others = 0
    if project is not None:
        # the spec's tables only: a meta schema another project shares holds its results too (an
        # outside tester, session 45; `assay anomalies` reads the spec's entities the same way)
        from ..runtime.table_states import checked_table_names

        names = checked_table_names(project)
        others = sum(1 for i in items if i["table"] not in names)
        items = [i for i in items if i["table"] in names]
    if others and not as_json:
        click.echo(f"note: {plural(others, 'result')} of tables this spec does not name left out (another project "
                   "records into the same meta schema)", err=True)
    if environment is not None:
        # a run that recorded no environment (a config without the recorder) may be of any
        items = [i for i in items if i.get("environment") in (None, environment)]
    if as_json or output == "json":
        click.echo(json.dumps(items, indent=2))
        return
    if not items:
        # which warehouse was read: a build of another target or profile is the usual cause
        click.echo(f"no check results recorded yet in the warehouse of {_where(project_dir, profiles_dir, target)}")
        return
    cols = ["run", "table", "check", "outcome", "rows", "kept", "on_failure", "finished_at"]
    if any("environment" in i for i in items):
        cols.insert(1, "environment")  # SQLMesh runs that recorded theirs (decision 0936)
    rows = [{"environment": "", **i, "run": short_run_id(i["run"]), "rows": "" if i["rows"] is None else i["rows"]}
            for i in items]
    widths = {c: max(len(c), *(len(str(i[c])) for i in rows)) for c in cols}
    click.echo("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for i in rows:
        click.echo("  ".join(str(i[c]).ljust(widths[c]) for c in cols).rstrip())


@check_group.command("rows")
@click.argument("run_id", metavar="RUN")
@click.argument("check_id", metavar="CHECK")
@project_option(PROJECT_HELP)
@spec_option(SPEC_HELP)
@warehouse_options
@click.option("--environment", default=None,
              help="SQLMesh projects: accepted as on every operator command; RUN names the run, whatever its environment.")
@json_option("Print the rows as a JSON list of {table, check_id, row_number, row}.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Print at most this many rows of each table (default: every kept row).")
def check_rows(run_id: str, check_id: str, project_dir: Path, spec_dir: Optional[Path], profiles_dir: Optional[Path],
               target: Optional[str], environment: Optional[str], as_json: bool, limit: Optional[int]) -> None:
    """Print the rows check CHECK found in run RUN (its id or the start of it), kept from the checked
    candidate: a declared check's violating rows, the rows a SQL check file returned (at most
    `assay_check_rows_kept` per check, 100 unless the dbt var says otherwise; redacted columns left out).

    Exit 0 when the rows (or the sentence saying why there are none) are printed, 1 when the run or
    the check is not recorded.
    """
    project = _spec_project(spec_dir, project_dir)
    with _results(spec_dir, project_dir, profiles_dir, target, environment, project) as recorded:
        found = recorded.find_run(run_id)
        if found is None:
            _nothing_found(as_json, unrecorded_run(run_id, project_dir, profiles_dir, target))
        of_run = recorded.of_run(found)
        # A check is found by the name `check list` shows (a SQL check file's NAMESPACE.TABLE/NAME, a
        # rule's name) or by its id in `assay checks --json` (upper-cased), in any case.
        results = [r for r in of_run if check_id.upper() in (r["check_id"].upper(), r["name"].upper())]
        if not results:
            ids = sorted({r["name"] for r in of_run})
            _nothing_found(as_json, f"run {found} recorded no check {check_id}; its checks are {', '.join(ids)}. "
                                    f"Run `assay checks {short_run_id(found)}` to see them.")
        kept = [item for name in sorted({r["name"] for r in results}) for item in recorded.kept_rows(found, name)
                if any(r["table"] == item["table"] and r["name"] == name for r in results)]
        dialect = recorded.reader.dialect
        env = recorded.environment_of(found)
    if env is not None and env != (environment or "prod"):
        # RUN names the run whatever its environment: say which it was, as `assay checks` does (an
        # outside tester, session 45, read prod's rows under `--environment dev` without a word)
        click.echo(f"run {found} (environment {env})", err=True)
    # Each value spelled by its column's type, the same whatever engine kept it (decision 0952).
    from ..lower.check_rows import kept_row_types  # sqlglot: only where rows are shown

    kept = shown_rows(kept, (lambda table, check: kept_row_types(project, table, check)) if project is not None else None,
                      dialect)
    if kept and project is None:
        click.echo("values are shown as the engine wrote them: no spec was given or recorded, so their column types "
                   "are unknown (pass --spec to spell them as `assay checks` does)", err=True)
    items = []
    for item in kept:
        if limit is not None and sum(1 for i in items if i["table"] == item["table"]) >= limit:
            continue
        items.append(item)
    if as_json:
        click.echo(exactjson.dumps(items, indent=2))
    else:
        for i in items:
            click.echo(f"{i['table']}: {i['check_id']} #{i['row_number']}: {exactjson.dumps(i['row'], separators=(', ', ': '))}")
    tables = {i["table"] for i in items}
    for r in results:
        # a kept row names its check as `check list` does: a SQL check file by its path name, not
        # by its upper-cased id (an outside tester, session 41: "0 of the 2 ... were kept" under 2 rows)
        held = sum(1 for i in kept if i["table"] == r["table"] and i["check_id"] in (r["check_id"], r["name"]))
        if r["table"] in tables and r.get("failing") and held < r["failing"]:
            # The build keeps at most `assay_check_rows_kept` rows per check: say the list is cut
            # (an outside tester read 1 row as all there was).
            click.echo(f"{r['table']}: {r['name']}: {held} of the {plural(r['failing'], 'failing row')} it found "
                       f"{'was' if held == 1 else 'were'} kept (a build keeps at most 100 rows per check; on dbt the "
                       "var `assay_check_rows_kept` sets another number)", err=True)
        if r["table"] not in tables:
            # Say why there is nothing to show rather than print nothing.
            if r["kind"] in RATE_KINDS + INCREASE_KINDS:
                why = _rate_rows(r["kind"], r["table"])
            elif r["kind"] == "anomaly":
                # an anomaly check judges the measure a threshold of the same kind counts (its id
                # names the measure: VOLUME_ANOMALY, QUARANTINE_RATE_ANOMALY, <RULE>_ANOMALY)
                measure = {"VOLUME_ANOMALY": "volume_change", "QUARANTINE_RATE_ANOMALY": "quarantine_rate"}
                why = _rate_rows(measure.get(str(r["name"]).upper(), "rule_rate"), r["table"], "an anomaly check")
            elif r["kind"] == AUDIT:
                why = ("it stopped or set back the table and keeps no rows of its own (a `fail` rule's rows "
                       f"carry the rule in {r['table']}__staged's _failed_rules)")
            elif r["passed"] and r.get("outcome") in (None, "passed"):
                why = "it passed"
            elif r["passed"]:
                # A SQL check file on `warn` passes with rows (002): it found rows, and none were kept.
                why = f"it warned, but none of the rows it returned were kept {NONE_KEPT}"
            elif _label(r) == "not_evaluated":
                why = "it was not evaluated"
            elif r.get("failing"):
                # It found rows and the build kept none of them: say so, not that there were none.
                why = f"it found {plural(r['failing'], 'failing row')}, and none were kept {NONE_KEPT}"
            else:
                why = "no rows were kept for it (a row count, an unreadable table, or a check with no rows to show)"
            click.echo(f"{r['table']}: {r['name']}: no rows: {why}: {r['detail']}", err=True)


COMMANDS = (checks_cmd, check_group)


def _where(project_dir: Path, profiles_dir: Optional[Path], target: Optional[str]) -> str:
    """The profile and target (or gateway) read, for a message that found nothing there."""
    from ..runtime.warehouse import describe

    try:
        return describe(project_dir, profiles_dir, target)
    except AssayError:
        return shown(project_dir)
