"""Where a model's rows physically live, for the one command that writes to a model (retention).

A dbt project materializes `silver.<entity>__reject` as a table. A SQLMesh project publishes it
as a view in the environment's schema (`silver.<entity>__reject`, SQLMesh's virtual layer) over a
physical table `sqlmesh__silver.silver__<entity>__reject__<version>` that SQLMesh owns. Reading
goes through the view on both; deleting must go to the physical table (DuckDB views cannot be
written to, and a write through a Postgres view would depend on it staying auto-updatable).

The view SQLMesh writes is `SELECT * FROM <physical table>` (Postgres stores it with the columns
spelled out); `physical_table` reads the view's definition from the catalog and returns that one
table. Anything else (a join, a filter, a view a user wrote) is refused with a sentence: assay
deletes only from a table it can name.
"""

from __future__ import annotations

from typing import Optional

from ..errors import WarehouseError
from .sqltext import relation

# What kind of relation `schema.name` is, and a view's SQL, per engine (data, not an if-chain).
_KIND = {
    "duckdb": "select table_type from information_schema.tables where table_schema = ? and table_name = ?",
    "postgres": "select table_type from information_schema.tables where table_schema = %s and table_name = %s",
}
_VIEW_SQL = {
    "duckdb": "select sql from duckdb_views() where database_name = current_database() and schema_name = ? and view_name = ?",
    "postgres": ("select 'create view v as ' || pg_get_viewdef(c.oid) from pg_class c join pg_namespace n on n.oid = c.relnamespace "
                 "where n.nspname = %s and c.relname = %s and c.relkind = 'v'"),
}


def physical_table(conn, dialect: str, schema: str, name: str) -> Optional[tuple[str, str]]:
    """(schema, table) holding the rows of `schema.name`: itself when it is a table, the one table a
    SQLMesh virtual-layer view selects from when it is a view; None when it does not exist."""
    cur = conn.cursor()
    cur.execute(_KIND[dialect], (schema, name))
    row = cur.fetchone()
    if row is None:
        return None
    if "VIEW" not in str(row[0]).upper():
        return schema, name
    cur.execute(_VIEW_SQL[dialect], (schema, name))
    found = cur.fetchone()
    target = _single_source(str(found[0]) if found else "", dialect)
    if target is None:
        raise WarehouseError(
            f"{schema}.{name} is a view that is not SQLMesh's `SELECT * FROM <table>` over one physical table, so assay "
            "cannot tell which table holds its rows and deletes nothing; make it the table (dbt) or the model SQLMesh "
            "generated (SQLMesh)."
        )
    return target


def _single_source(sql: str, dialect: str) -> Optional[tuple[str, str]]:
    """The (schema, table) a `CREATE VIEW ... AS SELECT ... FROM one_table` reads, else None."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return None
    query = tree.expression if isinstance(tree, exp.Create) else tree
    if not isinstance(query, exp.Select) or query.args.get("joins") or query.args.get("where"):
        return None
    tables = list(query.find_all(exp.Table))
    if len(tables) != 1 or not tables[0].db:
        return None
    return tables[0].db, tables[0].name


def writable_relation(conn, dialect: str, schema: str, name: str) -> Optional[str]:
    """The quoted physical table behind `schema.name` (see `physical_table`), or None when missing."""
    found = physical_table(conn, dialect, schema, name)
    return None if found is None else relation(dialect, *found)
