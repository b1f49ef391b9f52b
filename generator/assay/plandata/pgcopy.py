"""A scratch PostgreSQL database holding a copy of a warehouse's tables (decision 1020).

The warehouse database is read over a READ ONLY session (`COPY (SELECT ...) TO STDOUT`); the copy
is written into a new database on the same server, created here and dropped when the block ends.
CREATE DATABASE and DROP DATABASE go through a second session of the same login: they write the
server's catalog, never a table of the warehouse database. Tables are copied first, then views
as views (their own definition, `pg_get_viewdef`), so a tool that replaces its views (SQLMesh's
virtual layer, dbt) finds views; a view whose definition does not hold in the copy (it reads a
schema the copy lacks) becomes a table of its rows, as do materialized views.
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from ..errors import WarehouseError

_RELATIONS = """
select c.relname, c.relkind, case when c.relkind = 'v' then pg_get_viewdef(c.oid, true) end, a.attname, format_type(a.atttypid, a.atttypmod)
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
join pg_attribute a on a.attrelid = c.oid
where n.nspname = %s and c.relkind in ('r', 'p', 'v', 'm') and a.attnum > 0 and not a.attisdropped
order by c.relname, a.attnum
"""


def _connect(output: dict, dbname: str, read_only: bool):
    import psycopg2

    conn = psycopg2.connect(host=output["host"], port=output.get("port") or 5432, user=output["user"],
                            password=str(output.get("password") or ""), dbname=dbname, connect_timeout=10)
    conn.set_session(readonly=True if read_only else None, autocommit=True)
    return conn


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _copy_rows(src, dst, target: str, cols: list[tuple[str, str]]) -> None:
    dst.execute(f"create table {target} (" + ", ".join(f"{_q(c)} {t}" for c, t in cols) + ")")
    names = ", ".join(_q(c) for c, _ in cols)
    with tempfile.TemporaryFile(mode="w+b") as buf:
        src.copy_expert(f"copy (select {names} from {target}) to stdout", buf)
        buf.seek(0)
        dst.copy_expert(f"copy {target} ({names}) from stdin", buf)


def copy_schemas(source, dest, schemas: list[str]) -> int:
    """Copy every table and view of `schemas` from `source` into `dest` (see the module
    docstring); the relations copied."""
    src, dst = source.cursor(), dest.cursor()
    relations: dict[tuple[str, str], dict] = {}
    for schema in sorted(set(schemas)):
        src.execute(_RELATIONS, (schema,))
        for rel, kind, view, col, typ in src.fetchall():
            found = relations.setdefault((schema, rel), {"kind": kind, "view": view, "cols": []})
            found["cols"].append((col, typ))
    for schema in sorted({s for s, _ in relations}):
        dst.execute(f"create schema if not exists {_q(schema)}")
    views = []
    for (schema, rel), found in sorted(relations.items()):
        if found["kind"] == "v":
            views.append((schema, rel, found))
        else:
            _copy_rows(src, dst, f"{_q(schema)}.{_q(rel)}", found["cols"])
    # a view may read another view: define the ones that hold, again, until no more do
    while views:
        waiting = []
        for schema, rel, found in views:
            try:
                dst.execute(f"create view {_q(schema)}.{_q(rel)} as {found['view']}")
            except Exception:  # the driver's refusal: it reads what is not (yet) in the copy
                waiting.append((schema, rel, found))
        if len(waiting) == len(views):
            for schema, rel, found in waiting:
                _copy_rows(src, dst, f"{_q(schema)}.{_q(rel)}", found["cols"])
            break
        views = waiting
    return len(relations)


@contextmanager
def scratch_database(output: dict, schemas: list[str], *, more: Optional[Callable[[str], list[str]]] = None) -> Iterator[str]:
    """The name of a new database holding a copy of `schemas`' relations; dropped when the block ends.

    `more(name)`, when given, reads the copy of `schemas` (e.g. SQLMesh's state) and names the
    schemas to copy after them; those are copied in one pass, so that their views find their tables."""
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
                if more is not None:
                    copy_schemas(source, dest, sorted(set(more(name)) - set(schemas)))
            finally:
                source.close()
                dest.close()
            yield name
        finally:
            # FORCE (PostgreSQL 13+) ends a session dbt may have left behind
            admin.cursor().execute(f"drop database if exists {_q(name)} with (force)")
    finally:
        admin.close()
