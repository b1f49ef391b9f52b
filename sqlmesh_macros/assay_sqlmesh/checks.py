"""Table checks (documents 000 and 002) on SQLMesh: measure once, record, audit the record.

A generated entity model carries, after its query, one post-statement per kind of check:

- ``@assay_record_declared_checks(...)`` runs the table's one measuring query (every declared
  check of 000 in one pass) against the table SQLMesh has just written, decides each check with
  :func:`assay.checks.recorded.verdict_of` (the verdict ``assay checks`` renders, the one the
  dbt target's results agree with, decision 0600), and returns the INSERT of one row per check
  into ``<meta>.assay_check_results``;
- ``@assay_record_sql_check(...)`` counts the rows one SQL check file (002) returns and records
  that count the same way.

SQLMesh runs post-statements inside the evaluation's transaction, after the insert and before
the model's audits. Each check then has an audit of its own (blocking for ``required`` and
``block``, non-blocking for ``advisory`` and ``warn``) whose body is
``@assay_check_failures(...)`` (check_audits.py): the recorded row of this run when the check did
not pass, with 000's sentence as a column, once per failing row the check found, so SQLMesh's own
audit machinery fails the plan or warns, naming the check in the audit's name and counting its
rows as ``assay checks`` does. The run is SQLMesh's correlation id (decision 0204), the same text
``@assay_run_id()`` writes into the mart.

Outside an evaluation (loading, ``sqlmesh render``, table creation) the recorders return nothing
and touch nothing.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Optional

from sqlglot import exp
from sqlmesh import macro
from sqlmesh.core.dialect import parse_one as parse_sqlmesh

from ._core import AssayMacroError, dialect_of, lit, literal_text, parse_one, pick, type_name
from .temporal import utc_now_sql
from .build_events import (  # noqa: F401 (macros of this module)
    assay_record_conservation_stop,
    assay_record_failed_rules,
    assay_record_ingestion_stop,
    assay_record_key_stop,
    record_blocked_build,
)
from .check_rows import keep_rows, keeps_rows, redacted
from .recorded_once import replace_earlier
from .json_text import row_json_sql

RESULT_COLUMNS = (
    "run_id",
    "table_name",
    "check_id",
    "check_position",
    "kind",
    "enforcement",
    "passed",
    "row_count",
    "check_spec",
    "measures",
    "recorded_at",
)
#: Declared checks that count the entity's staged model besides the table just written.
RATE_KINDS = ("quarantine_rate", "flag_rate", "rule_rate")
#: Declared checks that also read the entity's earlier runs (the mart, the results; decision 0981).
INCREASE_KINDS = ("quarantine_increase", "rule_increase", "volume_change")
#: Declared checks judged against the band learnt from earlier runs (decision 1030): they read the
#: staged model and the history as change limits do.
HISTORY_KINDS = (*INCREASE_KINDS, "anomaly")
#: The parts of the measuring query that read a relation which may not exist yet, and what they
#: read instead then (assay.lower.history): no earlier run.
HISTORY_EMPTY = {
    "assay_hm": "SELECT CAST(NULL AS TEXT) AS run_id, CAST(NULL AS TEXT) AS rule, CAST(NULL AS TEXT) AS disposition, "
                "CAST(NULL AS BIGINT) AS rows_evaluated, CAST(NULL AS BIGINT) AS rows_quarantined, "
                "CAST(NULL AS BIGINT) AS rows_deduped, CAST(NULL AS BIGINT) AS rows_failed, "
                "CAST(NULL AS TIMESTAMP) AS run_started_at WHERE 1 = 0",
    "assay_hb": "SELECT CAST(NULL AS TEXT) AS run_id WHERE 1 = 0",
    "assay_ay": "SELECT CAST(NULL AS TEXT) AS measure, CAST(NULL AS TEXT) AS run_id, CAST(NULL AS BIGINT) AS direction "
                "WHERE 1 = 0",
}
RESULT_TYPES = ("string", "string", "string", "int", "string", "string", "bool", "int", "string", "string", "timestamp")

# The distance between two consecutive distinct values, exact on every engine (decision 0501):
# a timestamp gap in microseconds, a date gap in seconds, a number in its own units.
GAP_TEMPLATES: dict[str, dict[str, str]] = {
    "default": {
        "timestamp": "CAST(EXTRACT(EPOCH FROM ({hi} - {lo})) * 1000000 AS {int})",
        "date": "CAST(({hi} - {lo}) AS {int}) * 86400",
        "numeric": "({hi} - {lo})",
    },
    # DuckDB's epoch() is a double; epoch_us() is an exact BIGINT.
    "duckdb": {
        "timestamp": "(EPOCH_US({hi}) - EPOCH_US({lo}))",
        "date": "CAST(({hi} - {lo}) AS {int}) * 86400",
        "numeric": "({hi} - {lo})",
    },
}


def _string(arg: Any) -> str:
    folded = literal_text(arg)
    if folded is not None:
        return folded
    if isinstance(arg, exp.Literal):
        return arg.this
    if isinstance(arg, (exp.Column, exp.Identifier)):
        return arg.name
    return str(arg)


@macro()
def assay_continuity_gap(evaluator, lo, hi, domain) -> exp.Expr:
    """The gap between ``lo`` and ``hi`` of a continuity check over ``domain``
    (``'timestamp'``, ``'date'`` or ``'numeric'``), as an exact number.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_continuity_gap(a, b, 'timestamp')", "duckdb")
    '(EPOCH_US(b) - EPOCH_US(a))'
    """
    d = dialect_of(evaluator)
    template = pick(GAP_TEMPLATES, d)[_string(domain)]
    return parse_one(
        template.format(lo=lo.sql(dialect=d), hi=hi.sql(dialect=d), int=type_name("int", d)), read=d
    )


# --------------------------------------------------------------------------- recording


def _adapter(evaluator) -> Any:
    """The engine adapter of a real evaluation, or None (loading, rendering, table creation:
    SQLMesh passes the snapshot being evaluated only when it evaluates it)."""
    locals_ = getattr(evaluator, "locals", {})
    if locals_.get("snapshot") is None:
        return None
    return locals_.get("engine_adapter")


def _expanded(evaluator, query: exp.Expr, dialect: str, resolve: bool = False) -> str:
    """The query argument with its macros expanded (``@this_model`` is the table just written).
    With ``resolve``, every other model it names is read as the physical table this plan or run
    wrote: a SQL check file that joins another entity (in the model's ``depends_on``, decision
    0974) reads that entity as built now, not the environment's view, which a first plan has not
    created yet."""
    expanded = evaluator.transform(query)
    if isinstance(expanded, exp.Paren):
        expanded = expanded.this
    if isinstance(expanded, exp.Subquery):
        expanded = expanded.this
    if resolve:
        try:
            expanded = evaluator.resolve_tables(expanded)
        except Exception:  # noqa: BLE001 - an evaluator without a table mapping (a doctest, a render): names as written
            pass
    return expanded.sql(dialect=dialect)


def _ensure_results(adapter, relation: str, dialect: str) -> None:
    """Create ``<meta>.assay_check_results`` on first use: the dbt target's columns, so
    `assay checks` reads either target's results."""
    ensure_table(adapter, relation, dialect, RESULT_COLUMNS, RESULT_TYPES)


