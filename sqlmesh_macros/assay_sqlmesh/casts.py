"""Casts: the engine's raising cast, the guarded NULL-on-failure cast, and the coercion marker."""

from __future__ import annotations

from sqlglot import exp
from sqlmesh import macro

from ._core import JSON_NUL_ESCAPE, as_text, dialect_of, parse_type, pick, postgres_version, render, string_arg, type_name
from .text import regex_match_sql

# The engine's NULL-on-failure cast over the operand as text ({value}); {type} is the engine type,
# {type_literal} its name as a string. Variant gets its own form where the engine parses JSON.
TRY_CAST = {
    "default": ("TRY_CAST({value} AS {type})", None),
    # No TRY_CAST keyword: guard the engine's own input parser, so the accept set is the
    # engine's rather than a regex approximation of it (PostgreSQL 16+).
    "postgres": ("CASE WHEN pg_input_is_valid({value}, {type_literal}) THEN CAST({cast_value} AS {type}) END", None),
    # Redshift's TRY_CAST rejects an empty operand instead of returning NULL.
    "redshift": ("TRY_CAST(NULLIF({value}, '') AS {type})", "CASE WHEN CAN_JSON_PARSE({value}) THEN JSON_PARSE({value}) END"),
    # Snowflake's TRY_CAST accepts text operands only, which {value} is.
    "snowflake": ("TRY_CAST({value} AS {type})", "TRY_PARSE_JSON({value})"),
    "bigquery": ("SAFE_CAST({value} AS {type})", "CASE WHEN SAFE.PARSE_JSON({value}) IS NOT NULL THEN {value} END"),
    "spark": ("TRY_CAST({value} AS {type})", "CASE WHEN get_json_object({value}, '$') IS NOT NULL THEN {value} END"),
    # sqlglot writes Databricks' get_json_object(x, '$') as the `x:` path syntax, which has no root.
    "databricks": ("TRY_CAST({value} AS {type})", "CASE WHEN TRY_PARSE_JSON({value}) IS NOT NULL THEN {value} END"),
    "trino": ("TRY_CAST({value} AS {type})", "TRY(json_parse({value}))"),
}
# PostgreSQL 15 has no pg_input_is_valid; `@assay_install_functions()` creates this stand-in.
PG15_CHECK = "assay_input_is_valid({value}, {type_literal})"
INT_TEXT = r"^\s*[+-]?[0-9]+\s*$"
# Decimal text (docs/spec.md, "Transforms"; decision 1125): digits with one optional point, an
# optional exponent. Not NaN / Infinity, and not what only some engines read: PostgreSQL 16+
# reads '0x10', '0b101', '0o17' and '1_000', DuckDB '1_000'; PostgreSQL 15 and Spark none of them.
# The exponent has at most three digits: PostgreSQL raises on `1e-20000` although
# pg_input_is_valid accepts it, DuckDB refuses `0e999999` (decision 1125, amended in session 33).
DECIMAL_TEXT = r"^\s*[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?\s*$"
# A date or timestamp starts with a whole year-month-day and names no zone but UTC (decision 0978):
# Spark reads '2026-03' as March 1st and converts 'Europe/Paris', PostgreSQL reads '01/02/2025' by
# its DateStyle setting and drops a zone name, DuckDB refuses all three.
# Spaces around the text are trimmed first and any other white space refused (decision 0978,
# amended in session 38: DuckDB refused ' 2026-03-01 ' as a timestamp, PostgreSQL and Spark read
# it; a tab or a line break, engines differ again).
DATE_LEAD = r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([^0-9]|$)"
# The letters left once `UTC` and `utc` are taken out are an upper-case `T` or `Z` (one regex,
# session 49: each costs 0.3-1.6 s per million values on PostgreSQL): no zone name (decision 0978),
# and no lower-case `t` separator or `z` designator, which PostgreSQL reads and DuckDB and Spark
# refuse. White space other than a space (which TRIM takes off the ends only) is refused by the same
# regex (decision 0978).
DATE_LETTER = r"[a-zA-SU-Y\t\n\x0b\f\r]"
# Year 0000, an hour past 23, a minute or second past 59 (decision 0967): PostgreSQL reads
# `23:59:60` and `24:00:00` as the next day and refuses year 0, DuckDB refuses the clocks and keeps
# year 0 as 1 BC. None of them is a value anywhere: a coercion failure on every engine.
# One regex with the separator that has no time after it (decision 1167): each regex
# costs 0.3-1.6 s per million values on PostgreSQL (session 49).
DATE_OUT_OF_RANGE = (r"^(0000-|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[T ]+(([0-9]{3,}|2[4-9]|[3-9][0-9])"
                     r"|[0-9]{1,2}:([0-9]{3,}|[6-9][0-9])|[0-9]{1,2}:[0-9]{1,2}:([0-9]{3,}|[6-9][0-9])|[0-9]*$))")
