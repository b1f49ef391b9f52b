"""Operator commands' SQL: names quoted, values bound, `%` and `?` in a name harmless (issue 21,
items 3, 7 and 11), and the read-only connections refusing writes, on DuckDB and PostgreSQL 18."""

from __future__ import annotations

import duckdb
import pytest

from assay.runtime.sqltext import driver_text, execute, relation
from assay.runtime.warehouse import Reader, postgres_session, query
from tests.support import pg

HOSTILE = ['we"ird', "50%", "why?", "a;b", "%s", "'; drop table t; --", "x\ny"]


def test_marks_outside_quotes_become_the_drivers():
    assert driver_text("select ? from t where a = ?", "postgres") == "select %s from t where a = %s"
    assert driver_text("select ? from t", "duckdb") == "select ? from t"


def test_a_question_mark_in_a_quoted_name_or_literal_stays():
    assert driver_text('select "why?" from t where a = ? and b = \'?\'', "postgres") == \
        'select "why?" from t where a = %s and b = \'?\''


def test_a_doubled_quote_keeps_the_name_open():
    assert driver_text('select * from "a""?" where x = ?', "postgres") == 'select * from "a""?" where x = %s'


def test_percent_is_doubled_for_psycopg2_only():
    assert driver_text('select * from "50%" where a like ?', "postgres") == 'select * from "50%%" where a like %s'
    assert driver_text('select * from "50%"', "duckdb") == 'select * from "50%"'


@pytest.mark.parametrize("name", HOSTILE)
def test_relation_is_one_quoted_name(name):
    quoted = relation("postgres", name, "t")
    assert quoted.startswith('"') and quoted.endswith('"."t"')
    assert quoted[1:-5].replace('""', "") .count('"') == 0


def _round_trip(conn, dialect):
    """Each hostile schema holds one table; reading it back by quoted name and bound value gives
    exactly its own row, and no other relation appears."""
    cur = conn.cursor()
    for name in HOSTILE:
        execute(cur, dialect, f"create schema {relation(dialect, name)}")
        execute(cur, dialect, f"create table {relation(dialect, name, 't')} (v text)")
        execute(cur, dialect, f"insert into {relation(dialect, name, 't')} values (?)", (name,))
    for name in HOSTILE:
        assert query(conn, dialect, f"select v from {relation(dialect, name, 't')} where v = ?", (name,)) == [(name,)]
        assert Reader(conn, dialect).exists(name, "t")
        assert Reader(conn, dialect).columns(relation(dialect, name, "t")) == ["v"]
    tables = query(conn, dialect, "select table_schema, table_name from information_schema.tables where table_name <> ?", ("t",))
    assert [t for t in tables if t[0] not in ("pg_catalog", "information_schema")] == []


def test_hostile_schema_names_round_trip_on_duckdb(tmp_path):
    conn = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        _round_trip(conn, "duckdb")
    finally:
        conn.close()


def test_a_read_only_duckdb_connection_refuses_a_write(tmp_path):
    path = tmp_path / "w.duckdb"
    duckdb.connect(str(path)).close()
    conn = duckdb.connect(str(path), read_only=True)
    try:
        with pytest.raises(duckdb.Error, match="read-only"):
            conn.execute("create table t (a int)")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def pg18():
    gen = pg.postgres_server("embedded")
    server = next(gen)
    yield server
    gen.close()


def _pg(server, read_only):
    import psycopg2

    return postgres_session(psycopg2.connect(**server.params()), read_only)


@pytest.mark.postgres
def test_hostile_schema_names_round_trip_on_postgres(pg18):
    conn = _pg(pg18, read_only=False)
    try:
        _round_trip(conn, "postgres")
    finally:
        cur = conn.cursor()
        for name in HOSTILE:
            execute(cur, "postgres", f"drop schema if exists {relation('postgres', name)} cascade")
        conn.close()


