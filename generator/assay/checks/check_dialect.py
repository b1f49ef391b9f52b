"""The grammar a SQL check file is read with for the engine that runs it.

A check file is the user's SQL for their warehouse. Read with DuckDB's grammar and written back
for PostgreSQL, sqlglot kept DuckDB's meaning: `qty / 2` became a float division with its divisor
guarded (`CAST(qty AS DOUBLE PRECISION) / NULLIF(2, 0)`), so PostgreSQL's integer division and its
division-by-zero error were gone, and `~` (PostgreSQL's partial regex match, DuckDB's full match)
became `REGEXP_FULL_MATCH`, a function PostgreSQL lacks. A blocking check that PostgreSQL fails
then passed (an outside tester, session 42). So each engine's text is read with that engine's own
grammar first; only a file that grammar cannot read (DuckDB's own syntax, `* EXCLUDE (c)`) is
read as DuckDB reads it and written back in the engine's spelling (decision 0964).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

#: The spellings the dbt target writes a check in: DuckDB's for DuckDB, PostgreSQL's for every
#: other adapter; one text when they agree (decision 0964).
DBT_SPELLINGS = ("duckdb", "postgres")


def read_for(sql: str, dialect: str) -> exp.Expression:
    """The check's one statement as the engine of ``dialect`` reads it (see the module's text)."""
    for grammar in dict.fromkeys((dialect, "duckdb")):
        try:
            statements = [s for s in sqlglot.parse(sql, read=grammar) if s is not None and not isinstance(s, exp.Semicolon)]
        except (ParseError, TokenError):
            continue
        if len(statements) == 1:
            return statements[0]
    return sqlglot.parse_one(sql, read="duckdb")


def other_readings(sql: str, read: exp.Expression) -> list[exp.Expression]:
    """The statements the engines' grammars read from ``sql`` where they differ from ``read``
    (the one validation judged): each is judged too, so no engine runs a call or a write that the
    judged reading does not show."""
    seen = {read.sql()}
    out = []
    for dialect in DBT_SPELLINGS:
        tree = read_for(sql, dialect)
        if tree.sql() not in seen:
            seen.add(tree.sql())
            out.append(tree)
    return out


def replace_own_table(tree: exp.Expression, check, schema: str, relation: str, default_alias: exp.Identifier) -> None:
    """Put ``relation`` (the candidate, or a marker for it) where ``tree`` reads the check's own table
    (``check.table``, unqualified or in ``check.namespace`` or ``schema``), under the alias it was
    read with, else ``default_alias``; in place, on every target's spelling.

    A column may name its table by ``schema.table`` (or ``catalog.schema.table``), as SQL allows
    (``where silver.thing.s is null``); once the table is the aliased candidate that name no longer
    resolves (Binder Error: Referenced table "silver.thing" not found, an outside tester, session
    44), so such a column is made to name the alias the table got (decision 1154)."""

    def own(name: str, db: str) -> bool:
        return name == check.table and (not db or db in (check.namespace, schema))

    unaliased = False
    for table in list(tree.find_all(exp.Table)):
        if own(table.name, table.db):
            unaliased = unaliased or not table.args.get("alias")
            new = exp.to_table(relation)
            new.set("alias", table.args.get("alias") or exp.TableAlias(this=default_alias.copy()))
            table.replace(new)
    if not unaliased:
        return  # read under an alias of its own, `schema.table.c` did not resolve before either
    for column in list(tree.find_all(exp.Column)):
        if column.args.get("db") is not None and own(column.table, column.db):
            column.set("table", default_alias.copy())
            column.set("db", None)
            column.set("catalog", None)