def ensure_table(adapter, relation: str, dialect: str, columns, types) -> None:
    """Create a table of assay's meta schema on first use, with `columns` of assay `types`.

    Entities evaluated side by side may race to create it on a fresh warehouse (SQLMesh runs
    several evaluations at once on PostgreSQL); the loser's error is dropped once the table is
    there, under a savepoint so that the evaluation's transaction survives it."""
    table = exp.to_table(relation, dialect=dialect)
    if _results_exist(adapter, table, dialect):
        return
    statements = []
    if table.db:
        statements.append(f"CREATE SCHEMA IF NOT EXISTS {exp.to_identifier(table.db).sql(dialect=dialect)}")
    cols = ", ".join(f"{c} {type_name(t, dialect)}" for c, t in zip(columns, types))
    statements.append(f"CREATE TABLE IF NOT EXISTS {table.sql(dialect=dialect)} ({cols})")
    pool = getattr(adapter, "_connection_pool", None)
    savepoint = bool(getattr(pool, "is_transaction_active", False)) and dialect in SAVEPOINT_DIALECTS
    if savepoint:
        adapter.execute("SAVEPOINT assay_results")
    try:
        for statement in statements:
            adapter.execute(statement)
    except Exception:
        if savepoint:
            adapter.execute("ROLLBACK TO SAVEPOINT assay_results")
        if not _results_exist(adapter, table, dialect):
            raise
        return
    if savepoint:
        adapter.execute("RELEASE SAVEPOINT assay_results")


