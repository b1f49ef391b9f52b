"""The check results the builds recorded, read in one place for every operator command.

Every build records one row per table check in ``<meta>.assay_check_results`` (the dbt
materialization, the SQLMesh post-statement, a check task) and the rows a failing check found in
``<meta>.assay_check_rows``. `assay checks`, `assay check list|rows`, `assay table list|get` and the
report all ask the same questions of them (which run is the latest, which run an id or the start of
one means, what a run recorded, which run last built each table); `CheckResults` answers them over
the one connection of the command (runtime/operator.py::open_results), so the answers cannot
drift apart between commands. The detail sentences are rendered from the recorded measurements
(checks/recorded.py): the warehouse records numbers, assay writes the words.

A check that stopped or set back a table without recording a result (a `fail` rule's test or
audit, the ingestion-metadata check, the conservation law, the key audit: decisions 0510, 0932,
0935) left a `CHECK_FAILED` event in ``<meta>.assay_events``, named, counted and said in words by
the build. This is where such an event becomes a result of its run (decision 0941): `stopped`
reads them, `of_run` and `listing` add them beside the recorded results, failed, with the event's
sentence as their detail; a run that recorded nothing else is still a run `find_run` finds.
"""

from __future__ import annotations

import json
from typing import Any, Collection, Iterable, Mapping, Optional

from .. import exactjson
from ..errors import AssayUsageError

RESULTS_TABLE = "assay_check_results"
ROWS_TABLE = "assay_check_rows"
EVENTS_TABLE = "assay_events"
CHECK_FAILED = "CHECK_FAILED"
# The kind of a result read from a CHECK_FAILED event that recorded no result of its own: a
# generated audit or stopping test (a `fail` rule, INGESTION_METADATA, CONSERVATION, KEY_UNIQUE).
AUDIT = "audit"
# How the build says a `fail` rule fired, on both targets (dbt's record_stopped_builds, SQLMesh's
# build_events.py): the rule's on_fail is the listing's on_failure. Other audits are `required`.
FAIL_RULE_SUFFIX = "(on_fail: fail)"
ERRORED_OPENINGS = ("errored: ", "the test errored")
# A build that did not write a table because one of its own models errored records TABLE_BUILD_FAILED
# `node_errored: <model>` (dbt's hook, decision 0940; SQLMesh's after_all, decision 1164); the
# commands list it as an errored result of the run under this id.
BUILD_FAILED = "TABLE_BUILD_FAILED"
NODE_ERRORED = "node_errored"
MODEL_ERRORED = "MODEL_ERRORED"
# The enforcements whose failure stops or sets back the table: a declared check's `required`, a
# check file's `block`, a `fail` rule (a `keep` file marks the table instead; 002).
BLOCKING = ("required", "block", "fail")


def log_of(run: Optional[str]) -> str:
    """Where the engine's own message of a failed run is: SQLMesh's output or dbt's log."""
    return "SQLMesh's output" if str(run or "").startswith(SQLMESH_RUN_PREFIXES) else "dbt's log"


# SQLMesh's record of the environment a plan or run was for (its `why`; decision 0936).
RUN_ENVIRONMENT = "RUN_ENVIRONMENT"
PROD = "prod"


def run_environment_starts(reader: Any, meta: str) -> dict[str, tuple[str, str]]:
    """{run id: (the SQLMesh environment it was planned or run for, when it started)}, from the
    RUN_ENVIRONMENT events `@assay_record_environment` writes before a plan or run evaluates
    anything (decision 0936). Empty on dbt, and on a SQLMesh project whose config does not
    record it. Asked once per connection where the reader remembers (runtime.warehouse.Reader):
    the report asks it for every table and run, and no command writes these events."""
    def ask() -> dict[str, tuple[str, str]]:
        if not reader.exists(meta, EVENTS_TABLE):
            return {}
        rows = reader.query(f"select run_id, why, cast(occurred_at as varchar(64)) from {reader.relation(meta, EVENTS_TABLE)} "
                            "where event_type = ?", (RUN_ENVIRONMENT,))
        return {str(run): (str(env), str(at)) for run, env, at in rows if run is not None and env is not None}

    from .warehouse import remember

    return dict(remember(reader, ("run_environment_starts", meta), ask))


