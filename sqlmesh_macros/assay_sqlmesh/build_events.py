"""What a SQLMesh build that failed a blocking check records in ``<meta>.assay_events`` (decision 0932).

dbt's ``assay_entity`` sets a failing build back itself and says so: one CHECK_FAILED event per
failing check and one TABLE_ROLLED_BACK. On SQLMesh the engine, not assay, decides what readers
see, and the recorder cannot know which environment the build is for (SQLMesh 0.236 passes no
``@this_env`` to a model's statements or audits). So the recorders record the fact they do know,
and ``assay.runtime.table_states`` decides the state against the environment it reads:

- one ``CHECK_FAILED`` per blocking check that did not pass (a ``required`` declared check, a
  ``block`` SQL check file; one over its budget is not_evaluated and blocks nothing), the check's
  sentence as ``why``, as on dbt;
- once per build of the table (the first recorder of the run that has a failure), one
  ``TABLE_BUILD_FAILED`` naming the first failing check, whose ``why`` is the physical table the
  build wrote (``wrote sqlmesh__silver.silver__order__1234``), or ``not_written`` when the
  staged model's recorder found the repeated key that stops the run before the entity is written
  (decision 0921); then a ``CHECK_FAILED`` for ``KEY_UNIQUE`` (the key audit, named as dbt names
  it) comes first, with the number of repeated keys;
- ``@assay_record_failed_rules``, the staged model's first post-statement, records a build its
  blocking `fail` rule audits are about to stop (a staged row of this build whose
  ``_failed_rules`` names the rule, the audit's own condition): one ``CHECK_FAILED`` per rule
  that fired, named by the rule (``3 rows failed rule site_not_null (on_fail: fail)``, the
  count as ``row_count``), and ``TABLE_BUILD_FAILED`` ``not_written`` naming the first of them.
  The key recorders that follow add ``KEY_UNIQUE`` when the key repeats too.

An environment whose view selects from the table the build wrote shows its rows: the build was
evaluated in place, and its failing rows are published. Any other view still shows an earlier
version: the build was set back there (or the table was never published).
"""

from __future__ import annotations

import uuid
from typing import Any, Optional

from sqlglot import exp
from sqlmesh import macro

from ._core import dialect_of, lit, pick, string_arg, text, type_name
from .temporal import utc_now_sql

#: The event of a SQLMesh build that failed a blocking check (read by assay.runtime.table_states).
BUILD_FAILED = "TABLE_BUILD_FAILED"
#: Its `why` when the entity was not written (the staged model's key audit stops the run first).
NOT_WRITTEN = "not_written"
#: Its `why` prefix before the physical table the build wrote.
WROTE = "wrote "
#: The key audit's name in events (dbt's `assay_entity` names it so).
KEY_UNIQUE = "KEY_UNIQUE"
EVENTS = "assay_events"
CHECK_FAILED = "CHECK_FAILED"
#: The ingestion-metadata audit's name in events, on both targets (assay.lower.audits.INGESTION_CHECK;
#: decision 0935).
INGESTION_CHECK = "INGESTION_METADATA"


def record_blocked_build(evaluator, adapter, dialect: str, results: str, run_id: str, table: str,
                         failures: list[tuple[str, str]], only_if: Any = None) -> None:
    """Append the events of one recorder's blocking failures (see the module docstring).

    `failures` are (check, sentence) of the checks this recorder decided; `only_if` is the staged
    model's condition (decision 0921): a recorder that has one and runs at all records for a
    build the key audit is about to stop, so that build failed even when every check passed."""
    stopped = only_if is not None
    if not failures and not stopped:
        return
    from .checks import _found

    relation = _events_table(adapter, dialect, results)
    first = not _recorded(adapter, relation, dialect, run_id, table)
    rows: list[tuple[str, Optional[str], Optional[str], Optional[int]]] = []
    # the key repeats: recorded by the first key recorder, also after the fail rules' recorder
    if stopped and not _recorded(adapter, relation, dialect, run_id, table, CHECK_FAILED, KEY_UNIQUE):
        n = _found(evaluator, adapter, only_if)
        rows.append((CHECK_FAILED, KEY_UNIQUE, f"{n} violating {'row' if n == 1 else 'rows'}", n))
    rows += [(CHECK_FAILED, check, why, None) for check, why in failures]
    if first and rows:
        written = NOT_WRITTEN if stopped else _written(evaluator, dialect)
        rows.append((BUILD_FAILED, rows[0][1], written, None))
    _insert(adapter, relation, dialect, run_id, table, rows)


