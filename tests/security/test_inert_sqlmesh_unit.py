"""The SQLMesh target's Jinja-safe spelling (decision 0971), judged by Jinja's own parser (the one
SQLMesh scans every model query with at load) and by the macros that fold the text back."""

from __future__ import annotations

import jinja2
import pytest
import sqlglot

from assay.lower.authored import authored
from assay.targets.sqlmesh import jinja_safe
from assay.targets.sqlmesh.spelling import SqlmeshSpelling
from assay_sqlmesh._core import string_arg

from tests.security.test_inert_unit import texts

ENV = jinja2.Environment(extensions=["jinja2.ext.do"])


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "spark"])
@pytest.mark.parametrize("text", texts())
def test_a_literal_parses_as_jinja_text_and_folds_back(text, dialect):
    sql = SqlmeshSpelling(dialect).string(text)
    ENV.parse(sql)  # raises TemplateSyntaxError on any opener left
    assert not jinja_safe.has_opener(sql)
    assert string_arg(sqlglot.parse_one(sql, read=dialect), "a text") == text


@pytest.mark.parametrize("text", [t for t in texts() if "\n" not in t])
def test_an_authored_expression_keeps_its_values_and_loses_its_openers(text):
    """An expression rule's literal and comment: the literal's value is unchanged, no opener is left."""
    quoted = "'" + text.replace("'", "''") + "'"
    sql = authored(SqlmeshSpelling("duckdb"), f"c <> {quoted} /* {text.replace('*/', '')} */")
    ENV.parse(sql)
    literal = sqlglot.parse_one(sql, read="duckdb").expression
    assert string_arg(literal, "a text") == text


def test_text_without_openers_is_one_literal():
    assert SqlmeshSpelling("duckdb").string("a}}b%}#}{ {") == "'a}}b%}#}{ {'"


def test_a_text_of_many_openers_stays_shallow():
    """Thousands of openers: the concatenation is joined pairwise, so its depth is logarithmic
    (a left-deep chain passed DuckDB's expression depth limit of 1000 and stopped the plan)."""
    text = "x{{" * 5000
    tree = sqlglot.parse_one(SqlmeshSpelling("duckdb").string(text), read="duckdb")
    assert _depth(tree) < 40
    assert string_arg(tree, "a text") == text


def _depth(node) -> int:
    return 1 + max((_depth(c) for c in node.iter_expressions()), default=0)