def _holds(evaluator, adapter, only_if) -> bool:
    """True without a condition; with one (a query), when it returns at least one row.

    The staged model of an entity without dedupe records the entity's checks only when its
    key audit is about to stop the run (decision 0921): otherwise the entity records them."""
    return only_if is None or bool(_found(evaluator, adapter, only_if))


def _found(evaluator, adapter, only_if) -> int:
    """How many rows the condition query returns (the repeated keys the key audit will report)."""
    d = dialect_of(evaluator)
    found = adapter.fetchone(f"SELECT COUNT(*) FROM ({_expanded(evaluator, only_if, d)}) AS assay_only_if",
                             quote_identifiers=False)
    return int(found[0]) if found and found[0] is not None else 0


def _results_exist(adapter, table: exp.Table, dialect: str) -> bool:
    """Asked of the catalog every time: the adapter's table cache may predate a concurrent create."""
    found = adapter.fetchone(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "
        f"{lit(table.db, dialect)} AND table_name = {lit(table.name, dialect)}",
        quote_identifiers=False,
    )
    return bool(found and int(found[0]))


# Engines whose open transaction survives a failed statement rolled back to a savepoint.
SAVEPOINT_DIALECTS = ("postgres", "redshift")


# Where the engine's own message ends and its excerpt of the query begins: DuckDB's blank line
# before `LINE 1: ...`, PostgreSQL's (psycopg2) `LINE n:`, `DETAIL:`, `HINT:` and `CONTEXT:` lines.
_EXCERPT = re.compile(r"\n\n|\n(?:LINE \d+:|DETAIL:|HINT:|CONTEXT:)")


def _true(arg: Any) -> bool:
    """A macro's optional flag (`private := TRUE`): absent or NULL is false."""
    return arg is not None and not isinstance(arg, exp.Null) and keeps_rows(arg)


def engine_message(err: BaseException) -> str:
    """The engine's message of a failed check query as the dbt target records it: DuckDB's first
    paragraph (dbt's probe keeps that), PostgreSQL's primary message (dbt's `sqlerrm`), without the
    excerpt of the query, which names SQLMesh's physical tables and differs from dbt's. So an
    errored check reads the same on both targets."""
    text = str(getattr(err, "__cause__", None) or err)
    return _EXCERPT.split(text, maxsplit=1)[0].strip()


