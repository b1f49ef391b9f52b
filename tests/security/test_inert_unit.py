"""The dbt target's inert spelling, judged by Jinja itself (the engine dbt renders with)."""

from __future__ import annotations

import itertools
import random

import jinja2
import pytest

from assay.lower.authored import authored
from assay.targets.dbt.spelling import inert, jexpr, jinja_blocks, sql_str
from assay.targets.header import printable_name

# A template's own last newline is dropped by default; these texts stand inside a file, not at its end.
ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
ALPHABET = ["{", "}", "%", "#", "{{", "}}", "{%", "%}", "{#", "#}", '"', "'", "\\", "\n", "a", " ", "-", "@", "$$"]


def render(template: str, **context) -> str:
    return ENV.from_string(template).render(**context)


def texts():
    rng = random.Random(21)
    fixed = ["", "{", "{{", "{{{", "{%", "{#", "x{{ y }}z", "{% raw %}", "}}", "{{ env_var('X') }}", "{#}"]
    return fixed + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12))) for _ in range(120)]


@pytest.mark.parametrize("text", texts())
def test_inert_text_renders_to_itself(text):
    assert render(inert(text)) == text


@pytest.mark.parametrize("text", texts())
def test_a_literal_renders_to_the_quoted_value(text):
    if "\\" in text:  # goes through assay.string_literal, a package macro
        assert sql_str(text).startswith("{{ assay.string_literal(")
        return
    assert render(sql_str(text)) == "'" + text.replace("'", "''") + "'"


@pytest.mark.parametrize("text", [t for t in texts() if "\\" not in t])
def test_a_fragment_handed_to_a_macro_is_the_rendered_sql(text):
    """`jexpr` of SQL holding a literal evaluates to the SQL as dbt would render it."""
    sql = "x = " + sql_str(text) + " and {{ f(\"a}}b\", {'k': {'j': 1}}) }}"
    expected = render(sql, f=lambda s, d: f"F({s},{d['k']['j']})")
    got = render("{{ " + jexpr(sql) + " }}", f=lambda s, d: f"F({s},{d['k']['j']})")
    assert got == expected


def test_blocks_end_where_jinja_ends_them():
    sql = 'a {{ g("}}", {"x": {"y": "}}"}}) }} b {{ "{" }}{ c'
    assert jinja_blocks(sql) == [(False, "a "), (True, 'g("}}", {"x": {"y": "}}"}})'), (False, " b "), (True, '"{"'), (False, "{ c")]


def test_an_unclosed_block_is_an_error_not_text():
    with pytest.raises(ValueError):
        jinja_blocks("select {{ x ")


@pytest.mark.parametrize("name, shown", [("a\nb.yml", "a\\u000ab.yml"), ("a\u2028b", "a\\u2028b"), ("a\\b", "a\\u005cb"), ("é{{x}}.yml", "é{{x}}.yml")])
def test_file_names_in_headers_are_one_line(name, shown):
    assert printable_name(name) == shown


def test_inert_leaves_text_without_openers_unchanged():
    for a, b in itertools.product("{}%#a", repeat=2):
        text = a + b
        assert (inert(text) == text) == (text not in ("{{", "{%", "{#"))


@pytest.mark.parametrize("value", ["a\\' or x = 1 or '", "b\\n{{", "\\\\"])
def test_a_backslash_literal_of_authored_sql_goes_through_the_package(value):
    """sqlglot's PostgreSQL spelling keeps a backslash bare, which Spark reads as an escape (so
    `'a\\'' or x = 1 or '''` ended the literal early there and ran the rest as SQL): an expression
    rule's or a SQL check file's literal holding one is `assay.string_literal`, as every value is."""
    from types import SimpleNamespace

    from assay.targets.dbt.spelling import DbtSpelling
    from assay.targets.dbt.sql_checks import _against_candidate

    quoted = "'" + value.replace("'", "''") + "'"
    assert authored(DbtSpelling(), f"c <> {quoted}") == "c <> " + sql_str(value)
    check = SimpleNamespace(sql=f"select * from silver.thing where c <> {quoted}", table="thing", namespace="silver")
    spelled, _candidate, _alias, escaped = _against_candidate(check, "silver")
    assert list(escaped.values()) == [value] and not any("\\" in sql for sql in spelled.values())
