"""How an operator command's SQL reaches a driver: every name quoted, every value bound.

The operator commands (explain, report, maintain, replay, checks, check list|rows, table list|get)
write their SQL once, in DuckDB's spelling with `?` marks, and splice in only names: schemas from
assay.yml and from `information_schema`, relations, columns read from bronze. A name is never
trusted to be harmless (one read from the warehouse was validated by nobody), so each is quoted
by the shared helper (`assay.identifiers.quote_identifier`), which doubles its quote character.

Values never enter the text: they travel as parameters. Two driver rules make a quoted name
still dangerous to the text around it, and `driver_text` handles both:
- psycopg2 marks a parameter `%s` and, whenever parameters are passed, reads every `%` of the
  text as the start of a mark: a `%` anywhere in the text (a schema named `50%`) is written `%%`;
- `?` is assay's own mark, turned into the driver's only outside quotes, so a `?` inside a quoted
  name stays part of the name.
On PostgreSQL the parameters are therefore always passed, as a tuple (empty when there are none),
so that psycopg2 always reads `%%` back as `%`.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..identifiers import quote_relation

# How each engine's connection marks a query parameter (assay's readers write `?`). A Spark
# connection (runtime/spark_conn.py) takes DuckDB's spelling and turns it into Spark's itself.
PARAM_MARKS = {"duckdb": "?", "postgres": "%s", "spark": "?"}
# The dialect whose SQL text a connection takes: Spark's child transpiles DuckDB's spelling.
SPELLING = {"duckdb": "duckdb", "postgres": "postgres", "spark": "duckdb"}
# What a literal `%` must be written as in the text a driver formats (psycopg2 only).
_PERCENT = {"postgres": "%%"}
_QUOTES = ("'", '"')


def relation(dialect: str, *parts: str) -> str:
    """`schema.table` (or any dotted name) quoted for the connection of `dialect`."""
    return quote_relation(SPELLING[dialect], *parts)


def driver_text(sql: str, dialect: str) -> str:
    """`sql`, written with `?` marks, as the driver of `dialect` takes it: `?` outside quoted names
    and string literals becomes the driver's mark; on psycopg2 every `%` becomes `%%`."""
    mark, percent = PARAM_MARKS[dialect], _PERCENT.get(dialect, "%")
    out: list[str] = []
    inside = None  # the quote character of the quoted name or literal being read
    for ch in sql:
        if inside is not None:
            if ch == inside:
                inside = None  # a doubled quote closes and opens again: still one name
        elif ch in _QUOTES:
            inside = ch
        elif ch == "?":
            out.append(mark)
            continue
        out.append(percent if ch == "%" else ch)
    return "".join(out)


def execute(cur, dialect: str, sql: str, params: Sequence = ()):
    """Run one statement written with `?` marks on `cur`; returns the cursor."""
    cur.execute(driver_text(sql, dialect), tuple(params))
    return cur


def executemany(cur, dialect: str, sql: str, rows: Iterable[Sequence]) -> None:
    """Run one statement written with `?` marks once per row of parameters."""
    cur.executemany(driver_text(sql, dialect), [tuple(r) for r in rows])