@pytest.mark.postgres
def test_a_read_only_postgres_session_refuses_writes_and_large_objects(pg18):
    import psycopg2

    conn = _pg(pg18, read_only=True)
    try:
        cur = conn.cursor()
        for sql in ("create table assay_ro_probe (a int)", "select lo_from_bytea(0, 'x')",
                    "create schema assay_ro_probe"):
            with pytest.raises(psycopg2.Error, match="read-only transaction"):
                cur.execute(sql)
        cur.execute("select 1")  # reading still works (autocommit: the failed statement left nothing open)
        assert cur.fetchall() == [(1,)]
    finally:
        conn.close()
    rw = _pg(pg18, read_only=False)
    try:
        cur = rw.cursor()
        cur.execute("select count(*) from pg_largeobject_metadata")
        assert cur.fetchall() == [(0,)]
        cur.execute("select count(*) from information_schema.tables where table_name = 'assay_ro_probe'")
        assert cur.fetchall() == [(0,)]
    finally:
        rw.close()


@pytest.mark.postgres
def test_a_sqlmesh_sql_check_count_runs_read_only_in_the_evaluations_transaction(pg18):
    """SQLMesh on PostgreSQL counts a SQL check file inside the evaluation's open transaction, under
    a savepoint: the count is read-only (the server refuses a write), and the transaction is
    read-write again afterwards (the evaluation goes on writing). Without an open transaction the
    count opens one, so it is read-only there too."""
    import psycopg2
    from sqlmesh.core.engine_adapter.postgres import PostgresEngineAdapter

    from assay_sqlmesh.checks import _try_fetchone

    setup = _pg(pg18, read_only=False)
    try:
        cur = setup.cursor()
        cur.execute("drop table if exists assay_probe_writes; create table assay_probe_writes (a int)")
        cur.execute("create or replace function assay_probe_write() returns int language sql as "
                    "'insert into assay_probe_writes values (1); select 1'")
    finally:
        setup.close()
    adapter = PostgresEngineAdapter(lambda: psycopg2.connect(**pg18.params()), dialect="postgres")
    try:
        with adapter.transaction():
            row, error = _try_fetchone(adapter, "SELECT COUNT(*) FROM (SELECT assay_probe_write()) AS q", "postgres",
                                       read_only=True)
            assert row is None and "read-only transaction" in error
            assert _try_fetchone(adapter, "SELECT COUNT(*) FROM assay_probe_writes", "postgres", read_only=True) == ((0,), None)
            adapter.execute("INSERT INTO assay_probe_writes VALUES (2)")  # read-write again
        assert adapter.fetchall("SELECT a FROM assay_probe_writes") == [(2,)]
        # Outside a transaction the adapter would run the count in one of its own and commit the
        # write: the count opens a transaction itself, read-only under its savepoint.
        row, error = _try_fetchone(adapter, "SELECT COUNT(*) FROM (SELECT assay_probe_write()) AS q", "postgres",
                                   read_only=True)
        assert row is None and "cannot execute INSERT in a read-only transaction" in error
        assert adapter.fetchall("SELECT a FROM assay_probe_writes") == [(2,)]
        assert _try_fetchone(adapter, "SELECT COUNT(*) FROM assay_probe_writes", "postgres", read_only=True) == ((1,), None)
    finally:
        adapter.close()


@pytest.mark.postgres
def test_a_sqlmesh_gateway_on_postgres_is_read_only_for_reading_commands(pg18, tmp_path):
    """The operator commands reach a SQLMesh project's warehouse through its gateway: read-only
    when the command only reads, read-write for maintain and replay."""
    import psycopg2

    from assay.runtime.warehouse import connect

    p = pg18.params()
    (tmp_path / "config.yaml").write_text(
        "gateways:\n  local:\n    connection:\n      type: postgres\n"
        f"      host: {p['host']}\n      port: {p['port']}\n      user: {p['user']}\n"
        f"      password: '{p['password']}'\n      database: {p['dbname']}\n"
        "default_gateway: local\nmodel_defaults:\n  dialect: postgres\n", encoding="utf-8")
    conn, dialect = connect(tmp_path, read_only=True)
    try:
        assert dialect == "postgres"
        with pytest.raises(psycopg2.Error, match="read-only transaction"):
            execute(conn.cursor(), dialect, "create table assay_gateway_probe (a int)")
    finally:
        conn.close()
    conn, dialect = connect(tmp_path, read_only=False)
    try:
        cur = conn.cursor()
        execute(cur, dialect, "create table assay_gateway_probe (a int)")
        execute(cur, dialect, "drop table assay_gateway_probe")
    finally:
        conn.close()
