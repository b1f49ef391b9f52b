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
  it) comes first, with the number of repeated keys.

An environment whose view selects from the table the build wrote shows its rows: the build was
evaluated in place, and its failing rows are published. Any other view still shows an earlier
version: the build was set back there (or the table was never published).
"""

from __future__ import annotations

import uuid
from typing import Any, Optional

from sqlglot import exp

from ._core import lit, type_name

#: The event of a SQLMesh build that failed a blocking check (read by assay.runtime.table_states).
BUILD_FAILED = "TABLE_BUILD_FAILED"
#: Its `why` when the entity was not written (the staged model's key audit stops the run first).
NOT_WRITTEN = "not_written"
#: Its `why` prefix before the physical table the build wrote.
WROTE = "wrote "
#: The key audit's name in events (dbt's `assay_entity` names it so).
KEY_UNIQUE = "KEY_UNIQUE"
EVENTS = "assay_events"


def record_blocked_build(evaluator, adapter, dialect: str, results: str, run_id: str, table: str,
                         failures: list[tuple[str, str]], only_if: Any = None) -> None:
    """Append the events of one recorder's blocking failures (see the module docstring).

    `failures` are (check, sentence) of the checks this recorder decided; `only_if` is the staged
    model's condition (decision 0921): a recorder that has one and runs at all records for a
    build the key audit is about to stop, so that build failed even when every check passed."""
    stopped = only_if is not None
    if not failures and not stopped:
        return
    from assay.retention import EVENTS_COLUMNS

    from .checks import _found, ensure_table

    results_table = exp.to_table(results, dialect=dialect)
    events = exp.table_(EVENTS, db=results_table.db or None, catalog=results_table.catalog or None)
    relation = events.sql(dialect=dialect)
    ensure_table(adapter, relation, dialect, [c for c, _ in EVENTS_COLUMNS], [t for _, t in EVENTS_COLUMNS])
    first = not _recorded(adapter, relation, dialect, run_id, table)
    rows: list[tuple[str, Optional[str], Optional[str], Optional[int]]] = []
    if stopped and first:
        n = _found(evaluator, adapter, only_if)
        rows.append(("CHECK_FAILED", KEY_UNIQUE, f"{n} violating {'row' if n == 1 else 'rows'}", n))
    rows += [("CHECK_FAILED", check, why, None) for check, why in failures]
    if first:
        written = NOT_WRITTEN if stopped else _written(evaluator, dialect)
        rows.append((BUILD_FAILED, rows[0][1], written, None))
    if not rows:  # a later recorder of a build already recorded as stopped, with no failure of its own
        return
    now = f"CAST(CURRENT_TIMESTAMP AS {type_name('timestamp', dialect)})"
    values = ", ".join(
        "(" + ", ".join([lit(str(uuid.uuid4()), dialect), lit(kind, dialect), lit(run_id, dialect), lit(table, dialect),
                         lit(check, dialect), lit(why, dialect),
                         f"CAST({lit(count, dialect)} AS {type_name('int', dialect)})",
                         f"CAST(NULL AS {type_name('timestamp', dialect)})", now]) + ")"
        for kind, check, why, count in rows)
    adapter.execute(f"INSERT INTO {relation} ({', '.join(c for c, _ in EVENTS_COLUMNS)}) VALUES {values}",
                    quote_identifiers=False)


def _recorded(adapter, relation: str, dialect: str, run_id: str, table: str) -> bool:
    """Whether an earlier recorder of this build already recorded that it failed."""
    found = adapter.fetchone(
        f"SELECT COUNT(*) FROM {relation} WHERE event_type = {lit(BUILD_FAILED, dialect)} "
        f"AND run_id = {lit(run_id, dialect)} AND table_name = {lit(table, dialect)}",
        quote_identifiers=False,
    )
    return bool(found and int(found[0]))


def _written(evaluator, dialect: str) -> str:
    """`wrote <schema>.<table>`: the physical table SQLMesh just wrote (`@this_model`)."""
    this = evaluator.locals.get("this_model")
    if not isinstance(this, exp.Table):
        return NOT_WRITTEN
    return f"{WROTE}{this.db}.{this.name}"
