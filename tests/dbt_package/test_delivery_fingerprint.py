"""`assay.delivery_fingerprint` and `assay.fingerprint_sum` (decision 0406), rendered from the
package's own Jinja and run: DuckDB and PostgreSQL 18 here, Spark in
tests/integration/test_spark_macro_table.py.

What the settled-load bound needs of them: a fingerprint is the same for the same raw values, and
different deliveries fingerprint differently even where a careless text join would collide (NULL
against the empty string, a separator inside a value); the sum is exact over many 64-bit values.
"""

from __future__ import annotations

import duckdb
import pytest

from tests.dbt_package.test_macro_render import render_env

# (source row id, ingested at) as SQL literals: pairs a text join could confuse
PAIRS = [("'a'", "'x'"), ("'a'", "null"), ("null", "'a'"), ("''", "null"), ("null", "''"), ("null", "null"),
         ("'a|'", "'x'"), ("'a'", "'|x'"), ("'1:a'", "'x'"), ("'a'", "'2026-01-01T10:00:00Z'"),
         ("'a'", "'2026-01-01T10:30:00Z'")]


def fingerprint_query(engine: str) -> str:
    """One row: each pair's fingerprint twice (f<i>, g<i>)."""
    assay = render_env(engine)
    cols = []
    for n, (row_id, ingested) in enumerate(PAIRS):
        fp = assay.delivery_fingerprint(row_id, ingested)
        cols += [f"{fp} as f{n}", f"{fp} as g{n}"]
    return "select " + ", ".join(cols)


def sum_query(engine: str, values: str) -> str:
    """The sum of the fingerprints of `values` (a relation `v(x)`) and of the same values again."""
    assay = render_env(engine)
    fp = assay.delivery_fingerprint("x", "null")
    return f"select {assay.fingerprint_sum(fp)} as s from {values}"


def check(row: dict) -> None:
    firsts = [row[f"f{n}"] for n in range(len(PAIRS))]
    assert all(row[f"f{n}"] == row[f"g{n}"] for n in range(len(PAIRS)))
    assert None not in firsts and len(set(firsts)) == len(PAIRS), firsts


def test_fingerprints_tell_deliveries_apart_on_duckdb():
    con = duckdb.connect()
    cur = con.execute(fingerprint_query("duckdb"))
    check(dict(zip([d[0] for d in cur.description], cur.fetchone())))


def test_the_sum_is_exact_on_duckdb():
    con = duckdb.connect()
    # 100,000 values whose 64-bit fingerprints would overflow a 64-bit sum many times over
    (total,) = con.execute(sum_query("duckdb", "(select cast(range as varchar) as x from range(100000)) as v")).fetchone()
    (by_hand,) = con.execute("select sum(cast(hash(cast(range as varchar), cast(null as varchar)) as hugeint)) "
                             "from range(100000)").fetchone()
    assert total == by_hand and total > 2**64


@pytest.mark.postgres
def test_fingerprints_and_their_sum_on_postgres(postgres_server):
    conn = postgres_server.connect()
    try:
        cur = conn.cursor()
        cur.execute(fingerprint_query("postgres"))
        check(dict(zip([d[0] for d in cur.description], cur.fetchone())))
        # hashtextextended is a signed bigint: the numeric sum of 100,000 of them is exact
        cur.execute(sum_query("postgres", "(select cast(g as text) as x from generate_series(1, 100000) as g) as v"))
        (total,) = cur.fetchone()
        cur.execute("select sum(cast(x as numeric)) from (select hashtextextended(cast(length(cast(g as text)) as text) "
                    "|| ':' || cast(g as text) || '|' || '-', 0) as x from generate_series(1, 100000) as g) as v")
        assert total == cur.fetchone()[0] and total is not None
    finally:
        conn.close()
