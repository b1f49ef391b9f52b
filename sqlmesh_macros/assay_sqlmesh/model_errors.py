"""An entity's model whose SQL errors is recorded as a failed build (decision 1164).

Every other stop of a SQLMesh build is an audit, and assay's recorders run just before it. A
model whose own SQL fails (bronze lost a column the mapping reads, a type the engine refuses)
runs no statement after the failing one, and SQLMesh rolls the model's transaction back, so
nothing inside the model can record it; dbt's on-run-end hook records the same failure as
``TABLE_BUILD_FAILED`` ``node_errored: <model>`` (decision 0940).

SQLMesh runs the config's ``after_all`` statements in a ``finally`` once the plan or run has
evaluated what it could, failed or not, in the same process, under the same correlation id (the
run id every recorder writes). So:

- each model of an entity that is its own build (the staged, reject and entity models; a type-2
  entity's ``__current``) opens with ``@assay_model_begins('<table>', '<model>')`` and closes,
  after its last post-statement, with ``@assay_model_ends('<model>')``: both only count, in this
  process, per run id (nothing is written: a model that succeeds costs no query);
- ``@assay_record_errored_models('<meta schema>')`` in the config's ``after_all`` appends, for
  each table one of whose models began more often than it ended in this run, one
  ``TABLE_BUILD_FAILED`` with no check and why ``node_errored: <model>`` (the first such model
  in the order the entity's models run), unless a recorder already recorded a failed build of the
  table in this run (an audit's stop comes first). ``assay.runtime.table_states`` reads it as it
  reads dbt's.

A failed ``sqlmesh plan`` runs no ``after_all`` statement (its stages stop at the failed backfill).
Its ``before_all`` did run: ``@assay_record_environment`` hands this module the plan's engine
adapter and meta schema (``opened``). What the plan left unrecorded is recorded by the next
``before_all`` in the same process (a Python runner's next plan) or, at the latest, when the
process exits (``sqlmesh plan`` on the command line), on the plan's own adapter, under its own run id
(decision 1166).
"""

from __future__ import annotations

import atexit
import sys
import threading
from typing import Optional

from sqlglot import exp
from sqlmesh import macro

from ._core import dialect_of, string_arg

#: {run id: {model: [table, began, ended, order of the first begin]}} of this process's runs.
_MODELS: dict[str, dict[str, list]] = {}
#: {run id: (engine adapter, dialect, meta schema)} of this process's plans and runs whose
#: ``before_all`` ran and whose ``after_all`` has not (yet).
_OPEN: dict[str, tuple] = {}
_LOCK = threading.Lock()
_AT_EXIT: list[bool] = []


def _run_id(evaluator) -> Optional[str]:
    """The correlation id of the plan or run evaluating (``SQLMESH_PLAN: ...``); None when nothing
    runs (loading the project, rendering)."""
    adapter = getattr(evaluator, "locals", {}).get("engine_adapter")
    correlation = getattr(adapter, "correlation_id", None)
    return None if correlation is None else str(correlation)


def _count(evaluator, model: str, table: Optional[str], began: int, ended: int) -> None:
    run = _run_id(evaluator)
    if run is None:
        return
    with _LOCK:
        seen = _MODELS.setdefault(run, {})
        entry = seen.setdefault(model, [table, 0, 0, len(seen)])
        if table is not None:
            entry[0] = table
        entry[1] += began
        entry[2] += ended


@macro()
def assay_model_begins(evaluator, table_name, model_name) -> None:
    """A pre-statement: this run starts writing ``model_name``, one of ``table_name``'s own models.
    Counts in this process only; renders no statement.

    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> lit_ = exp.Literal.string
    >>> assay_model_begins(MacroEvaluator(), lit_("order"), lit_("order__staged")) is None
    True
    """
    _count(evaluator, string_arg(model_name, "the model name"), string_arg(table_name, "the table name"), 1, 0)
    return None