def _try_fetchone(adapter, sql: Any, dialect: str, timeout_seconds: Optional[int] = None,
                  read_only: bool = False) -> tuple[Optional[tuple], Optional[str]]:
    """(row, None), or (None, the engine's message) when the query fails: a check whose SQL
    errors is a result, not the end of the evaluation (002, "What a check can end as").

    DuckDB runs SQLMesh's statements in autocommit, so a failed query leaves nothing behind; on
    PostgreSQL the evaluation's transaction is open, so the query runs under a savepoint that a
    failure rolls back to. Elsewhere, inside a transaction, the error stops the evaluation.

    `read_only` (a SQL check file's count, issue 21): under the savepoint the transaction turns
    read-only, so the server refuses any write the check's SQL attempts; the savepoint is then
    rolled back to, which undoes the setting (a transaction cannot turn read-write again).

    On PostgreSQL without an open transaction (SQLMesh evaluates post-statements inside one, but
    a caller outside an evaluation need not), one is opened here: the adapter would otherwise run
    the query in a transaction of its own and commit whatever it wrote (decision 0911)."""
    pool = getattr(adapter, "_connection_pool", None)
    in_transaction = bool(getattr(pool, "is_transaction_active", False))
    if not in_transaction and dialect in SAVEPOINT_DIALECTS:
        with adapter.transaction():
            if getattr(pool, "is_transaction_active", False):
                return _try_fetchone(adapter, sql, dialect, timeout_seconds, read_only)
        # Never run unguarded: the check is an errored result instead.
        return None, f"the {dialect} connection opened no transaction, so the check could not run read-only"
    savepoint = in_transaction and dialect in SAVEPOINT_DIALECTS
    if in_transaction and not savepoint:
        return adapter.fetchone(sql, quote_identifiers=False), None
    if savepoint:
        adapter.execute("SAVEPOINT assay_check")
        if read_only:
            adapter.execute("SET LOCAL transaction_read_only = on")
        if timeout_seconds is not None:
            # 000's time budget; SET LOCAL ends with the savepoint or is reset below.
            adapter.execute(f"SET LOCAL statement_timeout = {int(timeout_seconds) * 1000}")
    try:
        row = adapter.fetchone(sql, quote_identifiers=False)
    except Exception as err:  # noqa: BLE001 - the engine's error is the check's result
        if savepoint:
            adapter.execute("ROLLBACK TO SAVEPOINT assay_check")
        return None, (engine_message(err) or type(err).__name__)
    if savepoint:
        if read_only:
            adapter.execute("ROLLBACK TO SAVEPOINT assay_check")
        adapter.execute("RELEASE SAVEPOINT assay_check")
        if timeout_seconds is not None:
            adapter.execute("SET LOCAL statement_timeout TO DEFAULT")
    return row, None


def _int(value: Any) -> Optional[int]:
    if value is None:
        return None
    return int(Decimal(str(value)))


def declared_measures(check: dict, row: dict) -> dict:
    """The numbers one check reads from the measuring row, as the results table records them:
    counts as integers, values as the warehouse's own text (the dbt target's ``measures``)."""
    m: dict = {}
    for key, column in check["counts"].items():
        m[key] = _int(row[column])
    for key, column in check["texts"].items():
        if isinstance(column, str):
            m[key] = None if row[column] is None else str(row[column])
        else:
            m[key] = [None if row[c] is None else str(row[c]) for c in column]
    return m


def check_spec(check: dict) -> dict:
    """What a result row keeps of the check's definition (decision 0502)."""
    return {
        "columns": check["columns"],
        "types": check["types"],
        "bounds": check["bounds"],
        "domain": check.get("domain"),
        "gap_scale": check.get("gap_scale"),
        "orderable": check.get("orderable"),
    }


def _insert(relation: str, rows: list[tuple], dialect: str) -> exp.Expr:
    values = []
    for r in rows:
        cells = [lit(v, dialect) for v in r]
        cells.append(utc_now_sql(dialect))
        values.append("(" + ", ".join(cells) + ")")
    table = exp.to_table(relation, dialect=dialect).sql(dialect=dialect)
    return parse_one(f"INSERT INTO {table} ({', '.join(RESULT_COLUMNS)}) VALUES " + ", ".join(values), read=dialect)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# --------------------------------------------------------------------------- budgets (000, 0530)

