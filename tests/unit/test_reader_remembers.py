"""runtime.warehouse.Reader asks a seen table's existence and the facts a command only reads once
per connection (on Spark each question is a planned statement): the report asks about the events
table a dozen times. A table not seen is asked about again, and a new connection asks again."""

from __future__ import annotations

import duckdb

from assay.runtime import warehouse
from assay.runtime.check_results import run_environment_starts


class Counting:
    """A DuckDB connection whose cursors count the statements they run."""

    def __init__(self) -> None:
        self.conn = duckdb.connect()
        self.statements: list[str] = []

    def cursor(self):
        outer = self

        class Cursor:
            def __init__(self) -> None:
                self._cur = outer.conn.cursor()

            def execute(self, sql, params=None):
                outer.statements.append(sql)
                return self._cur.execute(sql, params) if params else self._cur.execute(sql)

            def __getattr__(self, name):
                return getattr(self._cur, name)

        return Cursor()


def test_a_seen_table_is_asked_about_once_and_an_unseen_one_every_time():
    db = Counting()
    reader = warehouse.Reader(db, "duckdb")
    assert reader.exists("main", "t") is False
    db.conn.execute("create table t (a int)")
    # not seen before: asked again, and found
    assert reader.exists("main", "t") is True
    asked = len(db.statements)
    assert reader.exists("main", "t") is True and reader.exists("main", "t") is True
    assert len(db.statements) == asked
    # another connection (a command after a build) asks again
    again = warehouse.Reader(db, "duckdb")
    assert again.exists("main", "t") is True and len(db.statements) == asked + 1


def test_the_runs_environments_are_read_once_per_connection():
    db = Counting()
    db.conn.execute("create schema assay_meta")
    db.conn.execute("create table assay_meta.assay_events (event_type varchar, run_id varchar, why varchar, "
                    "occurred_at timestamp)")
    db.conn.execute("insert into assay_meta.assay_events values ('RUN_ENVIRONMENT', 'SQLMESH_RUN: 1', 'prod', "
                    "timestamp '2026-12-01 00:00:00')")
    reader = warehouse.Reader(db, "duckdb")
    first = run_environment_starts(reader, "assay_meta")
    asked = len(db.statements)
    first["changed by the caller"] = ("x", "y")  # a caller's change does not reach the next answer
    assert run_environment_starts(reader, "assay_meta") == {"SQLMESH_RUN: 1": ("prod", "2026-12-01 00:00:00")}
    assert len(db.statements) == asked
    # a reader-shaped object without `remembered` (a test's own) asks every time
    plain = type("Plain", (), {"query": reader.query, "exists": reader.exists, "relation": reader.relation})()
    run_environment_starts(plain, "assay_meta")
    assert len(db.statements) == asked + 1