def run_environments(reader: Any, meta: str) -> dict[str, str]:
    """{run id: the SQLMesh environment it was planned or run for} (see `run_environment_starts`)."""
    return {run: env for run, (env, _at) in run_environment_starts(reader, meta).items()}

# SQLMesh's run ids (its correlation id, decision 0204) start alike for every plan and every run:
# the short id a person reads and types is the start of the part after this prefix.
SQLMESH_RUN_PREFIXES = ("SQLMESH_PLAN: ", "SQLMESH_RUN: ")
SHORT_ID = 8
RESULT_COLUMNS = ("table_name", "check_id", "kind", "enforcement", "passed", "check_spec", "measures", "check_position")
LIST_COLUMNS = ("run_id", "table_name", "check_id", "kind", "enforcement", "passed", "row_count", "measures",
                "recorded_at")


def distinct_part(run_id: str) -> str:
    """What differs between runs: a SQLMesh id without its common prefix, a dbt id as it is."""
    for prefix in SQLMESH_RUN_PREFIXES:
        if run_id.startswith(prefix):
            return run_id[len(prefix):]
    return run_id


def short_run_id(run_id: str) -> str:
    """The run id as `assay check list` shows it: the first 8 characters of what differs between
    runs (a dbt invocation id's start; a SQLMesh id's hex after `SQLMESH_PLAN: `/`SQLMESH_RUN: `)."""
    return distinct_part(run_id)[:SHORT_ID]


# The declared kinds whose pass counts violating rows, and the measure that holds the count: the rows
# `assay check rows` keeps for them are these (decision 0532). row_expectation counts no rows, and
# continuity measures its widest gap, not the rows at the ends of its gaps (decision 1121).
FAILING_MEASURE = {"null_ceiling": "nulls", "value_range": "outside", "key_uniqueness": "repeats"}
# The thresholds that count the rows of a run (docs/thresholds.md): the rows counted, quarantined,
# flagged or fired on, are their `failing` measure, shown whether the limit held or not (a rate
# passes with failing rows). A volume change and an anomaly judge counts of no failing row.
COUNTED_MEASURE = {"quarantine_rate": "failing", "flag_rate": "failing", "rule_rate": "failing",
                   "quarantine_increase": "failing", "rule_increase": "failing"}


def outcome_of(kind: str, enforcement: str, passed: bool, measures: Optional[str]) -> tuple[str, Optional[int]]:
    """(outcome, failing rows: the rows a SQL check file returned or a declared check found violating
    it, None for a check that counts none) of one recorded result, as `assay check list` names them."""
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
    outcome = "passed" if passed else ("FAILED" if enforcement == "required" else "warned")
    if kind in FAILING_MEASURE:
        # The rows the check found violating it, counted over the whole candidate (never capped by
        # how many were kept): 0 when it passed (no row violates it, even nulls under a ceiling).
        return outcome, 0 if passed else int(m.get(FAILING_MEASURE[kind]) or 0)
    if kind in COUNTED_MEASURE and m.get(COUNTED_MEASURE[kind]) is not None:
        return outcome, int(m[COUNTED_MEASURE[kind]])
    return outcome, None


def did_pass(result: Mapping[str, Any]) -> bool:
    """Whether one recorded result counts as passed: the verdict the run recorded and acted on (000's
    `passed`, whether the assertion held; a SQL check file on `warn` passes with rows, 002's
    `_sql_check_passed`). An advisory check that failed did not pass. `assay checks` (its labels and
    exit code) and the report's health line (its `checks N of M passed`) both ask this, so they
    cannot count differently (decision 1120). A result read without its verdict falls back on its
    outcome."""
    if result.get("passed") is None:
        return result.get("outcome") == "passed"
    return bool(result["passed"])


# How the tally names the outcomes of the results that are not `passed`, worst first.
TALLY_WORDS = (("FAILED", "failed"), ("failed (kept)", "failed (kept)"), ("errored", "errored"),
               ("warned", "warned"), ("not_evaluated", "not evaluated"))