# DuckDB: the width DuckDB keeps per row in its vectors, per column type (as the dbt package's
# _candidate_size: text, blobs and nested values count their 16-byte inline header).
_DUCKDB_SIZE = """
SELECT
  (SELECT COUNT(*) FROM {table}) AS assay_rows,
  COALESCE(SUM(CASE
    WHEN data_type IN ('BOOLEAN', 'TINYINT', 'UTINYINT') THEN 1
    WHEN data_type IN ('SMALLINT', 'USMALLINT') THEN 2
    WHEN data_type IN ('INTEGER', 'UINTEGER', 'FLOAT', 'DATE') THEN 4
    WHEN data_type LIKE 'DECIMAL%' THEN CASE WHEN numeric_precision <= 4 THEN 2 WHEN numeric_precision <= 9 THEN 4
                                             WHEN numeric_precision <= 18 THEN 8 ELSE 16 END
    WHEN data_type IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'TIME') OR data_type LIKE 'TIMESTAMP%' THEN 8
    ELSE 16 END), 0) AS assay_width
FROM duckdb_columns()
WHERE schema_name = {schema} AND table_name = {name}
"""
# PostgreSQL: a sequential scan reads the heap and its TOAST heap, nothing else. The relation is
# always a table here (the models whose checks run are FULL or SCD_TYPE_2; an incremental entity,
# whose dbt candidate is a view with no heap, is refused for SQLMesh), so the dbt package's
# estimate for a view (rows times the planner's width, decision 0530) is not needed.
_POSTGRES_SIZE = """
SELECT (SELECT COUNT(*) FROM {table}) AS assay_rows,
  pg_relation_size(c.oid) + COALESCE(pg_relation_size(NULLIF(c.reltoastrelid, 0)), 0) AS assay_bytes
FROM pg_class AS c WHERE c.oid = CAST({regclass} AS REGCLASS)
"""


def _size(adapter, evaluator, dialect: str) -> tuple[Optional[int], Optional[int]]:
    """(rows, estimated bytes of a scan) of the table just written, bytes None where the engine
    cannot estimate them (no scan budget applies there)."""
    table = evaluator.locals.get("this_model")
    if not isinstance(table, exp.Table):
        return None, None
    text = table.sql(dialect=dialect)
    if dialect == "duckdb":
        rows, width = adapter.fetchone(_DUCKDB_SIZE.format(table=text, schema=lit(table.db, dialect),
                                                           name=lit(table.name, dialect)), quote_identifiers=False)
        return int(rows), int(rows) * int(width)
    if dialect in SAVEPOINT_DIALECTS:
        local = exp.table_(table.name, db=table.db, quoted=True).sql(dialect=dialect)
        rows, size = adapter.fetchone(_POSTGRES_SIZE.format(table=text, regclass=lit(local, dialect)), quote_identifiers=False)
        return int(rows), int(size)
    return None, None


def _over_scan_budget(check: dict, rows: int, estimated: int, ceiling: int) -> dict:
    """000: over the scan budget a row-reading check is not_evaluated (never fails the run);
    row_expectation reads a count, not the rows, and still evaluates."""
    if check["kind"] == "row_expectation":
        return {"rows": rows}
    return {"rows": rows, "not_evaluated": {"code": "CHECK_SCAN_BUDGET_EXCEEDED", "estimated_bytes": estimated,
                                            "ceiling_bytes": ceiling}}


def _over_time_budget(check: dict, rows: int, seconds: int) -> dict:
    if check["kind"] == "row_expectation":
        return {"rows": rows}
    return {"rows": rows, "not_evaluated": {"code": "CHECK_TIME_BUDGET_EXCEEDED", "ceiling_seconds": seconds}}


