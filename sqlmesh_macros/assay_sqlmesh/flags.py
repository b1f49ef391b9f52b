"""Quality flags, the reject identity, the unknown-member rewrite, and the run's identity.

Flags are an array where the engine has one and a comma-joined string otherwise. Rule names
are [a-z0-9_]+ and sorted, so neither form needs escaping and the two agree observably.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlmesh import macro

from ._core import AssayMacroError, as_text, dialect_of, lit, pick, render, string_arg, text, type_name

RULE_NAME = re.compile(r"^[a-z0-9_]+$")
EMPTY_FLAGS = {
    "default": "''",
    "redshift": "''",
    "duckdb": "CAST([] AS VARCHAR[])",
    "postgres": "CAST(ARRAY[] AS TEXT[])",
    "snowflake": "ARRAY_CONSTRUCT()",
    "bigquery": "ARRAY<STRING>[]",
    "spark": "CAST(ARRAY() AS ARRAY<STRING>)",
    "trino": "CAST(ARRAY[] AS ARRAY(VARCHAR))",
}
QUALITY_OK = {
    "default": "({f} = '')",
    "redshift": "({f} = '')",
    "duckdb": "(LEN({f}) = 0)",
    "postgres": "(CARDINALITY({f}) = 0)",
    "snowflake": "(ARRAY_SIZE({f}) = 0)",
    "bigquery": "(ARRAY_LENGTH({f}) = 0)",
    "spark": "(SIZE({f}) = 0)",
    "trino": "(CARDINALITY({f}) = 0)",
}
# Delimiters on both sides so that rule 'a' is not found inside 'a_b'; POSITION rather than LIKE
# because '_' is a LIKE wildcard and rule names are full of it.
FLAGS_CONTAIN = {
    "default": "(POSITION({delimited} IN (',' || {f} || ',')) > 0)",
    "redshift": "(POSITION({delimited} IN (',' || {f} || ',')) > 0)",
    "duckdb": "LIST_CONTAINS({f}, {r})",
    "postgres": "({r} = ANY({f}))",
    "snowflake": "ARRAY_CONTAINS(CAST({r} AS VARIANT), {f})",
    "bigquery": "({r} IN UNNEST({f}))",
    "spark": "ARRAY_CONTAINS({f}, {r})",
    "trino": "CONTAINS({f}, {r})",
}
FLAGS_TO_TEXT = {
    "default": "{f}",
    "redshift": "{f}",
    "duckdb": "ARRAY_TO_STRING({f}, ',')",
    "postgres": "ARRAY_TO_STRING({f}, ',')",
    "snowflake": "ARRAY_TO_STRING({f}, ',')",
    "bigquery": "ARRAY_TO_STRING({f}, ',')",
    "spark": "ARRAY_JOIN({f}, ',')",
    "trino": "ARRAY_JOIN({f}, ',')",
}


def has_arrays(dialect: str) -> bool:
    """Whether flags are an array on this engine (else a comma-joined string)."""
    return pick(EMPTY_FLAGS, dialect) != "''"


def flags_type(dialect: str) -> str:
    """The column type of `_quality_flags` / `failed_rules` on this engine."""
    return {
        "duckdb": "VARCHAR[]",
        "postgres": "TEXT[]",
        "snowflake": "ARRAY",
        "bigquery": "ARRAY<STRING>",
        "spark": "ARRAY<STRING>",
        "databricks": "ARRAY<STRING>",
        "trino": "ARRAY(VARCHAR)",
    }.get(dialect, type_name("string", dialect))


def _checked(pairs: tuple) -> list[tuple[str, exp.Expr]]:
    out = []
    for pair in pairs:
        if not isinstance(pair, exp.Tuple) or len(pair.expressions) != 2:
            raise AssayMacroError(f"assay_quality_flags: each flag is ('rule_name', predicate), got {pair}")
        name = string_arg(pair.expressions[0], "a rule name")
        if not RULE_NAME.match(name):
            raise AssayMacroError(f"assay_quality_flags: rule name '{name}' is not [a-z0-9_]+")
        out.append((name, pair.expressions[1]))
    names = [n for n, _p in out]
    # The order is part of the observable result; it is the generator's promise, checked here.
    if names != sorted(names) or len(set(names)) != len(names):
        raise AssayMacroError("assay_quality_flags: rule names must be unique and sorted: " + ", ".join(names))
    return out


def quality_flags_sql(pairs: list[tuple[str, str]], dialect: str) -> str:
    """A CASE without ELSE is NULL when the predicate is FALSE or UNKNOWN: a rule fires only on TRUE."""
    if not pairs:
        return pick(EMPTY_FLAGS, dialect)
    if not has_arrays(dialect):
        parts = [f"CASE WHEN ({p}) THEN ',{n}' ELSE '' END" for n, p in pairs]
        return f"LTRIM({' || '.join(parts)}, ',')"
    if dialect == "duckdb":
        # flatten() of one-element / empty lists rather than list_filter: no lambda syntax.
        parts = [f"CASE WHEN ({p}) THEN ['{n}'] ELSE [] END" for n, p in pairs]
        return f"CAST(FLATTEN([{', '.join(parts)}]) AS VARCHAR[])"
    if dialect == "bigquery":
        parts = [f"IF(({p}), ['{n}'], ARRAY<STRING>[])" for n, p in pairs]
        return f"ARRAY_CONCAT({', '.join(parts)})"
    cases = ", ".join(f"CASE WHEN ({p}) THEN '{n}' END" for n, p in pairs)
    if dialect == "postgres":
        return f"ARRAY_REMOVE(CAST(ARRAY[{cases}] AS TEXT[]), NULL)"
    if dialect == "snowflake":
        return f"ARRAY_COMPACT(ARRAY_CONSTRUCT({cases}))"
    if dialect == "trino":
        return f"FILTER(ARRAY[{cases}], x -> x IS NOT NULL)"
    return f"FILTER(ARRAY({cases}), x -> x IS NOT NULL)"  # spark, databricks


@macro()
def assay_quality_flags(evaluator, *flags: exp.Tuple) -> exp.Expr:
    """The names of the rules whose predicate is TRUE, sorted: `(('rule', predicate), ...)`.

    Never NULL: a clean row carries the empty collection.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_quality_flags(('a_range', _r__a_range), ('b_in_set', _r__b_in_set))", "postgres")
    "ARRAY_REMOVE(CAST(ARRAY[CASE WHEN (_r__a_range) THEN 'a_range' END, CASE WHEN (_r__b_in_set) THEN 'b_in_set' END] AS TEXT[]), NULL)"
    >>> render_sql("@assay_quality_flags()", "duckdb")
    'CAST([] AS TEXT[])'
    """
    d = dialect_of(evaluator)
    pairs = [(n, text(p, d)) for n, p in _checked(flags)]
    return render(quality_flags_sql(pairs, d), d)


@macro()
def assay_quality_ok(evaluator, flags: exp.Expr) -> exp.Expr:
    """TRUE when a flags value is empty.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_quality_ok(_quality_flags)", "duckdb")
    '(LENGTH(_quality_flags) = 0)'
    """
    d = dialect_of(evaluator)
    return render(pick(QUALITY_OK, d), d, f=flags)


@macro()
def assay_flags_contain(evaluator, flags: exp.Expr, rule_name: str) -> exp.Expr:
    """TRUE when a flags value names `rule_name`.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_flags_contain(_quality_flags, 'amount_range_min')", "postgres")
    "('amount_range_min' = ANY(_quality_flags))"
    """
    d = dialect_of(evaluator)
    name = string_arg(rule_name, "the rule name")
    return render(pick(FLAGS_CONTAIN, d), d, f=flags, r=lit(name, d), delimited=lit(f",{name},", d))


@macro()
def assay_flags_to_text(evaluator, flags: exp.Expr) -> exp.Expr:
    """A flags value as comma-joined text (the string form already is).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_flags_to_text(failed_rules)", "duckdb")
    "ARRAY_TO_STRING(failed_rules, ',')"
    """
    d = dialect_of(evaluator)
    return render(pick(FLAGS_TO_TEXT, d), d, f=flags)


@macro()
def assay_reject_id(evaluator, source_relation: str, source_row_id: exp.Expr, mapping: str | None = None) -> exp.Expr:
    """The reject row's identity: md5 of the source relation and `_source_row_id`, never `_load_id`,
    so a re-delivery of the same source row lands on the same reject row; with `mapping` (a relation
    several mappings of one entity read, decision 0947) `<relation>:<mapping>|` is hashed before it.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_reject_id('raw_orders', s._source_row_id)", "duckdb")
    "MD5('raw_orders|' || CAST(s._source_row_id AS TEXT))"
    >>> render_sql("@assay_reject_id('raw_meter', s._source_row_id, 'export')", "duckdb")
    "MD5('raw_meter:export|' || CAST(s._source_row_id AS TEXT))"
    """
    d = dialect_of(evaluator)
    name = string_arg(source_relation, "the source relation")
    if mapping is not None:
        name += ":" + string_arg(mapping, "the mapping")
    prefix = lit(name + "|", d)
    value = as_text(source_row_id, d)
    if d == "bigquery":
        return render(f"TO_HEX(MD5(CONCAT({prefix}, {value})))", d)
    if d in ("spark", "databricks"):
        return render(f"MD5(CONCAT({prefix}, {value}))", d)
    if d == "trino":
        return render(f"LOWER(TO_HEX(MD5(TO_UTF8({prefix} || {value}))))", d)
    return render(f"MD5({prefix} || {value})", d)


@macro()
def assay_unknown_member(evaluator, fk: exp.Expr, probe: exp.Expr) -> exp.Expr:
    """A non-null orphan foreign key becomes '__unknown__'; a NULL key stays NULL (it claims no parent).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_unknown_member(customer_ref, _probe__ref_of_customer)", "duckdb")
    "CASE WHEN _probe__ref_of_customer IS NULL AND NOT customer_ref IS NULL THEN '__unknown__' ELSE customer_ref END"
    """
    d = dialect_of(evaluator)
    return render("CASE WHEN {p} IS NULL AND {fk} IS NOT NULL THEN '__unknown__' ELSE {fk} END", d, p=probe, fk=fk)


@macro()
def assay_run_id(evaluator) -> exp.Expr:
    """The identifier of the SQLMesh plan or run evaluating the model, e.g. 'SQLMESH_RUN: 3f2a...'.

    SQLMesh tags every query of a plan with its plan id and every query of `sqlmesh run` with a
    run id (the correlation id on the engine adapter); this is that value, so mart rows can be
    matched with the engine's query history. NULL where there is no run (rendering, tests).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_run_id()", "duckdb")
    'CAST(NULL AS TEXT)'
    """
    d = dialect_of(evaluator)
    adapter = evaluator.locals.get("engine_adapter")
    correlation = getattr(adapter, "correlation_id", None)
    value = lit(str(correlation), d) if correlation is not None else "NULL"
    return render(f"CAST({value} AS {type_name('string', d)})", d)


@macro()
def assay_run_timestamp(evaluator) -> exp.Expr:
    """When the run started (SQLMesh's execution time), one value for every row a run writes.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_run_timestamp()", "postgres")
    "CAST('1970-01-01 00:00:00' AS TIMESTAMP)"
    """
    d = dialect_of(evaluator)
    ts = evaluator.locals.get("execution_ts") or "1970-01-01 00:00:00"
    return render(f"CAST({lit(str(ts), d)} AS {type_name('timestamp', d)})", d)