@macro()
def assay_record_failed_rules(evaluator, table_name, results, rules, flags_column=None) -> None:
    """Record a build of ``table_name`` that the staged model's `fail` rule audits are about to
    stop (see the module docstring): ``rules`` are the rules those audits judge, in their order
    (the generator's one list, assay.lower.audits.staged_audits), ``flags_column`` the staged
    column naming the rules a row broke (``_failed_rules``), read in one pass over
    ``@this_model`` with the audit's own condition. Executes its insert itself and returns
    nothing, also outside an evaluation:

    >>> from sqlglot import exp
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> lit_ = exp.Literal.string
    >>> assay_record_failed_rules(MacroEvaluator(), lit_("order"), lit_("assay_meta.assay_check_results"),
    ...                           exp.Tuple(expressions=[lit_("amount_not_null")])) is None
    True
    """
    from .audits import items
    from .checks import _adapter
    from .flags import FLAGS_CONTAIN

    adapter = _adapter(evaluator)
    this = evaluator.locals.get("this_model")
    names = [string_arg(r, "a rule name") for r in items(rules)]
    if adapter is None or this is None or not names:
        return None
    d = dialect_of(evaluator)
    flags = text(flags_column, d) if flags_column is not None else "_failed_rules"
    template = pick(FLAGS_CONTAIN, d)
    counts = ", ".join(
        f"COUNT(CASE WHEN {template.format(f=flags, r=lit(name, d), delimited=lit(f',{name},', d))} THEN 1 END)"
        for name in names)
    found = adapter.fetchone(f"SELECT {counts} FROM {this.sql(dialect=d)}", quote_identifiers=False) or ()
    fired = [(name, int(n)) for name, n in zip(names, found) if n]
    if not fired:
        return None
    _record_stop(adapter, d, table_name, results,
                 [(name, f"{n} {'row' if n == 1 else 'rows'} failed rule {name} (on_fail: fail)", n) for name, n in fired],
                 fired[0][0], NOT_WRITTEN)
    return None


@macro()
def assay_record_ingestion_stop(evaluator, table_name, results, source, ranked_mappings=None) -> None:
    """Record a build of ``table_name`` that the staged model's ingestion-metadata audit of the
    bronze relation ``source`` is about to stop (decision 0935): it counts the audit's own rows
    (``@assay_ingestion_metadata_violations(source, @this_model, ranked_mappings)``) and, when
    there are any, records ``CHECK_FAILED`` ``INGESTION_METADATA`` (``<n> violating rows``, n as
    ``row_count``) and, once per build, ``TABLE_BUILD_FAILED`` ``not_written`` naming it. It runs
    before the fail rules' recorder, as the audit runs before theirs, so the failed build names
    it first. Executes its insert itself and returns nothing, also outside an evaluation:

    >>> from sqlglot import exp
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> assay_record_ingestion_stop(MacroEvaluator(), exp.Literal.string("order"),
    ...     exp.Literal.string("assay_meta.assay_check_results"), exp.to_table("bronze.raw_orders")) is None
    True
    """
    from .audits import assay_ingestion_metadata_violations
    from .checks import _adapter

    adapter = _adapter(evaluator)
    this = evaluator.locals.get("this_model")
    if adapter is None or this is None:
        return None
    d = dialect_of(evaluator)
    ranked = this if ranked_mappings is not None and not isinstance(ranked_mappings, exp.Null) else None
    violations = assay_ingestion_metadata_violations(evaluator, source, ranked, ranked_mappings)
    sql = violations.sql(dialect=d) if hasattr(violations, "sql") else str(violations)
    found = adapter.fetchone(f"SELECT COUNT(*) FROM ({sql}) AS assay_ingestion", quote_identifiers=False) or (0,)
    n = int(found[0] or 0)
    if not n:
        return None
    _record_stop(adapter, d, table_name, results, [(INGESTION_CHECK, f"{n} violating {'row' if n == 1 else 'rows'}", n)],
                 INGESTION_CHECK, NOT_WRITTEN)
    return None