@macro()
def assay_record_declared_checks(evaluator, table_name, results, checks, measure, scan_budget=None,
                                 time_budget=None, only_if=None, redact=None) -> Optional[exp.Expr]:
    """Measure every declared check of ``table_name`` in one query, decide, and record.

    ``checks`` is the generator's JSON list of descriptors (which columns of the measuring row
    each check reads, its bounds); ``measure`` the measuring query over ``@this_model``;
    ``scan_budget`` (bytes) and ``time_budget`` (seconds) the table's budgets (000): over the
    first, estimated before the pass, the pass does not run; past the second (PostgreSQL's
    statement timeout) it is cancelled; either way the row-reading checks are not_evaluated;
    ``only_if`` a query that must return a row for anything to be recorded (the staged model's
    fallback recorder, decision 0921). A measured check that did not pass keeps the rows its
    descriptor's ``rows_sql`` returns, without the ``redact`` columns (check_rows.py). Returns the
    INSERT of the results, or nothing outside an evaluation:

    >>> from sqlglot import exp
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> lit_ = exp.Literal.string
    >>> assay_record_declared_checks(MacroEvaluator(), lit_("order"), lit_("assay_meta.assay_check_results"),
    ...                              lit_("[]"), exp.select("COUNT(*) AS assay_rows")) is None
    True
    """
    from assay.checks.recorded import verdict_of

    adapter = _adapter(evaluator)
    if adapter is None or not _holds(evaluator, adapter, only_if):
        return None
    d = dialect_of(evaluator)
    descriptors = json.loads(_string(checks))
    relation = _string(results)
    scan = int(_string(scan_budget)) if scan_budget is not None else None
    seconds = int(_string(time_budget)) if time_budget is not None else None
    rows, estimated = _size(adapter, evaluator, d) if scan is not None else (None, None)
    over = None
    row: dict = {}
    error = None
    if estimated is not None and scan is not None and estimated > scan:
        over = lambda check: _over_scan_budget(check, rows, estimated, scan)  # noqa: E731
    else:
        this_sql = _expanded(evaluator, measure, d)
        query = parse_one(this_sql, read=d)
        if any(c["kind"] in RATE_KINDS + HISTORY_KINDS for c in descriptors):
            # A rate threshold counts the staged model by its name (decision 0980): the table this
            # plan wrote for it, not the virtual layer's view, which still shows the previous plan.
            query = evaluator.resolve_tables(query)
        if any(c["kind"] in HISTORY_KINDS for c in descriptors):
            query = _without_missing_history(adapter, query, d)
        timeout = seconds if d in SAVEPOINT_DIALECTS else None
        values, error = _try_fetchone(adapter, query.sql(dialect=d), d, timeout_seconds=timeout)
        if error is not None and "statement timeout" in error and timeout is not None:
            counted, _e = _try_fetchone(adapter, f"SELECT COUNT(*) FROM {evaluator.locals['this_model'].sql(dialect=d)}", d)
            n = int(counted[0]) if counted else 0
            over = lambda check: _over_time_budget(check, n, timeout)  # noqa: E731
            error = None
        elif values is not None:
            row = dict(zip(list(query.named_selects), values))
    # A table the query could not read makes every check an errored result (DECLARED_CHECK_UNREADABLE,
    # decision 0531), its row count unknown and recorded as 0.
    run_id = str(getattr(adapter, "correlation_id", None))
    replace_earlier(adapter, d, relation, run_id, _string(table_name), [c["check_id"] for c in descriptors])
    out = []
    blocked: list[tuple[str, str]] = []
    for check in descriptors:
        if over is not None:
            measures = over(check)
        elif error is not None:
            measures = {"rows": 0, "error": error}
        else:
            measures = declared_measures(check, row)
        spec = check_spec(check)
        verdict = verdict_of(check["kind"], spec, measures)
        out.append((run_id, _string(table_name), check["check_id"], check["position"], check["kind"], check["enforcement"],
                    bool(verdict.passed), measures["rows"], _dumps(spec), _dumps(measures)))
        if check["enforcement"] == "required" and not verdict.passed and "not_evaluated" not in measures:
            blocked.append((check["check_id"], verdict.detail))
        if over is None and error is None and not verdict.passed and check.get("rows_sql"):
            rows_sql = _expanded(evaluator, parse_sqlmesh(check["rows_sql"], dialect=d), d)
            keep_rows(adapter, d, relation, run_id, _string(table_name), check["check_id"], rows_sql, redacted(redact))
    _ensure_results(adapter, relation, d)
    record_blocked_build(evaluator, adapter, d, relation, run_id, _string(table_name), blocked, only_if)
    return _insert(relation, out, d)