# A separator after the date is followed by at least hours and minutes (decision 1167): DuckDB read
# '2026-03-01T' and '2026-03-01T10' as dates, PostgreSQL refuses them. Tested as a branch of
# DATE_OUT_OF_RANGE.
# The text a timestamp is cast from, per engine (decision 1167): PostgreSQL rounds a fraction of
# more than six digits (23:59:59.9999999 becomes the next day), DuckDB and Spark cut it to
# microseconds, so PostgreSQL's is cut first, only where more than six characters follow the point
# (the regex costs about 1.3 s per million values). It replaces {cast_value} in the engine's
# template; the validity check reads the text as it is. The dbt package: postgres__try_cast.
TIMESTAMP_TEXT = {"default": "{value}",
                  "postgres": "CASE WHEN LENGTH({value}) - STRPOS({value}, '.') > 6 AND STRPOS({value}, '.') > 0 "
                              "THEN REGEXP_REPLACE({value}, '([.][0-9]{6})[0-9]+', '\\1') ELSE {value} END"}
# Boolean text (decision 0962): one list of words, ASCII white space around, any letter case,
# read without the engine's cast (DuckDB refuses 'on' and ' true', PostgreSQL reads them and
# prefixes such as 'tr', Spark reads neither 'on' nor a prefix).
BOOL_SPACE = r"[ \t\n\x0b\f\r]*"  # \x0b, not \v: Java reads \v as a class of line breaks
TRUE_WORDS = f"^{BOOL_SPACE}(true|t|yes|y|on|1){BOOL_SPACE}$"
FALSE_WORDS = f"^{BOOL_SPACE}(false|f|no|n|off|0){BOOL_SPACE}$"


def plain_decimal_sql(value: str) -> str:
    """Decimal text with an exponent written out without it (`5e-4` is `0.0005`), for DuckDB, whose
    cast of exponent text rounds by the mantissa's first digit wherever it falls (`5e-4` became 0.01
    in `decimal(6,2)`, where PostgreSQL and Spark give 0.00; decision 1141). The dbt package writes
    the same expression (macros/types/_plain_decimal_text.sql); the primitive table holds the cases."""
    sign = f"regexp_extract({value}, '^\\s*([+-]?)', 1)"
    mantissa = f"regexp_extract({value}, '^\\s*[+-]?([0-9]*[.]?[0-9]*)', 1)"
    digits = f"replace({mantissa}, '.', '')"
    point = (f"(case when strpos({mantissa}, '.') > 0 then strpos({mantissa}, '.') - 1 else length({mantissa}) end"
             f" + cast(regexp_extract({value}, '[eE]([+-]?[0-9]+)', 1) as integer))")
    return (f"case when regexp_matches({value}, '[eE]') then {sign} || case when {point} <= 0 then '0.' || repeat('0', -"
            f"{point}) || {digits} when {point} >= length({digits}) then {digits} || repeat('0', {point} - length("
            f"{digits})) else left({digits}, {point}) || '.' || substr({digits}, {point} + 1) end else {value} end")


def guarded_cast_sql(value_sql: str, assay_type: str, dialect: str, pg_version: int | None = None) -> str:
    """SQL text of the guarded cast of `value_sql` (already text) to `assay_type`.

    The guards every engine shares: integers accept integer text only (engines otherwise
    round '12.5' or read '1_000'); dates and timestamps refuse words that resolve to the
    clock (the same cell must not convert differently per run); decimals accept decimal text
    only (no NaN/Inf, no '0x10' or '1_000', which some engines read and others do not);
    booleans are one list of words, read without the engine's cast.
    """
    kind, _p, _s = parse_type(assay_type)
    if kind == "string":
        return value_sql
    if kind == "bool":
        word = f"LOWER({value_sql})"
        return (f"CASE WHEN {regex_match_sql(word, TRUE_WORDS, dialect)} THEN TRUE "
                f"WHEN {regex_match_sql(word, FALSE_WORDS, dialect)} THEN FALSE END")
    tname = type_name(assay_type, dialect)
    template, variant_template = pick(TRY_CAST, dialect)
    if dialect == "postgres" and (pg_version or postgres_version()) < 160000:
        template = f"CASE WHEN {PG15_CHECK} THEN CAST({{cast_value}} AS {{type}}) END"
    if kind == "variant" and variant_template:
        template = variant_template
    type_literal = exp.Literal.string(tname.lower()).sql(dialect=dialect)
    # {value} goes in last so that text inside the operand is never substituted; {cast_value}, the
    # operand of the cast itself, is the operand unless a timestamp's text is cut first.
    template = template.replace("{cast_value}", pick(TIMESTAMP_TEXT, dialect) if kind == "timestamp" else "{value}")
    cast = template.replace("{type_literal}", type_literal).replace("{type}", tname).replace("{value}", value_sql)
    if kind == "int":
        guard = regex_match_sql(value_sql, INT_TEXT, dialect)
    elif kind in ("date", "timestamp"):
        trimmed = f"TRIM({value_sql})"
        letters = "REPLACE(REPLACE(" + trimmed + ", 'UTC', ''), 'utc', '')"
        # A clock word (now, today, tomorrow, yesterday, epoch, infinity) has a letter the letter
        # guard refuses: it needs no regex of its own.
        guard = (f"{regex_match_sql(trimmed, DATE_LEAD, dialect)}"
                 f" AND NOT {regex_match_sql(trimmed, DATE_OUT_OF_RANGE, dialect)}"
                 f" AND NOT {regex_match_sql(letters, DATE_LETTER, dialect)}")
        cast = template.replace("{type_literal}", type_literal).replace("{type}", tname).replace("{value}", trimmed)
    elif kind == "decimal":
        guard = regex_match_sql(value_sql, DECIMAL_TEXT, dialect)
        if dialect == "duckdb":
            cast = template.replace("{type_literal}", type_literal).replace("{type}", tname).replace(
                "{value}", plain_decimal_sql(value_sql))
    elif kind == "variant":  # the escape of U+0000, which jsonb refuses (decision 1123, amended in session 33)
        guard = "NOT " + regex_match_sql(value_sql, JSON_NUL_ESCAPE, dialect)
    else:
        return cast
    return f"CASE WHEN {guard} THEN {cast} END"