@macro()
def assay_model_ends(evaluator, model_name) -> None:
    """The last post-statement: this run wrote ``model_name`` (its audits run after it).

    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> assay_model_ends(MacroEvaluator(), exp.Literal.string("order__staged")) is None
    True
    """
    _count(evaluator, string_arg(model_name, "the model name"), None, 0, 1)
    return None


def errored(run_id: str) -> list[tuple[str, str]]:
    """(table, model) of each table whose model began in ``run_id`` more often than it ended, the
    first such model of the table in the order they began; forgets the run."""
    with _LOCK:
        seen = _MODELS.pop(run_id, {})
    found: dict[str, tuple[int, str]] = {}
    for model, (table, began, ended, order) in seen.items():
        if table is not None and began > ended and (table not in found or order < found[table][0]):
            found[table] = (order, model)
    return sorted((table, model) for table, (_order, model) in found.items())


def _record(adapter, dialect: str, schema: str, run: str, failed: list[tuple[str, str]]) -> None:
    """Record on ``adapter`` each (table, model) of ``failed``, the models of run ``run`` that errored
    (``errored``), unless a recorder already recorded the table's failed build in the run."""
    from .build_events import BUILD_FAILED, _events_table, _insert, _recorded

    if not failed:
        return
    relation = _events_table(adapter, dialect, f"{schema}.assay_check_results")
    for table, model in failed:
        if not _recorded(adapter, relation, dialect, run, table):
            _insert(adapter, relation, dialect, run, table, [(BUILD_FAILED, None, f"node_errored: {model}", None)])


def opened(adapter, dialect: str, schema: str) -> None:
    """A plan or run of this process began (its ``before_all``): remember its adapter and meta
    schema, and record what an earlier one that never reached its ``after_all`` (a failed plan)
    left, on that one's own adapter (a process may plan several projects)."""
    run = str(getattr(adapter, "correlation_id", None))
    with _LOCK:
        earlier = [(r, o) for r, o in _OPEN.items() if r != run]
        for r, _ in earlier:
            del _OPEN[r]
        _OPEN[run] = (adapter, dialect, schema)
        if not _AT_EXIT:
            _AT_EXIT.append(True)
            atexit.register(_record_unfinished)
    for r, opening in earlier:
        _record_left(r, *opening)


def _record_unfinished() -> None:
    """At the process's exit: record what its plans that never reached ``after_all`` left."""
    with _LOCK:
        unfinished = list(_OPEN.items())
        _OPEN.clear()
    for run, opening in unfinished:
        _record_left(run, *opening)


def _record_left(run: str, adapter, dialect: str, schema: str) -> None:
    """Record the errored models of ``run``, whose ``after_all`` never ran. Nothing SQLMesh runs
    waits on it (the next plan, the process's exit), so a failure to write is said on stderr
    and stops nothing."""
    failed = errored(run)
    try:
        _record(adapter, dialect, schema, run, failed)
    except Exception as e:  # noqa: BLE001 - say why it was not recorded; never fail the next plan
        print(f"assay: could not record that {', '.join(m for _t, m in failed)} of {run} errored: {e}",
              file=sys.stderr)


@macro()
def assay_record_errored_models(evaluator, meta_schema=None) -> exp.Expr:
    """An ``after_all`` statement: record each table of this run whose own model errored (see the
    module docstring). Renders ``SELECT 1`` when there is nothing to record.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_record_errored_models('assay_meta')", "duckdb")
    'SELECT 1'
    """
    run = _run_id(evaluator)
    if run is None:
        return exp.select("1")
    with _LOCK:
        _OPEN.pop(run, None)
    schema = string_arg(meta_schema, "the meta schema") if meta_schema is not None else "assay_meta"
    _record(evaluator.locals["engine_adapter"], dialect_of(evaluator), schema, run, errored(run))
    return exp.select("1")
