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

import csv
import datetime as dt
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Callable

import pytest
import yaml

from assay_sqlmesh import render_sql

SEEDS = Path(__file__).resolve().parents[2] / "integration_tests" / "dbt" / "seeds"
# Why this module also runs on PostgreSQL 15 (tests/conftest.py): its try_cast guard differs there.
PG15 = "the SQLMesh try_cast on PostgreSQL 15 goes through the stand-in function @assay_install_functions creates"

pytestmark = pytest.mark.slow

TYPES = {name: seed["config"]["column_types"]
         for seed in yaml.safe_load((SEEDS / "_seeds.yml").read_text())["seeds"] if "config" in seed
         for name in [seed["name"]]}


def seed(name: str) -> tuple[list[str], list[list]]:
    """(columns, rows) of a seed as text, an empty cell as NULL (as dbt's seed loader reads it)."""
    with (SEEDS / f"{name}.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], [[None if v == "" else v for v in r] for r in rows[1:]]


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def decode(col: str) -> str:
    """integration_tests/dbt/macros decode_markers: the seeds spell '', edge spaces and controls as markers."""
    return (f"CASE WHEN {col} = '<empty>' THEN '' ELSE "
            f"REPLACE(REPLACE(REPLACE({col}, '<sp>', ' '), '<tab>', CHR(9)), '<nel>', CHR(133)) END")


def show_empty(expr: str) -> str:
    return f"CASE WHEN {expr} = '' THEN '<empty>' ELSE {expr} END"


def distinct(rows: list[list], columns: list[str], name: str) -> list[str]:
    i = columns.index(name)
    return sorted({r[i] for r in rows if r[i] is not None})


# family -> its query over `input` (the input seed's rows, typed), given the input seed's rows
def _try_cast(columns, rows) -> str:
    types = {"as_int": "int", "as_decimal": "decimal(10,2)", "as_date": "date", "as_timestamp": "timestamp",
             "as_bool": "bool", "as_string": "string"}
    cols = ", ".join(f"CASE WHEN assay_type = '{t}' THEN @assay_try_cast(raw, '{t}') END AS {c}" for c, t in types.items())
    return (f"WITH i AS (SELECT case_id, assay_type, {decode('raw')} AS raw FROM input) SELECT case_id, {cols}, "
            "CASE WHEN assay_type = 'variant' THEN NOT @assay_try_cast(raw, 'variant') IS NULL END AS variant_ok FROM i")


def _parsed(macro: str) -> Callable:
    def query(columns, rows) -> str:
        whens = " ".join(f"WHEN {lit(f)} THEN @{macro}(raw, {lit(f)})" for f in distinct(rows, columns, "fmt"))
        return f"WITH i AS (SELECT case_id, fmt, {decode('raw')} AS raw FROM input) SELECT case_id, CASE fmt {whens} END AS parsed FROM i"
    return query


def _to_utc(columns, rows) -> str:
    whens = " ".join(f"WHEN {lit(z)} THEN @assay_to_utc(local_ts, {lit(z)})" for z in distinct(rows, columns, "zone"))
    return f"SELECT case_id, CASE zone {whens} END AS utc_ts FROM input"


def _regex(columns, rows) -> str:
    cid, pat, grp = columns.index("case_id"), columns.index("pattern"), columns.index("grp")
    matches = " ".join(f"WHEN {r[cid]} THEN @assay_regex_matches(value, {lit(r[pat])})" for r in rows)
    extracted = " ".join(f"WHEN {r[cid]} THEN @assay_regex_extract(value, {lit(r[pat])}, {int(r[grp])})" for r in rows)
    return f"SELECT case_id, CASE case_id {matches} END AS matches, CASE case_id {extracted} END AS extracted FROM input"


def _text(columns, rows) -> str:
    return (f"WITH i AS (SELECT case_id, {decode('value')} AS value FROM input) SELECT case_id, "
            "@assay_char_length(value) AS char_length, @assay_is_nfc(value) AS is_nfc, "
            "@assay_charset_violates(value, 'U+0020-U+007E', 'allow') AS outside_printable_ascii, "
            "@assay_charset_violates(value, 'U+0000-U+001F,U+007F-U+009F', 'forbid') AS has_control, "
            "@assay_charset_violates(value, 'U+1F300-U+1FAFF', 'forbid') AS has_emoji, "
            "@assay_charset_violates(value, '', 'allow') AS allow_nothing, "
            "@assay_charset_violates(value, '', 'forbid') AS forbid_nothing FROM i")


def _keys(columns, rows) -> str:
    return ("SELECT case_id, @assay_reject_id('bronze.orders', source_row_id) AS reject_id, "
            "@assay_reject_id('bronze.orders', case_id) AS reject_id_of_int, @assay_unknown_member(fk, probe) AS member FROM input")


def _flags(columns, rows) -> str:
    flags = "@assay_quality_flags(('amount_negative', amount < 0), ('status_unknown', NOT status IN ('new', 'paid')))"
    return (f"WITH f AS (SELECT case_id, {flags} AS q, @assay_quality_flags() AS no_rules FROM input) SELECT case_id, "
            f"{show_empty('@assay_flags_to_text(q)')} AS flags_text, @assay_quality_ok(q) AS is_ok, "
            "@assay_flags_contain(q, 'amount_negative') AS has_amount_negative, "
            "@assay_flags_contain(q, 'status_unknown') AS has_status_unknown, q IS NULL AS flags_is_null, "
            f"@assay_quality_ok(no_rules) AS no_rules_ok, {show_empty('@assay_flags_to_text(no_rules)')} AS no_rules_text FROM f")


def _json(columns, rows) -> str:
    return ("SELECT case_id, @assay_json_extract_text(doc, 'a', 'b') AS a_b, @assay_json_extract_text(doc, 't') AS t, "
            "@assay_json_extract_text(doc, 'nul') IS NULL AS nul_is_null, "
            "@assay_json_extract_text(doc, 'missing', 'deeper') IS NULL AS missing_is_null, "
            "@assay_json_extract_text(doc, 'we\"ird/key~') AS weird, @assay_json_extract_text(doc, 'arr') AS arr, "
            "@assay_json_extract_text(doc, 'a') AS a_object, "
            "@assay_json_object(('id', case_id), ('name', name), ('qty', qty), ('flag', flag), ('day', day), "
            "('nothing', CAST(NULL AS TEXT))) AS object_text FROM input")


FAMILIES = {
    "try_cast": _try_cast, "parse_ts": _parsed("assay_parse_ts"), "parse_date": _parsed("assay_parse_date"),
    "to_utc": _to_utc, "regex": _regex, "text": _text, "keys": _keys, "flags": _flags, "json": _json,
}
# The integration model's last two regex columns exercise Jinja-internal group rewrites for other
# engines; `matches` and `extracted` are the primitives both targets have.
OMITTED = {"regex": ("extracted_single_group", "extracted_posix_groups")}
SQL_TYPES = {"bigint": "BIGINT", "integer": "INTEGER", "varchar": "TEXT", "boolean": "BOOLEAN", "date": "DATE",
             "timestamp": "TIMESTAMP", "decimal(10,2)": "DECIMAL(10,2)"}


def expected_value(text, column_type: str):
    """A cell of an expected seed as the engine's driver returns that type."""
    if text is None:
        return None
    kind = column_type.split("(")[0]
    if kind in ("bigint", "integer"):
        return int(text)
    if kind == "decimal":
        return Decimal(text)
    if kind == "boolean":
        return {"true": True, "false": False}[text.lower()]
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind == "timestamp":
        return dt.datetime.fromisoformat(text)
    return text


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
    got = on_engine.rows(FAMILIES[family](columns, rows))
    expected_columns, expected_rows = seed(f"it_{family}_expected")
    types = TYPES[f"it_{family}_expected"]
    wanted = [c for c in expected_columns if c not in OMITTED.get(family, ())]
    assert got and sorted(got[0]) == sorted(wanted)
    expected = [{c: expected_value(r[expected_columns.index(c)], types[c]) for c in wanted} for r in expected_rows]
    expected.sort(key=lambda r: r["case_id"])
    assert len(got) == len(expected)
    differences = [(e, g) for e, g in zip(expected, got) if e != g]
    assert not differences, "\n".join(f"expected {e}\n     got {g}" for e, g in differences)
