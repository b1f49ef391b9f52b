"""The engine primitives of the two targets proven equal by ONE table (issue 18; sqlglot's way:
behaviour as tables).

The dbt package's integration project (integration_tests/dbt) holds, as seeds, the inputs of
every scalar primitive and the outputs written by hand (`<family>_input.csv`,
`it_<family>_expected.csv`, their column types in `_seeds.yml`); tests/dbt_package/
test_dbt_package_integration.py builds it with real dbt and compares every Jinja macro's output
with them on DuckDB and PostgreSQL 15 and 18. This module runs the SQLMesh macros (assay_sqlmesh,
expanded by SQLMesh's own MacroEvaluator for the engine's dialect) on the SAME inputs, loaded
with the same column types into the same engines, and compares with the SAME expected rows. One
table, both targets, every engine the SQLMesh target runs on (Spark is refused there, decision
0830): a primitive that drifts on either side fails against the table, not against the other's
code.

What each query computes mirrors the integration project's model of the family
(integration_tests/dbt/models/it_<family>.sql), with each `assay.x(...)` Jinja call spelled as
the `@assay_x(...)` macro call.
"""

from __future__ import annotations

import uuid

import pytest

from assay_sqlmesh import render_sql
from tests.support.primitive_table import FAMILIES, OMITTED, SQL_TYPES, TYPES, compare, seed

# Why this module also runs on PostgreSQL 15 (tests/conftest.py): its try_cast guard differs there.
PG15 = "the SQLMesh try_cast on PostgreSQL 15 goes through the stand-in function @assay_install_functions creates"

pytestmark = pytest.mark.slow


class Engine:
    """Run rendered SQL on one engine: `load` an input seed as a typed table, `rows` of a query."""

    def __init__(self, dialect: str, conn, mark: str, variables: dict, schema: str):
        self.dialect, self.conn, self.mark, self.variables, self.schema = dialect, conn, mark, variables, schema

    def execute(self, sql: str, params=None):
        cur = self.conn.cursor()
        cur.execute(sql, params) if params is not None else cur.execute(sql)
        return cur

    def load(self, name: str) -> None:
        columns, rows = seed(name)
        types = TYPES[name]
        self.execute(f"DROP TABLE IF EXISTS {self.schema}.input")
        self.execute(f"CREATE TABLE {self.schema}.input (" + ", ".join(f"{c} {SQL_TYPES[types[c]]}" for c in columns) + ")")
        marks = ", ".join([self.mark] * len(columns))
        self.conn.cursor().executemany(f"INSERT INTO {self.schema}.input VALUES ({marks})", rows)

    def rows(self, query: str) -> list[dict]:
        """The rows of `query` (over the loaded `input`) by column name, ordered by the first column."""
        sql = render_sql(query.replace("FROM input", f"FROM {self.schema}.input"), self.dialect, **self.variables)
        cur = self.execute(sql + " ORDER BY 1")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


@pytest.fixture(scope="module")
def on_engine(engine):
    """The module's engine (DuckDB, PostgreSQL 18, PostgreSQL 15) with the SQLMesh macros' setup done."""
    if engine.kind == "duckdb":
        import duckdb

        conn = duckdb.connect()
        conn.execute("CREATE SCHEMA t")
        yield Engine("duckdb", conn, "?", {}, "t")
        conn.close()
        return
    conn = engine.server.connect()
    conn.autocommit = True
    schema = f"macro_table_{uuid.uuid4().hex[:8]}"
    variables = {"__sqlmesh__vars__": {"assay_postgres_version_num": engine.server.version_num}}
    on = Engine("postgres", conn, "%s", variables, schema)
    on.execute(f'CREATE SCHEMA "{schema}"')
    on.execute(f'SET search_path TO "{schema}"')
    install = render_sql("@assay_install_functions()", "postgres", **variables).strip()
    # 16 and later parse with pg_input_is_valid; 15 needs the stand-in, created as a project's
    # before_all does it (so PostgreSQL 15's rows below are the stand-in's).
    assert install.startswith("CREATE OR REPLACE FUNCTION") == (engine.server.version_num < 160000), install
    on.execute(install)
    yield on
    on.execute(f'DROP SCHEMA "{schema}" CASCADE')
    conn.close()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_sqlmesh_macros_give_the_dbt_packages_expected_rows(on_engine, family):
    on_engine.load(f"{family}_input")
    columns, rows = seed(f"{family}_input")
    compare(family, on_engine.rows(FAMILIES[family](columns, rows, on_engine.dialect)), omitted=OMITTED.get(family, ()))
