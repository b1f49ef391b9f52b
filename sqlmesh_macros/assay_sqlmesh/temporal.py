"""Dates and timestamps: strict ISO 8601, strftime formats, and local time to UTC.

Every parser validates and picks the value apart with a regex, then goes through the guarded
cast, so nothing here can raise on a bad cell: a value that does not parse is NULL, and the
caller's coercion marker turns that into a `coercible` failure.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlmesh import macro

from ._core import AssayMacroError, as_text, dialect_of, lit, pick, render, string_arg, text, type_name
from .text import regex_extract_sql, regex_match_sql
from .casts import guarded_cast_sql

# Ranges are spelled out because engines roll over what they should refuse (Postgres reads
# 23:59:60 as the next minute) and year 0 exists on DuckDB only. Day-of-month validity
# (2025-02-30) is left to the guarded cast.
DATE_RE = r"((?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))"
# a fraction of up to nine digits (nanoseconds), cut to microseconds by the parse (decision 0983)
TIME_RE = r"((?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,9})?)?)"
ZONE_RE = r"(?:(Z)|([+-])([01][0-9]|2[0-3])(?::([0-5][0-9]))?)"

TO_UTC = {
    # AT TIME ZONE twice: wall clock in `zone` -> instant -> UTC wall clock.
    "default": "((CAST({x} AS {ts}) AT TIME ZONE {z}) AT TIME ZONE 'UTC')",
    # timezone() on a TIMESTAMP reads it as local to the zone; on the TIMESTAMPTZ it gives the
    # wall clock there, independent of the session TimeZone.
    "duckdb": "TIMEZONE('UTC', TIMEZONE({z}, CAST({x} AS TIMESTAMP)))",
    "snowflake": "CONVERT_TIMEZONE({z}, 'UTC', CAST({x} AS TIMESTAMP_NTZ))",
    "bigquery": "DATETIME(TIMESTAMP(CAST({x} AS DATETIME), {z}), 'UTC')",
    # TO_UTC_TIMESTAMP reads a local time the clocks show twice at the earlier, summer offset;
    # DuckDB and PostgreSQL at the later one: the later reading where there is one (decision 0993).
    "spark": "CASE WHEN {late} > {early} AND FROM_UTC_TIMESTAMP({late}, {z}) = CAST({x} AS TIMESTAMP) "
             "THEN {late} ELSE {early} END",
    "trino": "CAST(WITH_TIMEZONE(CAST({x} AS TIMESTAMP(6)), {z}) AT TIME ZONE 'UTC' AS TIMESTAMP(6))",
}
# The current instant as a zoneless UTC timestamp, whatever the session's time zone: the time a
# check result or an event is recorded at (decision 0992). CAST(CURRENT_TIMESTAMP AS TIMESTAMP)
# is the session's wall clock on DuckDB (TimeZone defaults to the machine's) and PostgreSQL.
UTC_NOW = {
    # DuckDB, PostgreSQL, Trino: AT TIME ZONE on the instant gives its wall clock in UTC.
    "default": "CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS {ts})",
    "snowflake": "CAST(CONVERT_TIMEZONE('UTC', CURRENT_TIMESTAMP()) AS {ts})",
    "bigquery": "CURRENT_DATETIME('UTC')",
    # Spark's TIMESTAMP is an instant, stored as one; the session reads it in UTC (decision 0806).
    "spark": "CAST(CURRENT_TIMESTAMP() AS {ts})",
}


def utc_now_sql(dialect: str) -> str:
    """The current instant as a zoneless UTC timestamp in `dialect` (UTC_NOW)."""
    return pick(UTC_NOW, dialect).format(ts=type_name("timestamp", dialect))


# A four-digit year but 0000, which exists on DuckDB only.
YEAR = "[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9]"
# strftime directives every engine reads through this regex (DuckDB too: decision 0961), as (variable-width regex, fixed-width regex, field).
# Variable widths accept one or two digits like strptime, except next to another number.
DIRECTIVES = {
    "Y": ("(" + YEAR + ")", "(" + YEAR + ")", "year"),
    "y": ("([0-9]{2})", "([0-9]{2})", "year2"),
    "m": ("(0?[1-9]|1[0-2])", "(0[1-9]|1[0-2])", "month"),
    "b": ("([A-Za-z]{3})", "([A-Za-z]{3})", "month_abbr"),
    "B": ("([A-Za-z]{3,9})", "([A-Za-z]{3,9})", "month_name"),
    "d": ("(0?[1-9]|[12][0-9]|3[01])", "(0[1-9]|[12][0-9]|3[01])", "day"),
    "H": ("([01]?[0-9]|2[0-3])", "([01][0-9]|2[0-3])", "hour"),
    "M": ("([0-5]?[0-9])", "([0-5][0-9])", "minute"),
    "S": ("([0-5]?[0-9])", "([0-5][0-9])", "second"),
    "f": ("([0-9]{1,6})", "([0-9]{1,6})", "fraction"),
}
NUMERIC_DIRECTIVES = "YymdHMSf"
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")


def iso8601_ts_re(zone_required: bool) -> str:
    """Groups: 1 date, 2 time, 3 'Z', 4 offset sign, 5 offset hours, 6 offset minutes."""
    if zone_required:
        return f"^{DATE_RE}[T ]{TIME_RE}{ZONE_RE}$"
    return f"^{DATE_RE}(?:[T ]{TIME_RE}{ZONE_RE}?)?$"


def _add_minutes(ts_sql: str, minutes_sql: str, dialect: str) -> str:
    if dialect in ("spark", "databricks"):
        # sqlglot writes Spark's DATE_ADD, which counts days.
        return f"TIMESTAMPADD(MINUTE, {minutes_sql}, {ts_sql})"
    node = exp.DateAdd(this=exp.maybe_parse(ts_sql, dialect=dialect), expression=exp.maybe_parse(minutes_sql, dialect=dialect), unit=exp.var("MINUTE"))
    return node.sql(dialect=dialect)


def iso8601_sql(value_sql: str, zone_required: bool, dialect: str) -> str:
    s = as_text(value_sql, dialect)
    pattern = iso8601_ts_re(zone_required)
    if dialect == "duckdb":
        # One regex to validate, then DuckDB's own timestamp parser, which reads the offset:
        # far cheaper than six group extractions per row. Its cast wants seconds before a
        # zone, so 12:30Z becomes 12:30:00Z first.
        full = f"REGEXP_REPLACE({s}, '^([0-9-]+[T ][0-9]{{2}}:[0-9]{{2}})(Z|[+-][0-9:]+)?$', '\\1:00\\2')"
        return (
            f"CASE WHEN REGEXP_FULL_MATCH({s}, {lit(pattern[1:-1], dialect)}) THEN "
            f"CASE WHEN REGEXP_MATCHES({s}, '(Z|[+-][0-9]{{2}}(:[0-9]{{2}})?)$') "
            f"THEN CAST(TIMEZONE('UTC', TRY_CAST({full} AS TIMESTAMPTZ)) AS TIMESTAMP) "
            f"ELSE TRY_CAST({full} AS TIMESTAMP) END END"
        )
    # NULLIF: DuckDB and Spark give '' for a group that did not take part.
    g = {n: f"NULLIF({regex_extract_sql(s, pattern, n, dialect)}, '')" for n in range(1, 7)}
    # 'HH:MM:SS.ffffff' is 15 characters: a longer fraction is cut to microseconds, as DuckDB and
    # Spark read it, where PostgreSQL would round (23:59:59.9999999 into the next day; decision 0983)
    local = guarded_cast_sql(as_text(f"{g[1]} || ' ' || COALESCE(SUBSTR({g[2]}, 1, 15), '00:00:00')", dialect), "timestamp", dialect)
    int_type = type_name("int", dialect)
    offset = (
        f"(CASE WHEN {g[4]} = '-' THEN -1 ELSE 1 END) * "
        f"(CAST(COALESCE({g[5]}, '0') AS {int_type}) * 60 + CAST(COALESCE({g[6]}, '0') AS {int_type}))"
    )
    shifted = _add_minutes(local, f"-1 * ({offset})", dialect)
    return f"CASE WHEN {regex_match_sql(s, pattern, dialect)} THEN {shifted} END"


def strftime_sql(value_sql: str, fmt: str, dialect: str) -> str:
    """A strftime format parsed portably: a regex picks the fields, the guarded cast judges them."""
    tokens: list[tuple[str, str]] = []
    pct = False
    for c in fmt:
        if pct:
            if c != "%" and c not in DIRECTIVES:
                raise AssayMacroError(
                    f"assay_parse_ts: %{c} in '{fmt}' is not supported on {dialect} (portable: %Y %y %m %b %B %d %H %M %S %f %%)"
                )
            tokens.append(("%", c) if c != "%" else ("", "%"))
            pct = False
        elif c == "%":
            pct = True
        else:
            tokens.append(("", c))
    pattern, groups = "^", {}
    for i, (kind, c) in enumerate(tokens):
        if kind == "%":
            variable, fixed, field = DIRECTIVES[c]
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
            pattern += fixed if (nxt[0] == "%" and nxt[1] in NUMERIC_DIRECTIVES) else variable
            if field in groups:
                raise AssayMacroError(f"assay_parse_ts: '{fmt}' names a field twice")
            groups[field] = len(groups) + 1
        else:
            pattern += ("\\" if c in ".^$*+?()[]{}|\\" else "") + c
    pattern += "$"
    if not (("year" in groups or "year2" in groups) and "day" in groups and ({"month", "month_abbr", "month_name"} & set(groups))):
        raise AssayMacroError(f"assay_parse_ts: '{fmt}' needs a year, a month and a day")
    s = as_text(value_sql, dialect)

    def field(name: str, pad: int = 2) -> str:
        if name not in groups:
            return "'00'"
        return f"LPAD({regex_extract_sql(s, pattern, groups[name], dialect)}, {pad}, '0')"

    if "year" in groups:
        year = field("year", 4)
    else:
        # strptime's pivot: 69-99 -> 19xx, 00-68 -> 20xx
        y2 = field("year2")
        year = f"(CASE WHEN {y2} < '69' THEN '20' ELSE '19' END || {y2})"
    if "month" in groups:
        month = field("month")
    else:
        name = "month_abbr" if "month_abbr" in groups else "month_name"
        names = MONTHS if name == "month_abbr" else MONTH_NAMES
        cases = " ".join(f"WHEN '{n}' THEN '{i:02d}'" for i, n in enumerate(names, start=1))
        month = f"CASE LOWER({regex_extract_sql(s, pattern, groups[name], dialect)}) {cases} END"
    fraction = f" || '.' || {regex_extract_sql(s, pattern, groups['fraction'], dialect)}" if "fraction" in groups else ""
    iso = (
        f"{year} || '-' || {month} || '-' || {field('day')} || ' ' || {field('hour')} || ':' || "
        f"{field('minute')} || ':' || {field('second')}{fraction}"
    )
    return f"CASE WHEN {regex_match_sql(s, pattern, dialect)} THEN {guarded_cast_sql(as_text(iso, dialect), 'timestamp', dialect)} END"


def portable(fmt: str) -> bool:
    """Every directive of the strftime format `fmt` is one DIRECTIVES reads (or `%%`), and they
    name a whole date, which the regex needs (a format without one stays DuckDB's, as before)."""
    found = re.findall(r"%(.?)", fmt)
    dated = {"Y", "y"} & set(found) and "d" in found and {"m", "b", "B"} & set(found)
    return bool(dated) and all(d == "%" or d in DIRECTIVES for d in found)


def parse_ts_sql(value_sql: str, fmt: str, dialect: str) -> str:
    if fmt in ("ISO8601", "ISO8601_INSTANT"):
        return iso8601_sql(value_sql, fmt == "ISO8601_INSTANT", dialect)
    if dialect == "duckdb" and not portable(fmt):
        # a directive only DuckDB's strptime reads (decision 1126); a portable format takes the
        # regex below on DuckDB too, since strptime is laxer (spaces, year 0, '24' for %Y: 0961)
        parsed = f"TRY_STRPTIME({as_text(value_sql, dialect)}, {lit(fmt, dialect)})"
        # a zone directive makes try_strptime return TIMESTAMPTZ
        if "%z" in fmt or "%Z" in fmt:
            return f"CAST(TIMEZONE('UTC', {parsed}) AS TIMESTAMP)"
        return parsed
    return strftime_sql(value_sql, fmt, dialect)


def parse_date_sql(value_sql: str, fmt: str, dialect: str) -> str:
    if fmt == "ISO8601":
        s = as_text(value_sql, dialect)
        return f"CASE WHEN {regex_match_sql(s, '^' + DATE_RE + '$', dialect)} THEN {guarded_cast_sql(s, 'date', dialect)} END"
    if fmt == "ISO8601_INSTANT":
        raise AssayMacroError("assay_parse_date: a date has no instant; use ISO8601")
    return f"CAST({parse_ts_sql(value_sql, fmt, dialect)} AS {type_name('date', dialect)})"


@macro()
def assay_parse_ts(evaluator, value: exp.Expr, fmt: str) -> exp.Expr:
    """Text to a UTC timestamp: 'ISO8601' (offset optional), 'ISO8601_INSTANT' (offset required) or strftime.

    Strict: '20251231', '2025-02-30', '23:59:60' and '' are NULL; offsets are converted to UTC.

    >>> from assay_sqlmesh import render_sql
    >>> "TRY_STRPTIME" in render_sql("@assay_parse_ts(x, '%d/%m/%Y')", "duckdb")  # portable: the regex (0961)
    False
    >>> "TRY_STRPTIME" in render_sql("@assay_parse_ts(x, '%d/%m/%Y %I%p')", "duckdb")  # DuckDB's only (1126)
    True
    >>> render_sql("@assay_parse_ts(x, 'ISO8601_INSTANT')", "postgres").startswith("CASE WHEN (CAST(x AS TEXT) ~ '^")
    True
    """
    d = dialect_of(evaluator)
    return render(parse_ts_sql(text(value, d), string_arg(fmt, "the format"), d), d)


@macro()
def assay_ingestion_timestamp(evaluator, value: exp.Expr) -> exp.Expr:
    """`_ingested_at` as an instant: a zoneless UTC timestamp, an offset converted rather than dropped,
    so deliveries order by when they happened. NULL when the value is no ISO 8601 timestamp. The
    dedupe order, the ingestion audit, freshness and the reject table's first/last seen all read
    `_ingested_at` through this one macro.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_ingestion_timestamp(b._ingested_at)", "duckdb") == render_sql("@assay_parse_ts(b._ingested_at, 'ISO8601')", "duckdb")
    True
    """
    d = dialect_of(evaluator)
    return render(parse_ts_sql(text(value, d), "ISO8601", d), d)


@macro()
def assay_parse_date(evaluator, value: exp.Expr, fmt: str) -> exp.Expr:
    """Text to a date: 'ISO8601' (YYYY-MM-DD only) or a strftime format.

    >>> from assay_sqlmesh import render_sql
    >>> "TRY_CAST(TRIM(CAST(x AS TEXT)) AS DATE)" in render_sql("@assay_parse_date(x, 'ISO8601')", "duckdb")
    True
    """
    d = dialect_of(evaluator)
    return render(parse_date_sql(text(value, d), string_arg(fmt, "the format"), d), d)


@macro()
def assay_to_utc(evaluator, value: exp.Expr, zone: str) -> exp.Expr:
    """A local wall-clock timestamp in the named zone, as the UTC wall clock.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_to_utc(ts, 'Europe/Berlin')", "duckdb")
    "TIMEZONE('UTC', TIMEZONE('Europe/Berlin', CAST(ts AS TIMESTAMP)))"
    """
    d = dialect_of(evaluator)
    template = pick(TO_UTC, d)
    z = lit(string_arg(zone, "the zone"), d)
    # Spark's later reading of a repeated local time: the local time less the zone's offset six
    # hours after the earlier reading (TO_UTC's spark entry)
    x = f"CAST({text(value, d)} AS TIMESTAMP)"
    early = f"TO_UTC_TIMESTAMP({x}, {z})"
    after = f"({early} + INTERVAL 6 HOURS)"
    late = f"TIMESTAMP_MICROS(UNIX_MICROS({x}) - (UNIX_MICROS(FROM_UTC_TIMESTAMP({after}, {z})) - UNIX_MICROS({after})))"
    return render(template, d, x=value, z=z, ts=type_name("timestamp", d), early=early, late=late)
