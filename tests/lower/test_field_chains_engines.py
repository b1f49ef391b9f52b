"""Field chains an outside tester found to crash or to differ by engine (session 37), run as each
target spells them on DuckDB and PostgreSQL 18.

- `to_utc` on text read the text with the engine's raising cast: `garbage` or `''` stopped the
  build of an opted-in entity ("invalid timestamp field format") on every engine, and text naming
  its own offset or `Z` was read as a wall clock of the zone, hours off. Now the text is read by
  the guarded cast first (a coercion failure, with its marker), and text with an offset or `Z` is
  that instant (decision 0967).
- `divide` into an `int` field: DuckDB divides decimals into a DOUBLE, whose text `2.0` the int
  cast refused, so `8` divided by 4 was quarantined on DuckDB and kept as 2 on PostgreSQL.

Each chain is spelled as a mapping's select spells it: a derived value a cast reads is computed
once in a derived table beneath it (decision 1163, `Steps`).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest

from assay.ir.model import FieldSource, Loc
from assay.lower.fields import Steps, lower_field
from assay.spec.transforms import parse_step
from tests.lower.target_sql import TARGETS, postgres_cursor, spelled

T = dt.datetime
ZONE = "America/Los_Angeles"  # the session's zone: nothing may depend on it

# (transforms, target type, [(bronze text, (value, coercion marker))])
CHAINS = {
    "to_utc_from_text": ([{"to_utc": "Europe/Paris"}], "timestamp", [
        ("2024-01-02 03:04:05", (T(2024, 1, 2, 2, 4, 5), False)),  # Paris winter time, UTC+1
        ("2024-07-02T03:04:05", (T(2024, 7, 2, 1, 4, 5), False)),  # summer, UTC+2
        ("2024-01-02T03:04:05Z", (T(2024, 1, 2, 3, 4, 5), False)),  # says its instant
        ("2024-01-02 03:04:05+05:00", (T(2024, 1, 1, 22, 4, 5), False)),
        # decision 1149 (an outside tester, session 43): `UTC` names the instant too (it was moved by
        # the zone), spaces around an offset are trimmed, and an offset with seconds is no instant
        # assay reads (PostgreSQL dropped it, Spark applied it)
        ("2024-01-02 03:04:05 UTC", (T(2024, 1, 2, 3, 4, 5), False)),
        (" 2024-01-02 03:04:05+05:00 ", (T(2024, 1, 1, 22, 4, 5), False)),
        ("2024-01-02 03:04:05+01:00:30", (None, True)),
        ("2024-01-02 03:04:05 utc", (T(2024, 1, 2, 3, 4, 5), False)),
        ("2024-01-02 03:04:05z", (None, True)),
        ("garbage", (None, True)),
        ("", (None, True)),
        ("2024-02-30 01:00:00", (None, True)),
        (None, (None, False)),
    ]),
    # decision 1150 (an outside tester, session 43): the quotient to 9 places on every engine; DuckDB's
    # was a DOUBLE (0.33333333333333330000), PostgreSQL's a numeric (0.33333333333333333333)
    "divide_into_decimal": ([{"divide": 3}], "decimal(38,20)", [
        ("1", (Decimal("0.33333333300000000000"), False)),
        ("10", (Decimal("3.33333333300000000000"), False)),
        ("-2", (Decimal("-0.66666666700000000000"), False)),
        ("x", (None, True)),
    ]),
    "divide_past_the_quotients_digits": ([{"divide": "0.001"}], "decimal(38,0)", [
        ("12", (Decimal("12000"), False)),
        ("123456789", (Decimal("123456789000"), False)),
        ("999999999999999999999999999", (None, True)),  # 30 integer digits: no decimal(38,9) holds them
    ]),
    "divide_into_int": ([{"divide": 4}], "int", [
        ("8", (2, False)),
        ("1e3", (250, False)),
        ("-0", (0, False)),
        ("10", (None, True)),  # 2.5 is no int
        ("x", (None, True)),
    ]),
    # two casts in one chain (decision 1163): the final cast reads the rounded decimal from a column
    "decimal_then_round": ([{"to_decimal": [10, 2]}, {"round": 1}], "decimal(10,2)", [
        ("9.99", (Decimal("10.00"), False)),
        ("1.24", (Decimal("1.20"), False)),
        ("1e-3", (Decimal("0.00"), False)),
        ("99999999.99", (None, True)),  # 100000000.0 after the round: no decimal(10,2) holds it
        ("x", (None, True)),
        (None, (None, False)),
    ]),
    # a casting step's result that the next step reads is bound too (decision 1163)
    "parse_ts_then_to_utc": ([{"parse_ts": "%Y-%m-%d %H:%M:%S"}, {"to_utc": "Europe/Paris"}], "timestamp", [
        ("2024-07-02 03:04:05", (T(2024, 7, 2, 1, 4, 5), False)),
        ("2024-02-30 03:04:05", (None, True)),
        ("x", (None, True)),
    ]),
    "trim_then_int": (["trim", "to_int"], "int", [
        (" 12 ", (12, False)),
        ("1 2", (None, True)),
    ]),
    "multiply_into_int": ([{"multiply": 100}], "int", [
        ("12.34", (1234, False)),
        ("99999999999999999", (None, True)),  # beyond a 64-bit int
    ]),
}


def _select(name: str, rows: str):
    """The chain's value and marker over the rows `(i, v)`, as `mapping_select` spells a field."""
    steps, target_type, _cases = CHAINS[name]
    parsed = tuple(parse_step(s)[0] for s in steps)
    src = FieldSource("v", ("v",), parsed, target_type, False, Loc("m.yml", 1))

    def lowered(sp):
        bound = Steps(sp)
        value, marker = lower_field(sp, src, "b", True, bound.binder(0))
        inner = f"(select * from (values {rows}) as b(i, v))"
        return f"select b.i, {value}, {marker} from {bound.source(inner)} as b order by b.i"
    return lowered