def _without_missing_history(adapter, query: exp.Expr, d: str) -> exp.Expr:
    """The measuring query with each history part whose relation does not exist yet (the mart
    and the results table before the first plan wrote them) reading no rows instead."""
    for cte in query.find_all(exp.CTE):
        empty = HISTORY_EMPTY.get(cte.alias)
        table = cte.this.find(exp.Table) if empty else None
        if table is None:
            continue
        name = exp.table_name(table)
        try:
            exists = adapter.table_exists(name)
        except Exception:  # noqa: BLE001 - a lookup that fails is a table we cannot read
            exists = False
        if not exists:
            cte.set("this", parse_one(empty, read="duckdb"))
    return query


@macro()
def assay_record_sql_check(evaluator, table_name, results, check_name, on_failure, position, query,
                           only_if=None, redact=None, keep_found=None, private=None) -> Optional[exp.Expr]:
    """Count the rows one SQL check file returns on the table just written, and record it
    (kind ``sql``; the verdict of ``assay.checks.recorded.verdict_of``); ``only_if`` as for
    ``assay_record_declared_checks``. The rows it returned are kept without the ``redact``
    columns (those its lineage ties to a pii value, decision 0914), and not at all with
    ``keep_found := FALSE`` (its output could not be traced). Nothing outside an evaluation:

    >>> from sqlglot import exp
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> lit_ = exp.Literal.string
    >>> assay_record_sql_check(MacroEvaluator(), lit_("order"), lit_("assay_meta.assay_check_results"),
    ...                        lit_("silver.order/no_refunds"), lit_("block"), exp.Literal.number(1001),
    ...                        exp.select("1")) is None
    True
    """
    from assay.checks.recorded import verdict_of
    from assay.checks.sqlfile import count_sql

    adapter = _adapter(evaluator)
    if adapter is None or not _holds(evaluator, adapter, only_if):
        return None
    d = dialect_of(evaluator)
    relation = _string(results)
    outcome = _string(on_failure)
    check_sql = _expanded(evaluator, query, d, resolve=True)
    try:
        whole_row = row_json_sql("assay_check", [], d)
    except AssayMacroError:  # an engine without a whole-row JSON counts the rows alone
        whole_row = "*"
    counted, error = _try_fetchone(adapter, count_sql(check_sql, whole_row), d, read_only=True)
    spec = {"columns": [], "types": [], "bounds": {"on_failure": outcome}, "domain": None, "gap_scale": None, "orderable": None}
    if error is None:
        n = int(counted[0])
        measures: dict = {"rows": n, "failing_rows": n}
    else:
        # Errored: its row count is unknown, recorded as 0 beside the engine's message (as on dbt).
        from assay.privacy import engine_message as withheld

        n = 0
        measures = {"rows": 0, "failing_rows": None, "error": withheld(error) if _true(private) else error}
    verdict = verdict_of("sql", spec, measures)
    run_id = str(getattr(adapter, "correlation_id", None))
    replace_earlier(adapter, d, relation, run_id, _string(table_name), [_string(check_name)])
    row = (run_id, _string(table_name), _string(check_name), int(_string(position)), "sql", outcome, bool(verdict.passed), n,
           _dumps(spec), _dumps(measures))
    if n > 0 and keeps_rows(keep_found):  # what it returned, also for a check that only warns (as on dbt)
        keep_rows(adapter, d, relation, run_id, _string(table_name), _string(check_name), check_sql, redacted(redact))
    _ensure_results(adapter, relation, d)
    blocked = [(_string(check_name), verdict.detail)] if outcome == "block" and not verdict.passed else []
    record_blocked_build(evaluator, adapter, d, relation, run_id, _string(table_name), blocked, only_if)
    return _insert(relation, [row], d)
