"""A scratch PostgreSQL database holding a copy of a warehouse's tables (decision 1020).

The warehouse database is read over a READ ONLY session (`COPY (SELECT ...) TO STDOUT`); the copy
is written into a new database on the same server, created here and dropped when the block ends.
CREATE DATABASE and DROP DATABASE go through a second session of the same login: they write the
server's catalog, never a table of the warehouse database. Views (and materialized views) are
copied as tables of their rows: a bronze relation may be a view over a schema the sandbox lacks,
and dbt replaces its own views when it builds.
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from typing import Iterator

from ..errors import WarehouseError

_RELATIONS = """
select c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
join pg_attribute a on a.attrelid = c.oid
where n.nspname = %s and c.relkind in ('r', 'p', 'v', 'm') and a.attnum > 0 and not a.attisdropped
order by c.relname, a.attnum
"""


def _connect(output: dict, dbname: str, read_only: bool):
    import psycopg2

    conn = psycopg2.connect(host=output["host"], port=output.get("port", 5432), user=output["user"],
                            password=str(output.get("password") or ""), dbname=dbname, connect_timeout=10)
    conn.set_session(readonly=True if read_only else None, autocommit=True)
    return conn


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def copy_schemas(source, dest, schemas: list[str]) -> int:
    """Copy every table and view of `schemas` from `source` into `dest` as tables; the tables copied."""
    src, dst = source.cursor(), dest.cursor()
    copied = 0
    for schema in sorted(set(schemas)):
        src.execute(_RELATIONS, (schema,))
        tables: dict[str, list[tuple[str, str]]] = {}
        for rel, col, typ in src.fetchall():
            tables.setdefault(rel, []).append((col, typ))
        if not tables:
            continue
        dst.execute(f"create schema if not exists {_q(schema)}")
        for rel, cols in sorted(tables.items()):
            target = f"{_q(schema)}.{_q(rel)}"
            dst.execute(f"create table {target} (" + ", ".join(f"{_q(c)} {t}" for c, t in cols) + ")")
            names = ", ".join(_q(c) for c, _ in cols)
            with tempfile.TemporaryFile(mode="w+b") as buf:
                src.copy_expert(f"copy (select {names} from {target}) to stdout", buf)
                buf.seek(0)
                dst.copy_expert(f"copy {target} ({names}) from stdin", buf)
            copied += 1
    return copied


@contextmanager
def scratch_database(output: dict, schemas: list[str]) -> Iterator[str]:
    """The name of a new database holding a copy of `schemas`' tables; dropped when the block ends."""
    from .sandbox import scratch_name

    dbname = output.get("dbname") or output.get("database")
    name = scratch_name()
    admin = _connect(output, dbname, read_only=False)
    try:
        try:
            admin.cursor().execute(f"create database {_q(name)}")
        except Exception as exc:  # the driver's refusal: no CREATEDB, most likely
            raise WarehouseError(
                f"cannot create the scratch database {name} the plan builds in ({str(exc).splitlines()[0]}); "
                "`assay plan --data` on PostgreSQL needs a login that may CREATE DATABASE on the warehouse's server "
                "(the warehouse database itself is only read)."
            ) from None
        try:
            source = _connect(output, dbname, read_only=True)
            dest = _connect(output, name, read_only=False)
            try:
                copy_schemas(source, dest, schemas)
            finally:
                source.close()
                dest.close()
            yield name
        finally:
            # FORCE (PostgreSQL 13+) ends a session dbt may have left behind
            admin.cursor().execute(f"drop database if exists {_q(name)} with (force)")
    finally:
        admin.close()
