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

# A try-cast to timestamp reads text as a `timestamp` field does (lower/instants.py): the offset after
# the time converted to UTC, an offset ISO 8601 does not spell refused. The engines' own casts
# dropped the offset (`05:30:00-07` read 05:30), or refused `T05:30+05:30` on DuckDB only (an
# outside tester, session 45). A timestamp operand reads as its own text.
TIMES = ["2026-01-05 05:30:00-07", "2026-01-05T05:30+05:30", "2026-01-05 05:30:00+0530",
         "2026-01-05 12:30:00 +00:00", "2026-01-05 12:30:00", "2026-01-05T12:30:00Z", "abc", None]
TIMED = [
    ("try_cast(v as timestamp) = '2026-01-05 12:30:00'", [True, False, None, None, True, True, None, None]),
    ("try_cast(v as timestamp) = '2026-01-05 00:00:00'", [False, True, None, None, False, False, None, None]),
    ("try_cast(try_cast(v as timestamp) as timestamp) is null", [False, False, True, True, False, False, True, True]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("text", "want"), TRIED)
def test_a_try_cast_is_assays_on_duckdb(target, text, want):
    expr = _expr(target, "duckdb", text)
    assert _run(duckdb.connect(), "duckdb", expr, VALUES) == want


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("text", "want"), TIMED)
def test_a_try_cast_to_timestamp_reads_the_offset_on_duckdb(target, text, want):
    assert _run(duckdb.connect(), "duckdb", _expr(target, "duckdb", text), TIMES) == want


@pytest.mark.postgres
@pytest.mark.parametrize("target", TARGETS)
def test_a_try_cast_is_assays_on_postgres(postgres_server, target):
    with postgres_cursor(postgres_server, "UTC") as cur:
        for text, want in TRIED:
            assert _run(cur, "postgres", _expr(target, "postgres", text), VALUES) == want, text
        for text, want in TIMED:
            assert _run(cur, "postgres", _expr(target, "postgres", text), TIMES) == want, text


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
def test_a_division_is_a_true_division_on_duckdb(target):
    """DuckDB's `/` divides as numbers whatever its operands (10 / 4 = 2.5), as Spark's does."""
    expr = _expr(target, "duckdb", "try_cast(v as int) / 4 = 2.5")
    assert _run(duckdb.connect(), "duckdb", expr, ["12", "10", "abc", None]) == [False, True, None, None]


@pytest.mark.postgres
@pytest.mark.parametrize("target", TARGETS)
def test_a_division_is_a_true_division_on_postgres(postgres_server, target):
    """PostgreSQL's spelling casts to a double first: its own `/` of two integers truncates."""
    with postgres_cursor(postgres_server, "UTC") as cur:
        expr = _expr(target, "postgres", "try_cast(v as int) / 4 = 2.5")
        assert _run(cur, "postgres", expr, ["12", "10", "abc", None]) == [False, True, None, None]


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


# decision 1148: dbt writes an expression in each engine's grammar. In PostgreSQL's, which it wrote
# for every engine, a division is `CAST(x AS DOUBLE PRECISION)`, which Spark cannot parse (an
# outside tester, session 43), and `v ~ 'p'` a whole-value match on DuckDB.
DIVIDED = ["12", "10", "abc", None]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("target", TARGETS)
def test_the_expressions_judge_alike_on_spark(target):
    """Spark through the test process's session (tests/support/spark.py); the SQLMesh target
    refuses Spark, but its macros hold Spark spellings and are held to the same cases."""
    from tests.support import spark

    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    wh = spark.shared_warehouse()

    def run(text: str, values) -> list:
        rows = ", ".join(f"({i}, cast({'null' if v is None else repr(v)} as string))" for i, v in enumerate(values))
        sql = f"select i, {_expr(target, 'spark', text)} from (values {rows}) as t(i, v) order by i"
        return [r[1] for r in wh.call("named", sql)[1]]

    for text, want in TRIED:
        assert run(text, VALUES) == want, text
    for text, want in TIMED:
        assert run(text, TIMES) == want, text
    for text, want in MATCHED:
        assert run(text, WORDS) == want, text
    assert run("try_cast(v as int) / 2 > 5", DIVIDED) == [True, False, None, None]
    assert run("try_cast(v as int) / 4 = 2.5", DIVIDED) == [False, True, None, None]
    # the Spark catalog validation reads (decision 1151) holds every function this Spark has
    if target == TARGETS[0]:
        from assay.engine_functions import names

        have = {r[0].lower() for r in wh.call("named", "show functions")[1]}
        assert {n for n in have if n.replace("_", "a").isalnum()} - names("spark") == set(), \
            "run scripts/engine_functions.py spark"


# A text ordering orders by code point on PostgreSQL too (`COLLATE "C"`), as on DuckDB and Spark: on
# a database whose collation is ICU's `en-US`, `note < 'b'` kept `á` and refused `B` (an outside
# tester, session 43). PostgreSQL 15's server has ICU's collations; the values carry one.
ORDERED = ["B", "á", "a", "c", None]
ORDERINGS = [
    ("v < 'b'", [True, False, True, False, None]),
    ("upper(v) between 'A' and 'B'", [True, False, True, False, None]),
    ("'b' > v", [True, False, True, False, None]),
]


@pytest.mark.postgres
@pytest.mark.parametrize("target", TARGETS)
def test_a_text_ordering_is_by_code_point_on_postgres(pg_servers, target):
    with postgres_cursor(pg_servers.get("system"), "UTC") as cur:
        for text, want in ORDERINGS:
            expr = spelled(target, "postgres", lambda sp: authored(sp, text, types={"v": "string"}))
            rows = ", ".join(f"({i}, cast({'null' if v is None else repr(v)} as text) collate \"en-US-x-icu\")"
                             for i, v in enumerate(ORDERED))
            cur.execute(f"select i, {expr} from (values {rows}) as t(i, v) order by i")
            assert [r[1] for r in cur.fetchall()] == want, text
        # what the database's collation says without it (the test reads a collation that differs)
        cur.execute("select 'B' < ('b' collate \"en-US-x-icu\"), 'á' < ('b' collate \"en-US-x-icu\")")
        assert cur.fetchone() == (False, True)


@pytest.mark.postgres
def test_the_function_catalogs_hold_each_postgres_servers_functions(pg_servers):
    """Validation warns of an expression's call an engine lacks from the catalogs of
    generator/assay/engine_functions (decision 1151): a function the server has that its catalog
    lacks would be warned of falsely. PostgreSQL 15's is the system server's, 18's the wheel's."""
    from assay.engine_functions import names

    for label, catalog in (("embedded", "postgres18"), ("system", "postgres15")):
        with postgres_cursor(pg_servers.get(label), "UTC") as cur:
            cur.execute("select distinct proname from pg_proc where prokind = 'f' and pronamespace = 'pg_catalog'::regnamespace")
            have = {r[0].lower() for r in cur.fetchall()}
        assert {n for n in have if n.replace("_", "a").isalnum()} - names(catalog) == set(), \
            f"run scripts/engine_functions.py {catalog}"
