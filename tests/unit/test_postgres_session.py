"""A PostgreSQL session of an operator command reads every date and timestamp a build can store.

PostgreSQL holds years past 9999 and before year 1; Python's datetime does not, and psycopg2
raised "year 10000 is out of range" on such a value, so `assay explain` refused to read an entity
whose `9999-12-31T23:59:59-01:00` was read as ISO 8601 (an outside tester, session 37). Such a
value comes back as the server's text; every other value as psycopg2 reads it.
"""

from __future__ import annotations

import datetime as dt

import pytest

from assay.runtime.warehouse import postgres_session

pytestmark = pytest.mark.postgres


def test_years_python_cannot_hold_come_back_as_text(postgres_server):
    conn = postgres_session(postgres_server.connect(), read_only=True)
    try:
        cur = conn.cursor()
        cur.execute("select timestamp '9999-12-31 23:59:59' + interval '2 hours', date '0001-01-01' - 1, "
                    "timestamptz '9999-12-31 23:00:00+00' + interval '1 day', "
                    "timestamp '2024-01-02 03:04:05', date '2024-01-02', timestamptz '2024-01-02 03:04:05+00', "
                    "null::timestamp")
        (row,) = cur.fetchall()
        assert row[:2] == ("10000-01-01 01:59:59", "0001-12-31 BC")
        assert isinstance(row[2], str) and row[2].startswith("10000-01-01 ")
        assert row[3:6] == (dt.datetime(2024, 1, 2, 3, 4, 5), dt.date(2024, 1, 2),
                            dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))
        assert row[6] is None
    finally:
        conn.close()
