"""`value_range` bounds moved onto the column's grid (lower/declared_checks.py `outside_range`), run
on DuckDB: the values found outside are exactly those a hand comparison finds, for bounds of any
width 000's grammar allows, including 39 integer digits that no engine's decimal can hold.

A column of a table assay only reads has no precision the generator knows: its bound keeps 38
digits at most, and an engine may still widen a large column to a long bound's scale there."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from assay.checks.declared import DeclaredCheck
from assay.lower.declared_checks import outside_range
from tests.lower.duck_spelling import DuckSpelling

VALUES = {
    "decimal(38,2)": ["-999999999999999999999999999999999999.99", "-0.01", "0", "0.5", "0.54", "0.55",
                      "0.56", "100", "999999999999999999999999999999999999.99"],
    "decimal(5,1)": ["-9999.9", "-0.1", "0", "0.5", "0.6", "9999.9"],
    "int": ["-9223372036854775808", "-1", "0", "1", "9223372036854775807"],
}
BOUNDS = [
    ("-" + "9" * 37 + ".99", "9" * 37 + ".99"),  # 38 digits kept: 10 ** 37 once rounded outward
    ("0.5", "99999999999999999999999999999999999.5"),
    ("0.5", "100"),
    ("0.55", "0.559999999999999999"),
    ("-0.5", "99999999999999999999999999999999999999.999999999999999999"),
    ("-999999999999999999999999999999999999999", "999999999999999999999999999999999999999"),
    ("100000000000000000000000000000000000000", "100000000000000000000000000000000000000"),
    ("-100000000000000000000000000000000000000", "-100000000000000000000000000000000000000"),
    ("0", "0"),
]


@pytest.mark.parametrize("column_type", sorted(VALUES))
@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_outside_is_the_exact_comparison(column_type, lo, hi):
    check = DeclaredCheck("r", "value_range", "required", ("v",), min_value=lo, max_value=hi)
    sql_type = {"int": "bigint"}.get(column_type, column_type)
    values = VALUES[column_type]
    con = duckdb.connect()
    con.execute(f"create table t as select cast(v as {sql_type}) as v from (values "
                + ", ".join(f"('{v}')" for v in values) + ", (null)) as x(v)")
    found = sorted(Decimal(str(r[0])) for r in con.execute(
        f"select v from t where {outside_range(DuckSpelling(), check, column_type)}").fetchall())
    expected = sorted(Decimal(v) for v in values if Decimal(v) < Decimal(lo) or Decimal(v) > Decimal(hi))
    assert found == expected
