"""A `timestamp` field read from text keeps the instant its offset names (decision 0998).

A plain cast of `2026-01-05 05:30:00-07` to TIMESTAMP keeps 05:30 and drops the offset on DuckDB
and PostgreSQL, so the stored value was seven hours off, silently. `lower.fields.text_to_timestamp`
reads text with an offset as ISO 8601 and converts it to UTC; an offset ISO 8601 does not spell is
a coercion failure (NULL) instead of a wrong time. The lowered expression is spelled by each target
(the dbt package's macros rendered as dbt renders them, the SQLMesh macros expanded) and run on
DuckDB and PostgreSQL 18, with the session in a zone that is not UTC, so that nothing depends on it.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from assay.lower.fields import text_to_timestamp
from tests.lower.target_sql import TARGETS, postgres_cursor, spelled

T = dt.datetime
# text -> the stored value on an opted-in entity (NULL: a coercion failure, the row is judged)
CASES = [
    ("2026-01-05 05:30:00-07", T(2026, 1, 5, 12, 30)),
    ("2026-01-05T05:30:00-07:00", T(2026, 1, 5, 12, 30)),
    ("2026-01-05T05:30:00+05:30", T(2026, 1, 5, 0, 0)),
    ("2026-01-05 23:30:00.25-01", T(2026, 1, 6, 0, 30, 0, 250000)),
    ("2026-01-05 05:30+02", T(2026, 1, 5, 3, 30)),
    ("2026-01-05T05:30:00Z", T(2026, 1, 5, 5, 30)),
    ("2026-01-05 05:30:00", T(2026, 1, 5, 5, 30)),
    ("2026-01-05", T(2026, 1, 5)),  # the '-05' of a date is no offset
    ("2026-01-05 05:30:00+0530", None),  # DuckDB's cast read 05:30 and dropped the offset
    ("2026-01-05 05:30:00 +02:00", None),  # PostgreSQL's did
    ("2026-02-30 05:30:00+01", None),
    ("not a time", None),
    # decision 1149 (an outside tester, session 43): a zone assay does not read is no instant on any
    # engine (PostgreSQL kept the wall clock of each, DuckDB refused them, Spark applied some);
    # `Z` and `UTC` name UTC; spaces around the text are trimmed
    ("2026-03-01 10:00:00+01:00:00", None),
    ("2026-03-01 10:00:00-0", None),
    ("2026-03-01 10:00:00+1", None),
    ("2026-03-01 10:00:00 UTC+01:00", None),
    ("2026-03-01 10:00:00Z+01:00", None),
    ("2026-03-01 10:00:00 UTC-5", None),
    ("2026-03-01 10:00 PM", None),
    ("2026-03-01 10:00:00 Z", T(2026, 3, 1, 10, 0)),
    ("2026-03-01 10:00:00 UTC", T(2026, 3, 1, 10, 0)),
    ("2026-03-01T10:00:00.5UTC", T(2026, 3, 1, 10, 0, 0, 500000)),
    ("2026-03-01T10:00:00+01:00 ", T(2026, 3, 1, 9, 0)),
    (" 2026-03-01T10:00:00-07", T(2026, 3, 1, 17, 0)),
    ("2026-03-01 10:00:00 ", T(2026, 3, 1, 10, 0)),
    (None, None),
]
ZONE = "America/Los_Angeles"


def _spelled(target: str, engine: str, safe: bool) -> str:
    return spelled(target, engine, lambda sp: text_to_timestamp(sp, "v", safe))


SPELLINGS = {target: (lambda engine, safe, target=target: _spelled(target, engine, safe)) for target in TARGETS}


def _values(engine: str) -> str:
    text = "varchar" if engine == "duckdb" else "text"
    rows = ", ".join(f"({i}, cast({'null' if v is None else repr(v)} as {text}))" for i, (v, _) in enumerate(CASES))
    return f"(values {rows}) as t(i, v)"


def _run(cur, engine: str, expr: str) -> list:
    cur.execute(f"select i, {expr} from {_values(engine)} order by i")
    return [row[1] for row in cur.fetchall()]


@pytest.mark.parametrize("target", list(SPELLINGS))
def test_offsets_are_converted_on_duckdb(target):
    conn = duckdb.connect()
    conn.execute(f"SET TimeZone = '{ZONE}'")
    assert _run(conn, "duckdb", SPELLINGS[target]("duckdb", True)) == [want for _, want in CASES]


@pytest.mark.postgres
@pytest.mark.parametrize("target", list(SPELLINGS))
def test_offsets_are_converted_on_postgres(postgres_server, target):
    with postgres_cursor(postgres_server, ZONE) as cur:
        assert _run(cur, "postgres", SPELLINGS[target]("postgres", True)) == [want for _, want in CASES]


@pytest.mark.parametrize("target", list(SPELLINGS))
def test_off_an_opted_in_entity_an_iso_offset_is_converted_too(target):
    """The raising cast of an entity outside the quality system reads the same instants; only text
    no ISO 8601 reading accepts is left to the engine's cast (which raises on a bad value)."""
    conn = duckdb.connect()
    conn.execute(f"SET TimeZone = '{ZONE}'")
    good = [(i, v, want) for i, (v, want) in enumerate(CASES) if want is not None]
    expr = SPELLINGS[target]("duckdb", False)
    rows = ", ".join(f"({i}, {v!r})" for i, v, _ in good)
    conn.execute(f"select i, {expr} from (values {rows}) as t(i, v) order by i")
    assert [r[1] for r in conn.fetchall()] == [want for _, _, want in good]
    with pytest.raises(duckdb.ConversionException):
        conn.execute(f"select {expr} from (values ('not a time')) as t(v)").fetchall()
    # a zone assay does not read stops the build with assay's sentence (decision 1149)
    for text in ("2026-03-01 10:00:00+01:00:00", "2026-03-01 10:00:00 +0530"):
        with pytest.raises(duckdb.ConversionException, match="assay: a timestamp's zone after its time"):
            conn.execute(f"select {expr} from (values ('{text}')) as t(v)").fetchall()
