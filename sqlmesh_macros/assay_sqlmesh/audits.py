"""Audit queries: each returns the violating rows, so an AUDIT body is one call of these macros.

A generated project defines its audits (`audits/assay.sql`) as thin AUDIT blocks over these
macros; the model decides blocking or not. Relations arrive as table references and are
resolved to physical tables by SQLMesh like any reference in an audit body (the pinned version
resolves references to the audited model's parents, which is why models declare them in
`depends_on`).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp
from sqlmesh import macro

from ._core import AssayMacroError, as_text, column_sql, dialect_of, lit, pick, render, string_arg, text, type_name
from .temporal import parse_ts_sql
from .flags import FLAGS_CONTAIN


def items(arg: Any) -> list:
    """A list argument written as a tuple, an array, or one parenthesised item."""
    if arg is None or (isinstance(arg, exp.Null)):
        return []
    if isinstance(arg, (list, tuple)):
        return list(arg)
    if isinstance(arg, exp.Paren):
        return [arg.this]
    if isinstance(arg, exp.Array):
        return list(arg.expressions)
    if isinstance(arg, exp.Tuple):
        inner = arg.expressions
        if inner and all(isinstance(e, (exp.Tuple, exp.Paren)) for e in inner):
            return [e.this if isinstance(e, exp.Paren) else e for e in inner]
        if inner and all(isinstance(e, (exp.Column, exp.Literal, exp.Identifier)) for e in inner):
            return list(inner)
        return [arg]
    return [arg]


def names(arg: Any, what: str) -> list[str]:
    """Column names given as identifiers or string literals."""
    out = []
    for e in items(arg):
        if isinstance(e, exp.Column) and not e.table:
            out.append(e.name)
        elif isinstance(e, exp.Identifier):
            out.append(e.name)
        else:
            out.append(string_arg(e, what))
    return out


def columns_sql(arg: Any, what: str, dialect: str) -> list[str]:
    """Column identifiers as SQL: an identifier keeps the quoting it was written with (the
    generator quotes key words), a string literal is quoted where it needs it."""
    out = []
    for e in items(arg):
        if isinstance(e, exp.Column) and not e.table:
            ident_ = e.this
            out.append(ident_.sql(dialect=dialect) if ident_.quoted else column_sql(ident_.name, dialect))
        elif isinstance(e, exp.Identifier):
            out.append(e.sql(dialect=dialect) if e.quoted else column_sql(e.name, dialect))
        else:
            out.append(column_sql(string_arg(e, what), dialect))
    return out


def relation(arg: Any, dialect: str) -> str:
    """A table reference as SQL text (a model name parses as a column in a macro argument)."""
    if isinstance(arg, exp.Column):
        return exp.Table(this=arg.args["this"], db=arg.args.get("table"), catalog=arg.args.get("db")).sql(dialect=dialect)
    if isinstance(arg, exp.Literal) and arg.is_string:
        return exp.to_table(arg.this, dialect=dialect).sql(dialect=dialect)
    return text(arg, dialect)


ident = column_sql


def _flag(arg: Any) -> bool:
    if isinstance(arg, bool):
        return arg
    if isinstance(arg, exp.Boolean):
        return bool(arg.this)
    return bool(arg) and not isinstance(arg, exp.Null)


def _strings(arg: Any, what: str) -> list[str]:
    """A tuple of string literals (`('a', 'b')`, or `('a')`), NULL or absent: the texts, sorted."""
    if arg is None or isinstance(arg, exp.Null):
        return []
    items = arg.expressions if isinstance(arg, (exp.Tuple, exp.Array)) else [arg.this if isinstance(arg, exp.Paren) else arg]
    return sorted(string_arg(item, what) for item in items)


@macro()
def assay_ingestion_metadata_violations(evaluator, rel: exp.Expr, ranked: exp.Expr = None,
                                        mappings: exp.Expr = None) -> exp.Expr:
    """Bronze rows whose ingestion metadata cannot order a dedupe: a NULL `_load_id`,
    `_ingested_at` or `_source_row_id`, a `_source_row_id` repeated within one `_load_id`, an
    `_ingested_at` that is no ISO 8601 timestamp (read as assay_ingestion_timestamp reads it).

    A `_source_row_id` that repeats across loads is a re-delivery, which is normal (decision
    0014: the latest delivery supersedes the earlier ones); within one load two deliveries of
    one source row would tie.

    With `ranked`, the staged model that ranks these rows' deliveries, and `mappings`, its
    mappings of `rel` (decision 0412): the repeat search groups only the source rows it ranks
    twice or more, and only the source rows whose parsed `_ingested_at` it holds NULL are parsed
    again; the verdict is the same as over every row.

    >>> from assay_sqlmesh import render_sql
    >>> "unparseable_ingested_at" in render_sql("@assay_ingestion_metadata_violations(bronze.raw_orders)", "duckdb")
    True
    """
    d = dialect_of(evaluator)
    row_id = as_text("_source_row_id", d)
    ingested = parse_ts_sql("_ingested_at", "ISO8601", d)
    names = _strings(mappings, "a mapping name")
    repeated, unparsed = "", f"({ingested}) IS NULL"
    if ranked is not None and not isinstance(ranked, exp.Null) and names:
        ranks = (f"SELECT r._source_row_id FROM {relation(ranked, d)} AS r "
                 f"WHERE r._mapping IN ({', '.join(lit(n, d) for n in names)}) AND ")
        repeated = f" AND {row_id} IN ({ranks}r._delivery_rank > 1)"
        # in a CASE, so that no engine parses a row before the row is found a candidate
        unparsed = (f"CASE WHEN _source_row_id IS NULL OR {row_id} IN ({ranks}r._ingested_at IS NULL) "
                    f"THEN ({ingested}) IS NULL ELSE FALSE END")
    sql = f"""
    WITH metadata AS (SELECT _load_id, _ingested_at, _source_row_id FROM {relation(rel, d)})
    SELECT 'missing_metadata' AS failure, {row_id} AS source_row_id FROM metadata
    WHERE _load_id IS NULL OR _ingested_at IS NULL OR _source_row_id IS NULL
    UNION ALL
    SELECT 'duplicate_source_row_id' AS failure, source_row_id FROM (
      SELECT {row_id} AS source_row_id, COUNT(*) OVER (PARTITION BY _load_id, _source_row_id) AS deliveries
      FROM metadata WHERE _source_row_id IS NOT NULL AND _load_id IS NOT NULL{repeated}) AS repeats
    WHERE deliveries > 1
    UNION ALL
    SELECT 'unparseable_ingested_at' AS failure, {row_id} AS source_row_id FROM metadata
    WHERE _ingested_at IS NOT NULL AND {unparsed}"""
    return render(sql, d)


@macro()
def assay_fail_rule_violations(evaluator, rel: exp.Expr, rule_name: str, flags_column: exp.Expr = None) -> exp.Expr:
    """Rows whose flags name `rule_name` (a `fail` rule a row broke, or a flag to warn about).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_fail_rule_violations(silver.orders, 'amount_range_min', _quality_flags)", "duckdb")
    "SELECT * FROM silver.orders WHERE ARRAY_CONTAINS(_quality_flags, 'amount_range_min')"
    """
    d = dialect_of(evaluator)
    name = string_arg(rule_name, "the rule name")
    flags = text(flags_column, d) if flags_column is not None else "_quality_flags"
    where = pick(FLAGS_CONTAIN, d).format(f=flags, r=lit(name, d), delimited=lit(f",{name},", d))
    return render(f"SELECT * FROM {relation(rel, d)} WHERE {where}", d)


@macro()
def assay_key_uniqueness_violations(evaluator, rel: exp.Expr, columns: exp.Expr, kept_only: exp.Expr = None) -> exp.Expr:
    """Keys that repeat among the rows (rows with a NULL key part are no identity). With
    `kept_only`, only the rows a staged model routes to the entity count.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_key_uniqueness_violations(silver.orders, (order_id, line_no))", "duckdb")
    'SELECT order_id, line_no, COUNT(*) AS occurrences FROM silver.orders WHERE NOT order_id IS NULL AND NOT line_no IS NULL GROUP BY order_id, line_no HAVING COUNT(*) > 1'
    """
    d = dialect_of(evaluator)
    cols = columns_sql(columns, "a key column", d)
    conds = [f"{c} IS NOT NULL" for c in cols]
    if _flag(kept_only):
        conds.insert(0, "_route = 'kept'")
    listed = ", ".join(cols)
    return render(f"SELECT {listed}, COUNT(*) AS occurrences FROM {relation(rel, d)} WHERE {' AND '.join(conds)} GROUP BY {listed} HAVING COUNT(*) > 1", d)


def _hours_ago(ts_sql: str, hours: int, dialect: str) -> str:
    if dialect in ("spark", "databricks"):
        return f"TIMESTAMPADD(HOUR, {-hours}, {ts_sql})"
    node = exp.DateAdd(this=exp.maybe_parse(ts_sql, dialect=dialect), expression=exp.Literal.number(-hours), unit=exp.var("HOUR"))
    return node.sql(dialect=dialect)


@macro()
def assay_freshness_violations(evaluator, rel: exp.Expr, max_age_hours: int) -> exp.Expr:
    """One row when the newest `_ingested_at` of a bronze relation is older than `max_age_hours`
    at the run's execution time (or the relation is empty): the freshness check of a source.

    Measured against SQLMesh's execution time, not the wall clock, so a backfill judges the
    data as of the interval it builds.

    >>> from assay_sqlmesh import render_sql
    >>> "HAVING" in render_sql("@assay_freshness_violations(bronze.raw_orders, 24)", "duckdb")
    True
    """
    d = dialect_of(evaluator)
    ts = type_name("timestamp", d)
    newest = f"MAX({parse_ts_sql('_ingested_at', 'ISO8601', d)})"
    now = f"CAST({lit(str(evaluator.locals.get('execution_ts') or '1970-01-01 00:00:00'), d)} AS {ts})"
    limit = _hours_ago(now, int(max_age_hours), d)
    sql = (
        f"SELECT {newest} AS last_ingested_at, {now} AS measured_at, {int(max_age_hours)} AS max_age_hours "
        f"FROM {relation(rel, d)} HAVING {newest} IS NULL OR {newest} < {limit}"
    )
    return render(sql, d)


@macro()
def assay_coverage_violations(evaluator, parent: exp.Expr, child: exp.Expr, pairs: exp.Expr, min_children: int = 1) -> exp.Expr:
    """Admitted parent rows with fewer than `min_children` admitted children.

    `pairs` lists (child column, parent column) as string literals.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_coverage_violations(silver.customer, silver.orders, (('customer_id', 'id')), 1)", "duckdb")
    'SELECT parent.id, COUNT(child.customer_id) AS children FROM silver.customer AS parent LEFT JOIN silver.orders AS child ON child.customer_id = parent.id GROUP BY parent.id HAVING COUNT(child.customer_id) < 1'
    """
    d = dialect_of(evaluator)
    cols = []
    for p in items(pairs):
        parts = p.expressions if isinstance(p, exp.Tuple) else []
        if len(parts) != 2:
            raise AssayMacroError(f"assay_coverage_violations: a pair is ('child column', 'parent column'), got {p.sql()}")
        cols.append((ident(string_arg(parts[0], "a column"), d), ident(string_arg(parts[1], "a column"), d)))
    parent_cols = ", ".join(f"parent.{pc}" for _c, pc in cols)
    on = " AND ".join(f"child.{c} = parent.{pc}" for c, pc in cols)
    sql = (
        f"SELECT {parent_cols}, COUNT(child.{cols[0][0]}) AS children FROM {relation(parent, d)} AS parent "
        f"LEFT JOIN {relation(child, d)} AS child ON {on} GROUP BY {parent_cols} HAVING COUNT(child.{cols[0][0]}) < {int(min_children)}"
    )
    return render(sql, d)


def _side(rel: Any, column: str, agg: str, by: list[str], dialect: str) -> str:
    keys = ", ".join(f"{ident(c, dialect)} AS k{i}" for i, c in enumerate(by, start=1))
    value = f"{agg}({ident(column, dialect)})" if agg else ident(column, dialect)
    group = f" GROUP BY {', '.join(ident(c, dialect) for c in by)}" if agg and by else ""
    return f"SELECT {keys + ', ' if keys else ''}{value} AS v FROM {relation(rel, dialect)}{group}"


@macro()
def assay_reconcile_violations(
    evaluator,
    left_relation: exp.Expr,
    left_column: str,
    left_agg: str,
    left_by: exp.Expr,
    right_relation: exp.Expr,
    right_column: str,
    right_agg: str,
    right_by: exp.Expr,
    tolerance: str,
) -> exp.Expr:
    """Groups where two sides disagree by more than an exact decimal `tolerance`.

    A side is `<agg>(<column>) by <columns>` (`agg` '' for a column keyed by the entity key).
    NULL keys form a group of their own; a group present on one side only is a mismatch.

    >>> from assay_sqlmesh import render_sql
    >>> sql = render_sql("@assay_reconcile_violations(silver.l, 'amount', 'sum', ('id'), silver.l, 'amount', '', ('id'), '0.01')", "duckdb")
    >>> "ABS(MAX(left_value) - MAX(right_value)) > 0.01" in sql
    True
    """
    d = dialect_of(evaluator)
    try:
        tol = str(Decimal(string_arg(tolerance, "the tolerance")))
    except InvalidOperation as exc:
        raise AssayMacroError(f"assay_reconcile_violations: tolerance {tolerance!r} is not a decimal") from exc
    lby, rby = names(left_by, "a group column"), names(right_by, "a group column")
    if len(lby) != len(rby):
        raise AssayMacroError("assay_reconcile_violations: both sides need the same number of group columns")
    left = _side(left_relation, string_arg(left_column, "a column"), string_arg(left_agg, "an aggregate"), lby, d)
    right = _side(right_relation, string_arg(right_column, "a column"), string_arg(right_agg, "an aggregate"), rby, d)
    n = len(lby)
    keys = "".join(f"k{i}, " for i in range(1, n + 1))
    group = f" GROUP BY {', '.join(f'k{i}' for i in range(1, n + 1))}" if n else ""
    # A union grouped by the keys rather than a full outer join: GROUP BY puts NULL keys together,
    # which a join would not, and Postgres cannot full-join on an OR of conditions.
    sql = f"""
    WITH assay_left AS ({left}), assay_right AS ({right}),
    assay_sides AS (
      SELECT {keys}v AS left_value, NULL AS right_value, 1 AS in_left, 0 AS in_right FROM assay_left
      UNION ALL
      SELECT {keys}NULL AS left_value, v AS right_value, 0 AS in_left, 1 AS in_right FROM assay_right
    )
    SELECT {keys}MAX(left_value) AS left_value, MAX(right_value) AS right_value
    FROM assay_sides{group}
    HAVING CASE WHEN SUM(in_left) = 0 OR SUM(in_right) = 0 THEN TRUE
    WHEN MAX(left_value) IS NULL AND MAX(right_value) IS NULL THEN FALSE
    WHEN MAX(left_value) IS NULL OR MAX(right_value) IS NULL THEN TRUE
    ELSE ABS(MAX(left_value) - MAX(right_value)) > {tol} END"""
    return render(sql, d)