def tally(results: Iterable[Mapping[str, Any]]) -> str:
    """`2 of 4 passed (1 of them warned); 2 did not: 2 warned`: how many of `results` passed
    (did_pass, as `assay checks` counts), how many of those passed with a warning (a SQL check file
    on `warn` that returned rows), then how many did not pass by outcome (outcome_of's words). The
    parts are disjoint and add up to the whole, so a warning is neither hidden nor counted twice."""
    results = list(results)
    passed = [r for r in results if did_pass(r)]
    missed = [r for r in results if not did_pass(r)]
    text = f"{len(passed)} of {len(results)} passed"
    warned = sum(1 for r in passed if r.get("outcome") not in (None, "passed"))
    if warned:
        text += f" ({warned} of them warned)"
    counts = [f"{sum(1 for r in missed if r.get('outcome') == o)} {word}" for o, word in TALLY_WORDS
              if any(r.get("outcome") == o for r in missed)]
    if missed:
        text += f"; {len(missed)} did not" + (f": {', '.join(counts)}" if counts else "")
    return text


def moment(value: Any) -> tuple:
    """A recorded timestamp (a datetime, or the text of one, UTC without a zone) as a sort key, so
    that a result's `recorded_at` and an event's `occurred_at` compare as times, not as text."""
    import datetime as dt

    text = str(value).strip().replace("Z", "+00:00")
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return (dt.datetime.min, text)
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return (when, text)


def stopped_outcome(why: Optional[str]) -> tuple[str, str]:
    """(outcome, on_failure) of a check read from a CHECK_FAILED event (see `CheckResults.stopped`):
    `errored` when the build says the test errored (its message stays in the tool's log), else
    `FAILED`; `fail` for a `fail` rule (its on_fail), `required` for a generated audit."""
    why = str(why or "")
    outcome = "errored" if why.startswith(ERRORED_OPENINGS) else "FAILED"
    return outcome, "fail" if why.endswith(FAIL_RULE_SUFFIX) else "required"


def wire_check_id(name: str) -> str:
    """000's `check_id` of a recorded check (decision 0948): `^[A-Z][A-Z0-9_]{0,127}$`, the check's
    own id upper-cased. A declared check is recorded upper-cased already; a `fail` rule is recorded
    under the rule's name (`kwh_not_absurd` -> `KWH_NOT_ABSURD`), a SQL check file under 002's
    `NAMESPACE.TABLE/NAME` (-> `NAME`, also when only its CHECK_FAILED event is read; the table is
    the result's `scope`)."""
    from ..checks.sqlfile import reported_check_id

    return reported_check_id(str(name))


def _result(table: str, name: str, kind: str, passed: bool, detail: str, outcome: str,
            failing: Optional[int] = None, enforcement: str = "required") -> dict[str, Any]:
    """One result of `CheckResults.of_run`: 000's wire fields first (see `WIRE`), then the commands' own
    (`failing`: the rows it found failing, as `assay check list` counts them; None when it counts none;
    `enforcement`: as recorded, `required`/`advisory` or a check file's `block`/`warn`/`keep`)."""
    return {"check_id": wire_check_id(name), "passed": passed, "detail": detail, "scope": table,
            "table": table, "name": str(name), "kind": kind, "outcome": outcome, "failing": failing,
            "enforcement": enforcement}


# What `assay checks --json` prints of a result: 000's wire shape, `scope` being the table the
# result is of (the run's receipt records it for every result: a run checks several tables).
WIRE = ("check_id", "passed", "detail", "scope")


