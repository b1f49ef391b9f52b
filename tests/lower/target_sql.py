"""Lowered SQL as each target spells it, ready to run on an engine without a build: the dbt
package's macros rendered as dbt renders them (tests/dbt_package/test_macro_render.py's stand-in),
the SQLMesh macros expanded. For tests that hold a decision of `lower/` to its result on engines."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import jinja2

from assay.lower.spelling import Spelling
from assay.targets.dbt.spelling import DbtSpelling
from assay.targets.sqlmesh.spelling import SqlmeshSpelling
from assay_sqlmesh import render_sql
from tests.dbt_package.test_macro_render import render_env

TARGETS = ("dbt", "sqlmesh")


def spelled(target: str, engine: str, lowered: Callable[[Spelling], str]) -> str:
    """`lowered(spelling)` for `target`, rendered into plain SQL for `engine`."""
    if target == "dbt":
        return jinja2.Environment().from_string(lowered(DbtSpelling())).render(assay=render_env(engine), target={"type": engine})
    return render_sql(lowered(SqlmeshSpelling(engine)), engine)


@contextmanager
def postgres_cursor(postgres_server, zone: str) -> Iterator:
    """A cursor of the test server, its session in `zone`, with the functions the dbt package's
    PostgreSQL 15 rendering calls (the test's stand-in for dbt renders for 15: its guard function);
    dropped again on the way out."""
    conn = postgres_server.connect()
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute(f"SET TIME ZONE '{zone}'")
        cur.execute(render_env("postgres").install_functions())
        yield cur
    finally:
        conn.cursor().execute("DROP SCHEMA IF EXISTS analytics CASCADE")
        conn.close()