def _query(target: str, engine: str, name: str) -> str:
    text = {"duckdb": "varchar", "spark": "string"}.get(engine, "text")
    rows = ", ".join(f"({i}, cast({'null' if v is None else repr(v)} as {text}))" for i, (v, _) in enumerate(CHAINS[name][2]))
    return spelled(target, engine, _select(name, rows))


def _expected(name: str) -> list:
    return [want for _, want in CHAINS[name][2]]


@pytest.mark.parametrize("target", TARGETS)
def test_a_cast_of_a_cast_is_not_spelled_again_inside_it(target):
    """The decimal cast repeats its operand some thirty times on DuckDB; a second cast over the
    first spelled it inline 900 times (115 KB for one column of the kitchen-sink spec). The second
    cast reads the first from a column."""
    sql = _query(target, "duckdb", "decimal_then_round")
    assert "_assay_step_0_0" in sql
    assert len(sql) < 30_000, len(sql)


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("target", TARGETS)
def test_chains_on_duckdb(target, name):
    conn = duckdb.connect()
    conn.execute(f"SET TimeZone = '{ZONE}'")
    rows = conn.execute(_query(target, "duckdb", name)).fetchall()
    assert [(r[1], bool(r[2])) for r in rows] == _expected(name)


@pytest.mark.postgres
@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("target", TARGETS)
def test_chains_on_postgres(postgres_server, target, name):
    with postgres_cursor(postgres_server, ZONE) as cur:
        cur.execute(_query(target, "postgres", name))
        assert [(r[1], bool(r[2])) for r in cur.fetchall()] == _expected(name)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("target", TARGETS)
def test_chains_on_spark(target, name):
    """Spark through the test process's session (tests/support/spark.py); the SQLMesh target
    refuses Spark, but its macros hold Spark spellings and are held to the same cases."""
    from tests.support import spark

    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    wh = spark.shared_warehouse()
    _names, values = wh.call("named", _query(target, "spark", name))
    assert [(r[1], bool(r[2])) for r in values] == _expected(name)
