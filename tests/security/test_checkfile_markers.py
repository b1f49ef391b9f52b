"""A SQL check file's text is never mistaken for the markers the targets put into it (the
relation a check reads is swapped for the candidate or `@this_model` by text search): a literal
or name spelling a marker keeps its value on dbt and on SQLMesh."""

from __future__ import annotations

from types import SimpleNamespace

import jinja2
import pytest

from assay.identifiers import unused_marker
from assay.targets.dbt.sql_checks import _against_candidate, _jinja_sql
from assay.targets.sqlmesh.checks import _sql_against_this

MARKERS = ("assay_this_model_placeholder", "assay_candidate_placeholder", "ASSAY_OWN_ALIAS_PLACEHOLDER")


def check(sql: str):
    return SimpleNamespace(sql=sql, table="thing", namespace="silver")


@pytest.mark.parametrize("marker", MARKERS)
def test_a_literal_spelling_a_marker_keeps_its_value(marker):
    c = check(f"select * from silver.thing where note = '{marker}'")
    assert _sql_against_this(c, "silver", "duckdb") == f"SELECT * FROM @this_model AS \"thing\" WHERE note = '{marker}'"
    spelled, candidate, alias, escaped = _against_candidate(c, "silver")
    for dialect, sql in spelled.items():  # each engine's spelling (decision 0964)
        rendered = jinja2.Environment().from_string("{{ " + _jinja_sql(sql, "thing", candidate, alias, escaped) + " }}")
        assert rendered.render(candidate="CAND", adapter=SimpleNamespace(quote=lambda n: f'"{n}"')) == \
            f"SELECT * FROM CAND AS \"thing\" WHERE note = '{marker}'", dialect


def test_a_marker_is_lengthened_past_every_case_of_itself():
    assert unused_marker("m_x", "a M_X b m_x_") == "m_x__"
    assert unused_marker("m_x", "nothing") == "m_x"


@pytest.mark.parametrize("sql, expected", [
    ("select id from silver.thing where silver.thing.s is null order by id",
     'SELECT id FROM {c} AS "thing" WHERE "thing".s IS NULL ORDER BY id'),
    ("select silver.thing.id from wh.silver.thing where wh.silver.thing.s is null order by 1",
     'SELECT "thing".id FROM {c} AS "thing" WHERE "thing".s IS NULL ORDER BY 1'),
    ("select id from silver.thing where not exists (select 1 from silver.thing x where x.id < silver.thing.id) and s is null",
     'SELECT id FROM {c} AS "thing" WHERE NOT EXISTS(SELECT 1 FROM {c} AS x WHERE x.id < "thing".id) AND s IS NULL'),
])
def test_a_column_qualified_by_schema_and_table_reads_the_candidate(sql, expected):
    """An outside tester (session 44): `where silver.thing.s is null` is valid SQL, but once
    `silver.thing` was the candidate `AS "thing"` the qualifier named nothing, and the check was
    recorded `errored` (Binder Error) on dbt and SQLMesh. The column names the alias (decision 1154),
    in DuckDB's and PostgreSQL's spelling, and the DuckDB text returns the rows the file does."""
    import duckdb

    c = check(sql)
    texts = {f"sqlmesh {d}": _sql_against_this(c, "silver", d, "cand") for d in ("duckdb", "postgres")}
    spelled, candidate, alias, escaped = _against_candidate(c, "silver")
    for dialect, text in spelled.items():
        rendered = jinja2.Environment().from_string("{{ " + _jinja_sql(text, "thing", candidate, alias, escaped) + " }}")
        texts[f"dbt {dialect}"] = rendered.render(candidate="cand", adapter=SimpleNamespace(quote=lambda n: f'"{n}"'))
    assert texts == dict.fromkeys(texts, expected.format(c="cand"))
    con = duckdb.connect()
    con.execute("attach ':memory:' as wh; use wh; create schema silver")
    con.execute("create table silver.thing as select * from (values (1, null), (2, 'x'), (3, null)) v(id, s)")
    con.execute("create table cand as select * from silver.thing")
    by_hand = con.execute(sql).fetchall()
    assert by_hand == ([(1,)] if "exists" in sql else [(1,), (3,)])
    assert con.execute(texts["dbt duckdb"]).fetchall() == con.execute(texts["sqlmesh duckdb"]).fetchall() == by_hand


def test_a_table_read_under_its_own_alias_keeps_a_schema_qualified_column_as_written():
    """`from silver.thing t where silver.thing.s` does not resolve in the engines (the alias hides the
    name): the rewrite does not make it valid, so assay's verdict is the engine's."""
    c = check("select * from silver.thing t where silver.thing.s is null")
    assert _sql_against_this(c, "silver", "duckdb") == "SELECT * FROM @this_model AS t WHERE silver.thing.s IS NULL"
