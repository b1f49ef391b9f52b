"""The time a check result or an event is recorded at is UTC whatever the session's time zone
(decision 0992), on both targets: the dbt package's `assay.utc_now()` and the SQLMesh macros'
writers, run on DuckDB with `SET TimeZone` (a profile's `settings:`; by default the machine's zone)
and on PostgreSQL 18 with `SET TIME ZONE` (the server's or the database's `timezone`).

`CAST(CURRENT_TIMESTAMP AS TIMESTAMP)`, what the writers spelled before, is the session's wall
clock: 8 hours early at America/Los_Angeles, 5h30 late at Asia/Kolkata, so a result's
`finished_at` and the report's "times are UTC" were off by the zone's offset. The build-level
check, a dbt build on DuckDB with a profile's TimeZone, is in
tests/integration/test_sql_checks_dbt.py.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import pytest

from assay.retention import EVENTS_COLUMNS
from assay_sqlmesh import build_events, checks
from assay_sqlmesh._core import type_name
from tests.dbt_package.test_macro_render import render_env

ROOT = Path(__file__).resolve().parents[2]
# one zone behind UTC (with DST), one ahead by a half hour
ZONES = ["America/Los_Angeles", "Asia/Kolkata"]


def assert_utc_now(value) -> None:
    """`value` is a naive timestamp of the current UTC instant (a minute's slack for the test)."""
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert isinstance(value, dt.datetime) and value.tzinfo is None, value
    assert abs(value - now) < dt.timedelta(minutes=1), f"recorded {value}, UTC now {now}"


def _duckdb(zone: str):
    # the connection itself: a cursor() would be a new session, in the default zone
    conn = duckdb.connect()
    conn.execute(f"SET TimeZone = '{zone}'")
    return conn


@pytest.fixture
def pg_cursor(postgres_server):
    conn = postgres_server.connect()
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("DROP SCHEMA IF EXISTS assay_utc CASCADE")
    cur.execute("CREATE SCHEMA assay_utc")
    try:
        yield cur
    finally:
        cur.execute("DROP SCHEMA IF EXISTS assay_utc CASCADE")
        conn.close()


def _cursor(engine: str, zone: str, pg_cursor=None):
    if engine == "duckdb":
        cur = _duckdb(zone)
        cur.execute("CREATE SCHEMA assay_utc")
        return cur
    pg_cursor.execute(f"SET TIME ZONE '{zone}'")
    return pg_cursor


class _Adapter:
    """What the SQLMesh writers call on SQLMesh's engine adapter: execute, on a real connection."""

    def __init__(self, cur):
        self.cur = cur

    def execute(self, sql: str, quote_identifiers: bool = False) -> None:
        self.cur.execute(sql)


def _dbt_utc_now(engine, cur) -> dt.datetime:
    cur.execute(f"select {render_env(engine).utc_now()}")
    return cur.fetchone()[0]


def _sqlmesh_check_result(engine, cur) -> dt.datetime:
    types = {"check_position": "int", "passed": "bool", "row_count": "int", "recorded_at": "timestamp"}
    cols = ", ".join(f"{c} {type_name(types.get(c, 'string'), engine)}" for c in checks.RESULT_COLUMNS)
    cur.execute(f"CREATE TABLE assay_utc.results ({cols})")
    row = ("run", "order", "ENOUGH_ROWS", 1, "row_expectation", "advisory", True, 3, "{}", "{}")
    cur.execute(checks._insert("assay_utc.results", [row], engine).sql(dialect=engine))
    cur.execute("SELECT recorded_at FROM assay_utc.results")
    return cur.fetchone()[0]


def _sqlmesh_build_event(engine, cur) -> dt.datetime:
    cols = ", ".join(f"{c} {type_name(t, engine)}" for c, t in EVENTS_COLUMNS)
    cur.execute(f"CREATE TABLE assay_utc.events ({cols})")
    build_events._insert(_Adapter(cur), "assay_utc.events", engine, "run", "order",
                         [("TABLE_BUILD_FAILED", "x", "why", None)])
    cur.execute("SELECT occurred_at FROM assay_utc.events")
    return cur.fetchone()[0]


WRITERS = {"dbt utc_now": _dbt_utc_now, "sqlmesh check result": _sqlmesh_check_result,
           "sqlmesh build event": _sqlmesh_build_event}


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("zone", ZONES)
def test_recorded_times_are_utc_on_duckdb(zone, writer):
    assert_utc_now(WRITERS[writer]("duckdb", _cursor("duckdb", zone)))


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("zone", ZONES)
def test_recorded_times_are_utc_on_postgres(pg_cursor, zone, writer):
    assert_utc_now(WRITERS[writer]("postgres", _cursor("postgres", zone, pg_cursor)))


def test_no_writer_spells_the_sessions_clock():
    """Every current time the package and the macros write goes through the one UTC spelling per
    engine (dbt: temporal/utc_now.sql; SQLMesh: temporal.UTC_NOW), so no new writer brings the
    session's wall clock back."""
    spelled = re.compile(r"current_timestamp|\bnow\(\)|localtimestamp|getdate\(\)|sysdate", re.IGNORECASE)
    allowed = {ROOT / "dbt_package" / "macros" / "temporal" / "utc_now.sql",
               ROOT / "sqlmesh_macros" / "assay_sqlmesh" / "temporal.py"}
    found = []
    for path in sorted([*(ROOT / "dbt_package" / "macros").rglob("*.sql"), *(ROOT / "sqlmesh_macros").rglob("*.py")]):
        if path in allowed:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if spelled.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
