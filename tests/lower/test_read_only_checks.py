"""The measuring of a table assay only reads, per runtime type (lower/read_only_checks.py).

Each variant must measure what the same check measures on a table whose column has that type
(the typed form an entity gets), and types whose SQL is the same are grouped; run on DuckDB, the
variant chosen by a column's real type gives the same numbers as the typed form."""

from __future__ import annotations

import duckdb

from assay.checks.declared import DeclaredCheck
from assay.lower.declared_checks import MeasuringQuery, measure_check
from assay.lower.read_only_checks import RUNTIME_TYPES, measuring_variants
from assay.lower.read_only_checks import _Typed
from tests.lower.duck_spelling import DuckSpelling

SP = DuckSpelling()


def _by_type(variants) -> dict:
    return {t: v for v in variants for t in v.types}


def test_every_runtime_type_is_served_once_and_a_type_blind_check_has_one_variant():
    ranged = DeclaredCheck("AMOUNT_RANGE", "value_range", "required", ("amount",), min_value="0", max_value="10.5")
    variants = measuring_variants(ranged, 1, SP, "t")
    assert sorted(t for v in variants for t in v.types) == sorted(RUNTIME_TYPES)
    # an orderable number and text are measured differently (text has no order to range over);
    # an integer and a decimal too: the bounds are moved onto an integer's grid (0 and 10, exact
    # for an integer), a decimal's unknown precision keeps them as written
    by = _by_type(variants)
    assert len({id(by[t]) for t in ("int", "decimal", "string")}) == 3
    assert "amount > cast('10' as decimal(19,0))" in by["int"].descriptor["rows_sql"]
    assert "amount > cast('10.5' as decimal(3,1))" in by["decimal"].descriptor["rows_sql"]
    assert by["string"].descriptor["rows_sql"] is None
    rows = DeclaredCheck("SOME_ROWS", "row_expectation", "advisory", (), min_rows=1)
    (only,) = measuring_variants(rows, 2, SP, "t")
    assert only.types == ["string"] and only.descriptor["rows_sql"] is None


def test_the_variant_of_a_columns_type_measures_what_the_typed_form_measures():
    con = duckdb.connect()
    con.execute("create table t as select * from (values (1, 'a'), (5, null), (12, 'c'), (null, 'd')) v(amount, label)")
    checks = [DeclaredCheck("AMOUNT_RANGE", "value_range", "required", ("amount",), min_value="0", max_value="10.5"),
              DeclaredCheck("LABEL_NULLS", "null_ceiling", "advisory", ("label",), max_null_ppm=0)]
    for n, (check, typ) in enumerate(zip(checks, ("int", "string")), 1):
        variant = _by_type(measuring_variants(check, n, SP, "t"))[typ]
        typed = MeasuringQuery(SP, "t")
        # the descriptor's column types are the relation's, filled in at run time by the target
        assert {**measure_check(check, n, _Typed({check.columns[0]: typ}), typed), "types": None} == {
            k: v for k, v in variant.descriptor.items() if k != "rows_sql"}
        variant.query.finish()
        typed.finish()
        assert con.execute(variant.query.sql()).fetchall() == con.execute(typed.sql()).fetchall()
        assert con.execute(variant.descriptor["rows_sql"]).fetchall()  # the failing rows are found