@macro()
def assay_record_key_stop(evaluator, table_name, results, repeated) -> None:
    """Record a build of ``table_name`` that the staged model's key audit is about to stop, for an
    entity with no checks of its own to record it (an entity with checks records it through their
    recorders, decision 0921): it counts ``repeated`` (the audit's own query over the rows about to
    be kept) and, when it returns rows, records ``CHECK_FAILED`` ``KEY_UNIQUE`` (``<n> violating
    rows``) and, once per build, ``TABLE_BUILD_FAILED`` ``not_written``, as dbt records the set-back.
    Without it such a run recorded nothing: `assay checks` passed, `table list` left the entity out
    and the report said every entity was healthy (an outside tester, session 44). Executes its
    insert itself and returns nothing, also outside an evaluation:

    >>> from sqlglot import exp, parse_one
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> assay_record_key_stop(MacroEvaluator(), exp.Literal.string("order"),
    ...     exp.Literal.string("assay_meta.assay_check_results"), parse_one("select 1 as x")) is None
    True
    """
    from .checks import _adapter, _found

    adapter = _adapter(evaluator)
    if adapter is None or evaluator.locals.get("this_model") is None:
        return None
    d = dialect_of(evaluator)
    n = _found(evaluator, adapter, repeated)
    if not n:
        return None
    _record_stop(adapter, d, table_name, results, [(KEY_UNIQUE, f"{n} violating {'row' if n == 1 else 'rows'}", n)],
                 KEY_UNIQUE, NOT_WRITTEN)
    return None


#: The conservation audit's name in events (dbt's `assay_entity` names an entity audit's failure
#: so; assay.lower.audits.CONSERVATION_CHECK, decision 0939).
CONSERVATION_CHECK = "CONSERVATION"


class AssayConservationError(RuntimeError):
    """A development plan's preview broke the conservation law (decision 0939): raised where
    SQLMesh would make the `assay_conservation` audit non-blocking."""


@macro()
def assay_record_conservation_stop(evaluator, table_name, results, violations) -> None:
    """Record a build of ``table_name`` that the conservation audit of the model evaluated with the
    entity is about to stop (decision 0939): it runs the audit's own query (``violations``, the
    lowered law over ``@this_model`` and the reject rows this evaluation wrote) and, when it
    returns rows, records ``CHECK_FAILED`` ``CONSERVATION`` (the counts as ``why``) and, once per
    build, ``TABLE_BUILD_FAILED`` naming the physical table written.

    Where SQLMesh makes every audit of the model non-blocking (a development table that is not
    deployable on an engine that cannot clone tables: SQLMesh assumes such a preview holds only
    part of the data; an assay entity and its reject table are computed from all of bronze, so
    the law holds there too), it then raises, so that the plan stops as the audit stops it
    everywhere else. Executes its insert itself and returns nothing, also outside an evaluation:

    >>> from sqlglot import exp, parse_one
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> assay_record_conservation_stop(MacroEvaluator(), exp.Literal.string("order"),
    ...     exp.Literal.string("assay_meta.assay_check_results"), parse_one("select 1 as x")) is None
    True
    """
    from .checks import _adapter, _expanded

    adapter = _adapter(evaluator)
    this = evaluator.locals.get("this_model")
    if adapter is None or this is None:
        return None
    d = dialect_of(evaluator)
    query = _expanded(evaluator, violations, d)
    try:
        query = evaluator.resolve_tables(exp.maybe_parse(query, dialect=d)).sql(dialect=d)
    except Exception:  # noqa: BLE001 - outside a plan the names are the tables already
        pass
    found = adapter.fetchall(f"SELECT * FROM ({query}) AS assay_conservation", quote_identifiers=False) or []
    if not found:
        return None
    names = [c[0] for c in (getattr(adapter.cursor, "description", None) or [])]
    if len(found) == 1 and len(names) == len(found[0]):
        why = "does not hold: " + ", ".join(f"{n} {v}" for n, v in zip(names, found[0]))
    else:
        why = f"{len(found)} misplaced deliveries"
    table = _record_stop(adapter, d, table_name, results, [(CONSERVATION_CHECK, why, len(found))],
                         CONSERVATION_CHECK, _written(evaluator, d))
    if _audits_made_non_blocking(evaluator, adapter, this):
        raise AssayConservationError(
            f"assay_conservation: the conservation law {why} for {table} in {this.sql(dialect=d)}; every bronze row "
            "must be in the entity, an open reject row or the dedupe count. SQLMesh runs the audits of this "
            "development table as non-blocking, so assay stops the plan here (decision 0939).")
    return None


