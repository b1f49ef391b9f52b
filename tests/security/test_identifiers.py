"""The identifier rule and its quoting helper (generator/assay/identifiers.py)."""

from __future__ import annotations

import pytest

from assay.identifiers import IDENTIFIER_PATTERN, is_identifier, quote_identifier, quote_relation


@pytest.mark.parametrize("name", ["orders", "_load_id", "Orders", "a1", "x" * 63, "bronze_2"])
def test_plain_names_are_identifiers(name):
    assert is_identifier(name)


@pytest.mark.parametrize(
    "name",
    [
        "", "1orders", "orders\n", "\norders", "or ders", 'a"b', "a`b", "a'b", "a;b", "a%b", "a?b",
        "bronze_@{gateway}", "@var", "{{ x }}", "a$$b", "a-b", "a.b", "x" * 64, "commandé", "ｏrders",
        None, 3,
    ],
)
def test_other_text_is_refused(name):
    assert not is_identifier(name)


def test_a_trailing_newline_is_refused_where_match_with_dollar_would_accept_it():
    import re

    assert re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", "orders\n")  # the bug the helper replaces
    assert IDENTIFIER_PATTERN.fullmatch("orders\n") is None
    assert not is_identifier("orders\n")


@pytest.mark.parametrize(
    "dialect, name, quoted",
    [
        ("duckdb", "orders", '"orders"'),
        ("postgres", 'a"b', '"a""b"'),
        ("postgres", '"; drop table x; --', '"""; drop table x; --"'),
        ("duckdb", "a`b", '"a`b"'),
        ("spark", "orders", "`orders`"),
        ("spark", "a`b", "`a``b`"),
        ("spark", 'a"b', '`a"b`'),
    ],
)
def test_quoting_doubles_the_engine_quote_character(dialect, name, quoted):
    assert quote_identifier(name, dialect) == quoted


def test_relation_parts_are_quoted_one_by_one():
    assert quote_relation("postgres", "bronze", 'or"ders') == '"bronze"."or""ders"'


def test_an_unknown_dialect_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="duckdb"):
        quote_identifier("x", "oracle")


def test_a_quoted_name_round_trips_through_duckdb():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    for name in ['a"b', "x; select 1", "{{ y }}", "a`b"]:
        q = quote_identifier(name, "duckdb")
        con.execute(f"create table {q} ({q} varchar)")
        assert [r[0] for r in con.execute("select column_name from information_schema.columns where table_name = ?", [name]).fetchall()] == [name]


def test_a_name_with_a_trailing_newline_is_not_written_bare():
    from assay.lower.spelling import is_simple

    assert is_simple("orders")
    assert not is_simple("orders\n")
