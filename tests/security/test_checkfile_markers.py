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