def _audits_made_non_blocking(evaluator, adapter, this) -> bool:
    """Whether SQLMesh 0.236 runs this evaluation's audits as non-blocking: the table written is
    not the snapshot's deployable table (a development preview) and the engine cannot clone
    (`SnapshotEvaluator.audit`, `force_non_blocking`)."""
    snapshot = evaluator.locals.get("snapshot")
    if snapshot is None or getattr(adapter, "SUPPORTS_CLONING", False):
        return False
    try:
        deployable = exp.to_table(snapshot.table_name(is_deployable=True))
    except Exception:  # noqa: BLE001 - a snapshot without a table: nothing to judge
        return False
    return (this.db, this.name) != (deployable.db, deployable.name)


def _events_table(adapter, dialect: str, results: str) -> str:
    """``<meta>.assay_events`` beside the results table, created when missing."""
    from assay.retention import EVENTS_COLUMNS

    from .checks import ensure_table

    results_table = exp.to_table(results, dialect=dialect)
    events = exp.table_(EVENTS, db=results_table.db or None, catalog=results_table.catalog or None)
    relation = events.sql(dialect=dialect)
    ensure_table(adapter, relation, dialect, [c for c, _ in EVENTS_COLUMNS], [t for _, t in EVENTS_COLUMNS])
    return relation


def _record_stop(adapter, dialect: str, table_name, results, failed: list[tuple[str, str, Optional[int]]],
                 build_check: str, build_why: str) -> str:
    """Record a stop of this run's build of ``table_name``: a CHECK_FAILED for each ``(check, why,
    count)`` of ``failed`` the run has not recorded for the table yet, and, once per build, the
    TABLE_BUILD_FAILED naming ``build_check`` with ``build_why``. Returns the table's name."""
    run_id = str(getattr(adapter, "correlation_id", None))
    table = string_arg(table_name, "the table name")
    relation = _events_table(adapter, dialect, string_arg(results, "the results table"))
    rows: list[tuple[str, Optional[str], Optional[str], Optional[int]]] = [
        (CHECK_FAILED, check, why, n) for check, why, n in failed
        if not _recorded(adapter, relation, dialect, run_id, table, CHECK_FAILED, check)]
    if not _recorded(adapter, relation, dialect, run_id, table):
        rows.append((BUILD_FAILED, build_check, build_why, None))
    _insert(adapter, relation, dialect, run_id, table, rows)
    return table


def _insert(adapter, relation: str, dialect: str, run_id: str, table: str,
            rows: list[tuple[str, Optional[str], Optional[str], Optional[int]]]) -> None:
    """Append (event, check, why, row_count) rows of one build; nothing for none (a later recorder
    of a build already recorded as stopped, with no failure of its own: an empty VALUES fails)."""
    from assay.retention import EVENTS_COLUMNS

    if not rows:
        return
    now = utc_now_sql(dialect)
    values = ", ".join(
        "(" + ", ".join([lit(str(uuid.uuid4()), dialect), lit(kind, dialect), lit(run_id, dialect), lit(table, dialect),
                         lit(check, dialect), lit(why, dialect),
                         f"CAST({lit(count, dialect)} AS {type_name('int', dialect)})",
                         f"CAST(NULL AS {type_name('timestamp', dialect)})", now]) + ")"
        for kind, check, why, count in rows)
    adapter.execute(f"INSERT INTO {relation} ({', '.join(c for c, _ in EVENTS_COLUMNS)}) VALUES {values}",
                    quote_identifiers=False)


def _recorded(adapter, relation: str, dialect: str, run_id: str, table: str, event: str = BUILD_FAILED,
              check: Optional[str] = None) -> bool:
    """Whether an earlier recorder of this build already recorded that it failed (`event`), or
    that `check` failed."""
    named = "" if check is None else f" AND check_name = {lit(check, dialect)}"
    found = adapter.fetchone(
        f"SELECT COUNT(*) FROM {relation} WHERE event_type = {lit(event, dialect)} "
        f"AND run_id = {lit(run_id, dialect)} AND table_name = {lit(table, dialect)}{named}",
        quote_identifiers=False,
    )
    return bool(found and int(found[0]))


def _written(evaluator, dialect: str) -> str:
    """`wrote <schema>.<table>`: the physical table SQLMesh just wrote (`@this_model`)."""
    this = evaluator.locals.get("this_model")
    if not isinstance(this, exp.Table):
        return NOT_WRITTEN
    return f"{WROTE}{this.db}.{this.name}"