@macro()
def assay_try_cast(evaluator, value: exp.Expr, assay_type: str) -> exp.Expr:
    """NULL instead of an error when `value` does not convert to the logical `assay_type`.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_try_cast(x, 'int')", "duckdb")
    "CASE WHEN REGEXP_MATCHES(CAST(x AS TEXT), '^\\\\s*[+-]?[0-9]+\\\\s*$') THEN TRY_CAST(CAST(x AS TEXT) AS BIGINT) END"
    >>> render_sql("@assay_try_cast(x, 'decimal(12,2)')", "postgres")
    "CASE WHEN (CAST(x AS TEXT) ~ '^\\\\s*[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?\\\\s*$') THEN CASE WHEN PG_INPUT_IS_VALID(CAST(x AS TEXT), 'numeric(12, 2)') THEN CAST(CAST(x AS TEXT) AS DECIMAL(12, 2)) END END"
    """
    d = dialect_of(evaluator)
    return render(guarded_cast_sql(as_text(value, d), string_arg(assay_type, "the type"), d), d)


@macro()
def assay_cast(evaluator, value: exp.Expr, assay_type: str) -> exp.Expr:
    """The engine's own cast to a logical type: raises on a bad value (for values that cannot be bad).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_cast(b.id, 'string')", "postgres")
    'CAST(b.id AS TEXT)'
    >>> render_sql("@assay_cast(x, 'timestamp')", "bigquery")
    'CAST(x AS DATETIME)'
    """
    d = dialect_of(evaluator)
    return render("CAST({value} AS {type})", d, value=value, type=type_name(string_arg(assay_type, "the type"), d))


@macro()
def assay_coercion_failed(evaluator, before: exp.Expr, after: exp.Expr) -> exp.Expr:
    """The coercion marker of one casting step: there was a value and the cast made it NULL.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_coercion_failed(b.x, @assay_try_cast(b.x, 'int'))", "duckdb")
    "(NOT b.x IS NULL AND (CASE WHEN REGEXP_MATCHES(CAST(b.x AS TEXT), '^\\\\s*[+-]?[0-9]+\\\\s*$') THEN TRY_CAST(CAST(b.x AS TEXT) AS BIGINT) END) IS NULL)"
    """
    d = dialect_of(evaluator)
    return render("({before} IS NOT NULL AND ({after}) IS NULL)", d, before=before, after=after)


@macro()
def assay_install_functions(evaluator) -> exp.Expr:
    """Statements a PostgreSQL 15 warehouse needs before models run (a `before_all` statement).

    Only class-22 (data_exception) errors mean "does not convert"; anything else, such as an
    unknown type name, is a bug and still fails the run. On every other engine this is a no-op
    `SELECT 1`.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_install_functions()", "duckdb")
    'SELECT 1'
    """
    d = dialect_of(evaluator)
    if d != "postgres" or postgres_version() >= 160000:
        return exp.select("1")
    body = (
        "CREATE OR REPLACE FUNCTION assay_input_is_valid(value TEXT, type_name TEXT) RETURNS BOOLEAN "
        "LANGUAGE plpgsql STABLE STRICT AS $assay$ BEGIN EXECUTE format('select %L::%s', value, type_name); "
        "RETURN TRUE; EXCEPTION WHEN data_exception THEN RETURN FALSE; END $assay$"
    )
    return exp.Command(this="CREATE", expression=exp.Literal.string(body[len("CREATE") :]))
