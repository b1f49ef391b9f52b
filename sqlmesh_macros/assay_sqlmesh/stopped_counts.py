"""The quality history of a build the staged model's key audit or a `fail` rule stops (decisions
1143, 1162).

On SQLMesh an entity's mart part reads its staged model, and SQLMesh evaluates nothing below a
failed audit: when the staged model's key audit (a repeated key among the rows about to be kept,
decision 0921) or a `fail` rule's audit stops the plan or run, the part records nothing. dbt
judges the same key on the entity's candidate, after its staged table was built, and records the
run's counts (0413, 0942); its on-run-end hook records an entity a `fail` rule stopped (1162).

So the staged model's last post-statement, ``@assay_record_stopped_counts``, which SQLMesh runs
before the model's audits, writes the entity's mart rows of this build (the mart part's own query,
over ``@this_model``) into a plain table, ``<meta>.assay_stopped_counts``, which the
``gold.mart_data_quality`` view reads beside the parts. It writes only when the build is about to
stop on a recording audit (``only_if``: the query of the key audit or of a `fail` rule's audit
returns a row; ``unless``: the query of the stop that records nothing, the ingestion metadata,
returns none; which stop records is decided once, ``assay.lower.mart.counts_recorded_when_stopped``),
so a build no audit stops records through its part exactly as before, never twice.

The view's pre-statement ``@assay_mart_table`` creates the table where it is missing: a view
over a table that does not exist cannot be created (DuckDB, PostgreSQL), and SQLMesh runs a
model's pre-statements before it creates the model's physical view.
"""

from __future__ import annotations

from sqlglot import exp
from sqlmesh import macro

from ._core import dialect_of, lit, string_arg, type_name


def _columns() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from assay.lower.mart import COLUMN_TYPES, COLUMNS

    return COLUMNS, COLUMN_TYPES


@macro()
def assay_mart_table(evaluator, relation) -> exp.Expr:
    """``CREATE TABLE IF NOT EXISTS`` of a table holding mart rows (``relation``, a name as a
    string), its columns those of the mart (``assay.lower.mart.COLUMNS``), typed for the engine as
    the mart's query casts them. A pre-statement of the mart's view.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_mart_table('assay_meta.assay_stopped_counts')", "duckdb")[:90]
    'CREATE TABLE IF NOT EXISTS assay_meta.assay_stopped_counts (entity TEXT, mapping TEXT, rul'
    """
    d = dialect_of(evaluator)
    table = exp.to_table(string_arg(relation, "the table name"), dialect=d)
    columns, types = _columns()
    cols = ", ".join(f"{c} {type_name(t, d)}" for c, t in zip(columns, types))
    return exp.maybe_parse(f"CREATE TABLE IF NOT EXISTS {table.sql(dialect=d)} ({cols})", dialect=d)


@macro()
def assay_record_stopped_counts(evaluator, table_name, counts, only_if, rows, unless=None) -> None:
    """Append the mart rows ``rows`` (a query over ``@this_model``) of the entity ``table_name``
    to the table ``counts`` when a recording audit of the staged model (the key, a `fail` rule) is
    about to stop this build and no other (see the module docstring): ``only_if`` returns a row
    and ``unless`` (optional) none. Nothing
    when SQLMesh runs this evaluation's audits as non-blocking (a development preview on an
    engine that cannot clone: the part then records), nor when this run already recorded the
    entity there. Executes its insert itself and returns nothing, also outside an evaluation:

    >>> from sqlglot import exp, parse_one
    >>> from sqlmesh.core.macros import MacroEvaluator
    >>> assay_record_stopped_counts(MacroEvaluator(), exp.Literal.string("order"),
    ...     exp.Literal.string("assay_meta.assay_stopped_counts"), parse_one("select 1"), parse_one("select 1")) is None
    True
    """
    from .build_events import _audits_made_non_blocking
    from .checks import _adapter, _expanded, _found, ensure_table

    adapter = _adapter(evaluator)
    this = evaluator.locals.get("this_model")
    if adapter is None or this is None:
        return None
    # the recording stops' queries first: a build none of them stops (nearly every build) pays this one query
    if not _found(evaluator, adapter, only_if):
        return None
    if unless is not None and not isinstance(unless, exp.Null) and _found(evaluator, adapter, unless):
        return None
    if _audits_made_non_blocking(evaluator, adapter, this):
        return None
    d = dialect_of(evaluator)
    entity = string_arg(table_name, "the table name")
    relation = exp.to_table(string_arg(counts, "the counts table"), dialect=d).sql(dialect=d)
    columns, types = _columns()
    ensure_table(adapter, relation, d, columns, types)
    run_id = str(getattr(adapter, "correlation_id", None))
    done = adapter.fetchone(f"SELECT COUNT(*) FROM {relation} WHERE run_id = {lit(run_id, d)} "
                            f"AND entity = {lit(entity, d)}", quote_identifiers=False)
    if done and int(done[0] or 0):
        return None
    names = ", ".join(columns)
    adapter.execute(f"INSERT INTO {relation} ({names}) SELECT {names} FROM ({_expanded(evaluator, rows, d)}) "
                    "AS assay_counts", quote_identifiers=False)
    return None
