"""The one table of engine primitives (tests/support/primitive_table.py: the dbt package's
integration seeds, inputs and hand-written outputs) on Apache Spark, for BOTH packages (issue 18).

The integration project has no Spark profile (its `assay_entity` and incremental models need a
catalog of their own), so here each family's integration model (integration_tests/dbt/models/
it_<family>.sql) is rendered with the dbt package's Spark macros, and each family's SQLMesh query
(tests/sqlmesh/test_macro_table.py's) is expanded by SQLMesh for Spark, and both run on the test
process's Spark over the same typed inputs; each must give the expected seed. The SQLMesh target
refuses Spark (decision 0830), but its macros hold Spark spellings and are held to the same table.
"""

from __future__ import annotations

import datetime

import pytest

from assay_sqlmesh import render_sql
from tests.support import spark
from tests.support.primitive_table import FAMILIES, OMITTED, TYPES, compare, jinja_family, seed

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SPARK_TYPES = {"bigint": "bigint", "integer": "int", "varchar": "string", "boolean": "boolean", "date": "date",
               "timestamp": "timestamp", "decimal(10,2)": "decimal(10,2)"}


def relation(name: str) -> str:
    """The input seed `name` as the Spark session's temporary view (written nowhere: no table, no
    file, only the session's catalog)."""
    return f"`macro_table_{name}`"


def _literal(value) -> str:
    from sqlglot import exp

    return "NULL" if value is None else exp.Literal.string(value).sql(dialect="spark")


@pytest.fixture(scope="module")
def warehouse():
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    wh = spark.shared_warehouse()
    # Every input seed as a typed relation, as dbt's seed loader types it (`_seeds.yml`).
    for family in sorted(FAMILIES):
        name = f"{family}_input"
        columns, rows = seed(name)
        typed = ", ".join(f"cast(`{c}` as {SPARK_TYPES[TYPES[name][c]]}) as `{c}`" for c in columns)
        values = ", ".join("(" + ", ".join(_literal(v) for v in r) + ")" for r in rows)
        wh.call("query", f"create or replace temporary view {relation(name)} as select {typed} from values {values} "
                         f"as v({', '.join(f'`{c}`' for c in columns)})")
    yield wh
    spark.close_all()


def rows(wh, sql: str) -> list[dict]:
    names, values = wh.call("named", f"select * from ({sql}) as q order by case_id")
    return [dict(zip(names, r)) for r in values]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_dbt_packages_spark_macros_give_the_expected_rows(warehouse, family):
    compare(family, rows(warehouse, jinja_family(family, "spark", relation)))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_sqlmesh_macros_spark_spelling_gives_the_expected_rows(warehouse, family):
    columns, input_rows = seed(f"{family}_input")
    query = FAMILIES[family](columns, input_rows, "spark").replace("FROM input", f"FROM {relation(family + '_input')}")
    compare(family, rows(warehouse, render_sql(query, "spark")), omitted=OMITTED.get(family, ()))


def test_delivery_fingerprints_on_spark(warehouse):
    """The dbt package's Spark fingerprint and sum (decision 0406; a dbt-only primitive, which
    tests/dbt_package/test_delivery_fingerprint.py holds to the same checks on DuckDB)."""
    from tests.dbt_package.test_delivery_fingerprint import check, fingerprint_query, sum_query

    names, values = warehouse.call("named", fingerprint_query("spark"))
    check(dict(zip(names, values[0])))
    # xxhash64 is signed: the decimal sum of 100,000 of them is exact where a bigint sum overflows
    _, total = warehouse.call("named", sum_query("spark", "(select cast(id as string) as x from range(100000)) as v"))
    _, by_hand = warehouse.call("named", "select sum(cast(xxhash64(concat(coalesce(concat(cast(length(cast(id as string)) "
                                         "as string), ':', cast(id as string)), '-'), '|', '-')) as decimal(38, 0))) "
                                         "from range(100000)")
    assert total == by_hand and total[0][0] is not None


def test_the_incremental_window_keeps_the_fraction_of_a_second_on_spark(warehouse):
    """The window start is the ledger's newest `_ingested_at` minus the lag, to the microsecond as on
    DuckDB (decision 0994): dbt-spark's own `dateadd` counts whole seconds and started it up to a
    second early, so a row that is late on DuckDB was judged on Spark. A dbt-only primitive."""
    from tests.dbt_package.test_macro_render import render_env

    ledger = ("(select cast(t as timestamp) as _ingested_at from values ('2025-01-02 10:30:00.250001'), "
              "('2025-01-01 00:00:00') as v(t)) as ledger")
    start = render_env("spark").incremental_window_start(ledger, 6)
    _, got = warehouse.call("named", f"select {start} as window_start")
    assert got == [(datetime.datetime(2025, 1, 2, 4, 30, 0, 250001),)]