class CheckResults:
    """The recorded results in schema `meta`, read through `reader` (a runtime.warehouse.Reader, or
    anything with its `query`, `exists` and `relation`). A warehouse whose builds recorded nothing
    yet has no results table: every question then has the empty answer, never an error."""

    def __init__(self, reader: Any, meta: str, environment: Optional[str] = None):
        """`environment`: the SQLMesh environment read (None: prod). A run recorded as planned for
        another one (decision 0936) is never this environment's latest; a run that recorded no
        environment (dbt, or a SQLMesh config without the recorder) counts for every one."""
        self.reader = reader
        self.meta = meta
        self.environment = environment
        self._elsewhere: Optional[frozenset[str]] = None

    def elsewhere(self) -> frozenset[str]:
        """The runs recorded as planned for another environment than the one read."""
        if self._elsewhere is None:
            read = self.environment or PROD
            self._elsewhere = frozenset(run for run, env in run_environments(self.reader, self.meta).items()
                                        if env != read)
        return self._elsewhere

    def environment_of(self, run_id: str) -> Optional[str]:
        """The SQLMesh environment `run_id` recorded, or None (dbt; not recorded)."""
        return run_environments(self.reader, self.meta).get(run_id)

    def rows(self, columns: tuple[str, ...], where: str = "", params: tuple = (), *,
             table: str = RESULTS_TABLE) -> list[tuple]:
        """Rows of `table` (the results, or the kept rows) with `columns`, `where` written with `?` marks."""
        if not self.reader.exists(self.meta, table):
            return []
        return self.reader.query(f"select {', '.join(columns)} from {self.reader.relation(self.meta, table)} {where}",
                                 params)

    def latest_run(self) -> Optional[str]:
        """The run of the environment read that recorded results last (by its recording time, then its id)."""
        elsewhere = self.elsewhere()
        runs = [(r[0], str(r[1])) for r in self.rows(("run_id", "cast(recorded_at as varchar(64))"))]
        runs += [(s["run"], str(s["at"])) for s in self.stopped()]
        runs = [(run, at) for run, at in runs if run not in elsewhere]
        return max(runs, key=lambda r: (moment(r[1]), r[0]))[0] if runs else None

    def latest_per_table(self) -> dict[str, tuple[str, str]]:
        """{table: (when, run)} of the run of the environment read that last recorded the table's
        check results."""
        from .warehouse import remember

        def ask() -> dict[str, tuple[str, str]]:
            elsewhere = self.elsewhere()
            latest: dict[str, tuple[str, str]] = {}
            for table, run, at in self.rows(("table_name", "run_id", "cast(recorded_at as varchar(64))")):
                if run in elsewhere:
                    continue
                if table not in latest or (str(at), run) > latest[table]:
                    latest[table] = (str(at), run)
            return latest

        return dict(remember(self.reader, ("latest_per_table", self.meta, self.environment), ask))

    def latest_run_per_table(self) -> dict[str, str]:
        """{table: the run that last recorded its check results}: the table's latest build."""
        return {table: run for table, (_, run) in self.latest_per_table().items()}

    def find_run(self, run_id: Optional[str]) -> Optional[str]:
        """The full id of the run meant: the latest recorded one when `run_id` is None, else the one
        `run_id` is a unique prefix of (of the whole id, or of a SQLMesh id's part after its prefix,
        as `check list` shows it); None when nothing matches. An ambiguous prefix is a usage error."""
        if run_id is None:
            return self.latest_run()
        ids = sorted({r[0] for r in self.rows(("run_id",))} | {s["run"] for s in self.stopped()})
        if run_id in ids:
            return run_id
        matching = [i for i in ids if i.startswith(run_id) or distinct_part(i).startswith(run_id)]
        if len(matching) > 1:
            raise AssayUsageError(f"{run_id!r} is the start of {len(matching)} recorded runs "
                                  f"({', '.join(matching)}); give more of the run id.")
        return matching[0] if matching else None

    def stopped(self, run_id: Optional[str] = None) -> list[dict[str, Any]]:
        """The checks that stopped or set back a table and recorded no result (of run `run_id`, or of
        every run), oldest first: {run, table, check_id, why, rows, at}, one per (run, table, check).

        A `fail` rule, the ingestion-metadata check, the conservation law and the key audit record
        no row in the results table; the build records each failure as a CHECK_FAILED event (dbt's
        `assay_entity` materialization and its on-run-end hook `record_stopped_builds`, SQLMesh's
        recorders), with the check's name, the build's sentence (names and counts, never a value)
        and the rows it counted. A CHECK_FAILED event of a check that did record a result (a
        declared check, a SQL check file) is that result, read from the results table: not again."""
        if not self.reader.exists(self.meta, EVENTS_TABLE):
            return []
        where, params = "where (event_type = ? or (event_type = ? and why like ?))", (CHECK_FAILED, BUILD_FAILED,
                                                                                     NODE_ERRORED + ": %")
        if run_id is not None:
            where, params = where + " and run_id = ?", (*params, run_id)
        events = self.reader.query(
            "select run_id, table_name, check_name, why, row_count, cast(occurred_at as varchar(64)) "
            f"from {self.reader.relation(self.meta, EVENTS_TABLE)} {where}", params)
        if not events:
            return []
        # A table one of whose own models errored (a database error, not a check; decisions 0940,
        # 1164) was not written: the run did not pass, so it is a result of the run, errored.
        events = [(run, table, MODEL_ERRORED, f"errored: its model {str(why)[len(NODE_ERRORED) + 2:]} errored "
                   f"({log_of(run)} says why)", rows, at) if check is None and str(why or "").startswith(NODE_ERRORED)
                  else (run, table, check, why, rows, at) for run, table, check, why, rows, at in events]
        recorded = {(str(run), str(table), str(check).upper()) for run, table, check in self.rows(
            ("run_id", "table_name", "check_id"), *(("where run_id = ?", (run_id,)) if run_id is not None else ()))}
        out: dict[tuple[str, str, str], dict[str, Any]] = {}
        for run, table, check, why, rows, at in sorted(events, key=lambda e: (moment(e[5]), str(e[0]))):
            key = (str(run), str(table), str(check).upper())
            if run is None or check is None or key in recorded or key in out:
                continue
            out[key] = {"run": str(run), "table": str(table), "check_id": str(check), "why": why,
                        "rows": None if rows is None else int(rows), "at": at}
        return list(out.values())

    def of_run(self, run_id: str) -> list[dict[str, Any]]:
        """The results of one run, in table then declaration order: 000's wire fields (`check_id`,
        the reported id `wire_check_id` gives; `passed`; `detail`; `scope`, the table the check
        covered), and, for the commands' own use, `table`, `name` (the check as it was recorded and
        as `assay check list` names it: a SQL check file's `NAMESPACE.TABLE/NAME`, a rule's own name),
        `kind` and `outcome` (`assay check list`'s, from `outcome_of`). The checks that stopped or set back a table without recording a result
        (`stopped`) come first among their table's, failed, of kind `audit`, the build's sentence
        as their detail."""
        from ..checks.recorded import verdict_of_row

        rows = self.rows(RESULT_COLUMNS, "where run_id = ?", (run_id,))
        out = []
        for s in self.stopped(run_id):
            out.append(((s["table"], 0, 0, s["check_id"]),
                        _result(s["table"], s["check_id"], AUDIT, False, str(s["why"] or ""), stopped_outcome(s["why"])[0])))
        for table, check_id, kind, enforcement, passed, spec, measures, position in rows:
            # The recorded verdict is the one the run acted on; the sentence is rendered again here.
            out.append(((table, 1, position or 0, check_id),
                        _result(table, check_id, kind, bool(passed), verdict_of_row(kind, spec, measures).detail,
                                *outcome_of(kind, enforcement, bool(passed), measures), enforcement=str(enforcement))))
        return [r for _, r in sorted(out, key=lambda x: x[0])]

    def listing(self) -> list[dict[str, Any]]:
        """Every recorded result, newest first: run (full id), table, check, outcome, rows (the rows it
        found failing: a SQL check file's returned rows, a declared check's violating rows; None for
        a check that counts none), kept (how many of them `assay check rows` prints, kept from the
        checked candidate up to the build's cap), on_failure and finished_at (ISO 8601); and
        `environment` for a SQLMesh run that recorded the one it was for (decision 0936). The checks
        that stopped or set back a table (`stopped`) are among them: outcome FAILED (errored when
        the test errored), the rows the build counted, on_failure `fail` for a `fail` rule and
        `required` for a generated audit, finished_at when the build recorded the failure.

        002's `--json` has every field: also `error`, the message of a check that errored (as the
        build recorded it: no value of the data, decision 1136), and `rollback`, what the failed build
        of the result's table did in that run when the result blocked it (the `why` of its
        TABLE_ROLLED_BACK or TABLE_BUILD_FAILED event: `previous_version_kept`, `not_published`,
        `not_written`, `wrote <table>` on SQLMesh, `node_errored: <model>`); both None otherwise."""
        from .table_states import iso_utc

        kept = self.kept_counts()
        found = []
        for run_id, table, check_id, kind, enforcement, passed, _, measures, recorded_at in self.rows(LIST_COLUMNS):
            outcome, failing = outcome_of(kind, enforcement, bool(passed), measures)
            error = json.loads(measures or "{}").get("error") if outcome == "errored" else None
            found.append({"run": run_id, "table": table, "check": check_id, "outcome": outcome, "rows": failing,
                          "kept": kept.get((run_id, table, check_id), 0), "on_failure": enforcement,
                          "finished_at": recorded_at, "error": None if error is None else str(error)})
        for s in self.stopped():  # the checks that stopped or set back a table (decision 0941)
            outcome, on_failure = stopped_outcome(s["why"])
            found.append({"run": s["run"], "table": s["table"], "check": s["check_id"], "outcome": outcome,
                          "rows": s["rows"], "kept": kept.get((s["run"], s["table"], s["check_id"]), 0),
                          "on_failure": on_failure, "finished_at": s["at"],
                          "error": str(s["why"]) if outcome == "errored" else None})
        rolled = self._failed_builds() if found else {}
        for item in found:
            blocked = item["outcome"] in ("FAILED", "errored") and item["on_failure"] in BLOCKING
            item["rollback"] = rolled.get((str(item["run"]), str(item["table"]))) if blocked else None
        found.sort(key=lambda i: (moment(i["finished_at"]), i["run"], i["table"], i["check"]), reverse=True)
        envs = run_environments(self.reader, self.meta) if found else {}
        for item in found:
            item["finished_at"] = iso_utc(item["finished_at"])
            if item["run"] in envs:
                item["environment"] = envs[item["run"]]
        return found

    def _failed_builds(self) -> dict[tuple[str, str], str]:
        """{(run, table): why} of the failed builds recorded (TABLE_ROLLED_BACK, TABLE_BUILD_FAILED),
        the first of each run and table."""
        if not self.reader.exists(self.meta, EVENTS_TABLE):
            return {}
        events = self.reader.query(
            "select run_id, table_name, why, cast(occurred_at as varchar(64)) "
            f"from {self.reader.relation(self.meta, EVENTS_TABLE)} where event_type in (?, ?)",
            ("TABLE_ROLLED_BACK", BUILD_FAILED))
        out: dict[tuple[str, str], str] = {}
        for run, table, why, _at in sorted(events, key=lambda e: (moment(e[3]), str(e[0]))):
            out.setdefault((str(run), str(table)), str(why))
        return out

    def kept_counts(self) -> dict[tuple[str, str, str], int]:
        """{(run, table, check): how many rows were kept for it in the rows table}."""
        counted = self.rows(("run_id", "table_name", "check_id", "count(*)"),
                            "group by run_id, table_name, check_id", table=ROWS_TABLE)
        return {(run, table, check): int(n) for run, table, check, n in counted}

    def kept_rows(self, run_id: str, check_id: str) -> list[dict[str, Any]]:
        """The rows check `check_id` found in run `run_id`, as they were kept (redacted columns left
        out by the build), in table then row order."""
        kept = self.rows(("table_name", "row_number", "row_json"), "where run_id = ? and check_id = ?",
                         (run_id, check_id), table=ROWS_TABLE)
        return [{"table": table, "check_id": check_id, "row_number": int(number), "row": exactjson.loads(text)}
                for table, number, text in sorted(kept, key=lambda r: (r[0], int(r[1])))]
