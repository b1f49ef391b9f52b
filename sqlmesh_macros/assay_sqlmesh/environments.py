"""Which SQLMesh environment a run was planned for, recorded at its start (decision 0936).

A model's statements and audits get no ``@this_env`` in SQLMesh 0.236, so the recorders of a
failed build (build_events.py) cannot say whether the build was for prod or for a development
environment; a failing ``sqlmesh plan dev`` then read as a set-back in prod. ``before_all``
statements do get the environment, and run on the same engine adapter, under the same
correlation id (the run id every recorder writes), before any model is evaluated. So the config's
``before_all`` holds ``@assay_record_environment('<meta schema>')``, which appends one
``RUN_ENVIRONMENT`` event per plan or run: its ``run_id``, the environment's name as ``why``.
``assay.runtime.table_states`` reads it to attribute each failed build to its environment.
"""

from __future__ import annotations

import uuid

from sqlglot import exp
from sqlmesh import macro

from ._core import dialect_of, lit, string_arg, type_name
from .temporal import utc_now_sql

#: The event that names a run's environment (read by assay.runtime.table_states).
RUN_ENVIRONMENT = "RUN_ENVIRONMENT"


@macro()
def assay_record_environment(evaluator, meta_schema=None) -> exp.Expr:
    """A ``before_all`` statement: record which environment this plan or run is for.

    ``meta_schema`` is the spec's meta schema (where check results and events land; default
    ``assay_meta``). Rendering without an engine (loading the project) renders ``SELECT 1``.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_record_environment('assay_meta')", "duckdb")
    'SELECT 1'
    """
    from assay.retention import EVENTS_COLUMNS

    from .build_events import EVENTS
    from .checks import ensure_table
    from .model_errors import opened

    adapter = evaluator.locals.get("engine_adapter")
    if adapter is None or "this_env" not in evaluator.locals:
        return exp.select("1")
    d = dialect_of(evaluator)
    schema = string_arg(meta_schema, "the meta schema") if meta_schema is not None else "assay_meta"
    relation = exp.table_(EVENTS, db=schema).sql(dialect=d)
    ensure_table(adapter, relation, d, [c for c, _ in EVENTS_COLUMNS], [t for _, t in EVENTS_COLUMNS])
    run_id = str(getattr(adapter, "correlation_id", None))
    opened(adapter, d, schema)  # a failed plan runs no after_all (decision 1166)
    values = {
        "event_id": lit(str(uuid.uuid4()), d),
        "event_type": lit(RUN_ENVIRONMENT, d),
        "run_id": lit(run_id, d),
        "why": lit(str(evaluator.this_env), d),
        "occurred_at": utc_now_sql(d),
    }
    columns = ", ".join(values)
    return exp.maybe_parse(f"INSERT INTO {relation} ({columns}) VALUES ({', '.join(values.values())})", dialect=d)
