"""An expression rule's casts as the judged row evaluates them (decision 1146), spelled by each
target and run on DuckDB and PostgreSQL 18.

- `try_cast` is assay's try-cast: sqlglot's PostgreSQL spelling (dbt's, and a PostgreSQL SQLMesh
  project's) wrote it as a plain CAST, which stopped the build on the value the rule judges;
- a plain cast of a `pii` column stops on the same values as before, with assay's sentence and
  never the value (the engine's message gave it, and dbt and SQLMesh print it);
- any other cast is written as authored."""

from __future__ import annotations

import duckdb
import pytest

from assay.lower.authored import authored
from tests.lower.target_sql import TARGETS, postgres_cursor, spelled

SAID = "assay: expression rule r of e could not cast a value of a pii field (not shown)"
SECRET = "SECRET-4711"


def _expr(target: str, engine: str, text: str, private=frozenset({"ssn"})) -> str:
    return spelled(target, engine, lambda sp: authored(sp, text, private, SAID))


def _run(cur, engine: str, expr: str, values) -> list:
    text = "varchar" if engine == "duckdb" else "text"
    rows = ", ".join(f"({i}, cast({'null' if v is None else repr(v)} as {text}))" for i, v in enumerate(values))
    cur.execute(f"select i, {expr} from (values {rows}) as t(i, v) order by i")
    return [row[1] for row in cur.fetchall()]


VALUES = ["12", " 7 ", "abc", "1.5", None]
TRIED = [  # expression over v (not private) -> its value per row of VALUES
    ("try_cast(v as int) is not null", [True, True, False, False, False]),
    ("try_cast(v as integer) > 10", [True, False, None, None, None]),
    ("try_cast(v as decimal(5,1)) = 1.5", [False, False, None, True, None]),
    ("try_cast(try_cast(v as int) as varchar) = '12'", [True, False, None, None, None]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("text", "want"), TRIED)
def test_a_try_cast_is_assays_on_duckdb(target, text, want):
    expr = _expr(target, "duckdb", text)
    assert _run(duckdb.connect(), "duckdb", expr, VALUES) == want


@pytest.mark.postgres
@pytest.mark.parametrize("target", TARGETS)
def test_a_try_cast_is_assays_on_postgres(postgres_server, target):
    with postgres_cursor(postgres_server, "UTC") as cur:
        for text, want in TRIED:
            assert _run(cur, "postgres", _expr(target, "postgres", text), VALUES) == want, text


@pytest.mark.parametrize("target", TARGETS)
def test_a_private_cast_stops_with_assays_sentence_on_duckdb(target):
    expr = _expr(target, "duckdb", "cast(v as int) > 0", private=frozenset({"v"}))
    conn = duckdb.connect()
    assert _run(conn, "duckdb", expr, ["12", "0", None]) == [True, False, None]
    with pytest.raises(duckdb.Error) as raised:
        _run(conn, "duckdb", expr, ["12", SECRET])
    assert SAID in str(raised.value) and SECRET not in str(raised.value)


@pytest.mark.postgres
@pytest.mark.parametrize("target", TARGETS)
def test_a_private_cast_stops_with_assays_sentence_on_postgres(postgres_server, target):
    expr = _expr(target, "postgres", "v::int > 0", private=frozenset({"v"}))
    with postgres_cursor(postgres_server, "UTC") as cur:
        assert _run(cur, "postgres", expr, ["12", "0", None]) == [True, False, None]
        with pytest.raises(Exception) as raised:
            _run(cur, "postgres", expr, ["12", SECRET])
        assert SAID in str(raised.value) and SECRET not in str(raised.value)


@pytest.mark.parametrize("target", TARGETS)
def test_other_casts_are_written_as_authored(target):
    """A cast of a column that is not pii keeps the engine's cast, whose message is the fastest way
    to the bad row; a cast to a type assay has no portable cast to is never rewritten."""
    expr = _expr(target, "duckdb", "cast(v as int) > 0 and cast(ssn as double) > 0")
    assert "try_cast" not in expr.lower()
    assert SAID not in expr


# decision 1147: a search is a search and a whole-value match a whole-value match on every engine
# (dbt's PostgreSQL spelling `v ~ 'o'` is a whole-value match on DuckDB; REGEXP_FULL_MATCH is
# DuckDB's alone)
WORDS = ["Rome", "Oslo", "abc", "x.y", None]
MATCHED = [
    ("regexp_matches(v, 'o')", [True, True, False, False, None]),
    ("v ~ '[A-Z][a-z]+'", [True, True, False, False, None]),
    ("regexp_full_match(v, 'o')", [False, False, False, False, None]),
    ("not regexp_matches(v, '\\.')", [True, True, True, False, None]),
    ("v ~ 'a|Oslo'", [False, True, False, False, None]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("text", "want"), MATCHED)
def test_a_regex_call_judges_alike_on_duckdb(target, text, want):
    assert _run(duckdb.connect(), "duckdb", _expr(target, "duckdb", text), WORDS) == want


@pytest.mark.postgres
@pytest.mark.parametrize("target", TARGETS)
def test_a_regex_call_judges_alike_on_postgres(postgres_server, target):
    with postgres_cursor(postgres_server, "UTC") as cur:
        for text, want in MATCHED:
            assert _run(cur, "postgres", _expr(target, "postgres", text), WORDS) == want, text
