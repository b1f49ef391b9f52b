"""The measuring query of declared checks: one SELECT per table, exact comparisons, and the
descriptors the materialization reads; executed on DuckDB through a stand-in for the
package macros, so each kind's numbers are checked without dbt. Also the sentences
`assay checks` renders from what was recorded."""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal

import duckdb
import jinja2
import pytest

from assay.checks.declared import DeclaredCheck
from assay.checks.recorded import parse_value, verdict_of
from assay.ir.model import Column, Entity
from assay.targets.dbt.declared_checks import (
    declared_macro,
    declared_macro_name,
    declared_query,
    jinja_literal,
)

COLUMNS = (
    Column("id", "string"),
    Column("station", "string"),
    Column("at", "timestamp"),
    Column("day", "date"),
    Column("rh", "decimal(5,1)"),
    Column("n", "int"),
    Column("flag", "bool"),
    Column("select", "string"),  # a reserved word: quoted through the adapter
)


def entity(*checks: DeclaredCheck) -> Entity:
    return Entity(
        name="reading", grain="g", key=("id",), scd="type1", owner=None, description=None, grants_select=(),
        columns=COLUMNS, mappings=(), rules=(), dedupe=(), opted_in=False, retention=None, redact=(),
        materialized="table", declared_checks=tuple(checks),
    )


def chk(check_id: str, kind: str, columns=(), enforcement="required", **bounds) -> DeclaredCheck:
    return DeclaredCheck(check_id=check_id, kind=kind, enforcement=enforcement, columns=tuple(columns),
                         blocking=enforcement == "required", **bounds)


ALL = entity(
    chk("KEY", "key_uniqueness", ["station", "at"]),
    chk("NULLS", "null_ceiling", ["rh"], max_null_ppm=0),
    chk("RANGE", "value_range", ["rh"], min_value="0", max_value="100"),
    chk("GAPS", "continuity", ["at"], enforcement="advisory", max_gap_seconds=3600),
    chk("DAYS", "continuity", ["day"], max_gap_seconds=86400),
    chk("STEPS", "continuity", ["n"], max_gap_seconds=2),
    chk("ROWS", "row_expectation", min_rows=1),
    chk("TEXT_RANGE", "value_range", ["station"], min_value="0", max_value="1"),
    chk("TEXT_GAPS", "continuity", ["flag"], max_gap_seconds=1),
    chk("RESERVED", "null_ceiling", ["select"], max_null_ppm=10),
)


# --- a DuckDB stand-in for the package macros the generated SQL calls ----------------------

class _Assay:
    TYPES = {"string": "VARCHAR", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP"}

    def sql_type(self, t: str) -> str:
        m = re.fullmatch(r"decimal\((\d+),(\d+)\)", t)
        return f"DECIMAL({m[1]},{m[2]})" if m else self.TYPES[t]

    def continuity_gap(self, lo: str, hi: str, domain: str) -> str:
        if domain == "timestamp":
            return f"(epoch_us({hi}) - epoch_us({lo}))"
        if domain == "date":
            return f"cast(({hi} - {lo}) as BIGINT) * 86400"
        return f"({hi} - {lo})"


class _Adapter:
    def quote(self, name: str) -> str:
        return '"' + name + '"'


def measure(e: Entity, rows: list[tuple]) -> dict[str, dict]:
    """Run the generated query over `rows` on DuckDB; return each check's recorded measures,
    picked out of the one row exactly as run_declared_checks does."""
    sql, descriptors = declared_query(e)
    rendered = jinja2.Template(sql).render(candidate="cand", assay=_Assay(), adapter=_Adapter())
    con = duckdb.connect()
    con.execute('create table cand (id varchar, station varchar, "at" timestamp, day date, rh decimal(5,1), '
                'n bigint, flag boolean, "select" varchar)')
    if rows:
        con.executemany("insert into cand values (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    cur = con.execute(rendered)
    names = [d[0] for d in cur.description]
    row = dict(zip(names, cur.fetchall()[0]))
    out = {}
    for d in descriptors:
        m = {k: (int(row[c]) if row[c] is not None else None) for k, c in d["counts"].items()}
        for k, c in d["texts"].items():
            m[k] = [row[x] for x in c] if isinstance(c, list) else row[c]
        spec = {k: d.get(k) for k in ("columns", "types", "bounds", "domain", "gap_scale", "orderable")}
        # the recorded JSON round trip: only ints, text, lists and nulls
        out[d["check_id"]] = {"spec": json.loads(json.dumps(spec)), "m": json.loads(json.dumps(m)), "kind": d["kind"]}
    return out


def details(e: Entity, rows: list[tuple]) -> dict[str, tuple[bool, str]]:
    return {cid: tuple(verdict_of(r["kind"], r["spec"], r["m"])) for cid, r in measure(e, rows).items()}


T = dt.datetime
D = dt.date


def test_one_select_for_every_check_and_no_float():
    sql, descriptors = declared_query(ALL)
    # one statement; the aggregates read the candidate once, and each key or gap part once more
    # (no CTE over the candidate: PostgreSQL and DuckDB would materialize a copy of it)
    assert ";" not in sql and sql.lstrip().startswith("with assay_m as")
    parts = [d for d in descriptors if d["kind"] == "key_uniqueness" or d.get("gap")]
    assert sql.count("{{ candidate }}") == 1 + len(parts) == 5
    assert "double" not in sql.lower() and "float" not in sql.lower() and "epoch(" not in sql
    assert [d["check_id"] for d in descriptors] == [c.check_id for c in ALL.declared_checks]
    assert [d["position"] for d in descriptors] == list(range(1, 11))
    assert {d["check_id"]: d["blocking"] for d in descriptors}["GAPS"] is False
    # bounds compare against a decimal literal of the column's own type (decision 0534)
    assert ("rh < cast('0.0' as {{ assay.sql_type(\"decimal(5,1)\") }}) or "
            "rh > cast('100.0' as {{ assay.sql_type(\"decimal(5,1)\") }})") in sql, sql
    assert "{{ adapter.quote(\"select\") }}" in sql


def test_unorderable_columns_are_not_measured():
    _, descriptors = declared_query(ALL)
    by_id = {d["check_id"]: d for d in descriptors}
    assert by_id["TEXT_RANGE"]["orderable"] is False and by_id["TEXT_RANGE"]["texts"] == {}
    assert by_id["TEXT_GAPS"]["domain"] is None and "gap" not in by_id["TEXT_GAPS"]
    assert by_id["GAPS"]["gap_scale"] == 1_000_000 and by_id["DAYS"]["domain"] == "date"


def test_macro_text_and_jinja_literals():
    assert declared_macro_name(ALL) == "assay_declared__reading"
    assert jinja_literal({"a": None, "b": [True, 1, "x"]}) == '{"a": none, "b": [true, 1, "x"]}'
    text = declared_macro(ALL, _Project())
    assert text.startswith("{% macro default__assay_declared__reading(candidate) %}")
    assert "'results_schema': \"assay_meta\"" in text
    assert declared_macro(entity(), _Project()) == ""


class _Project:
    tables: tuple = ()
    sql_checks: tuple = ()

    def budget_of(self, table: str) -> tuple[int, int]:
        return (64 * 1024**3, 900)

    def schema(self, role: str) -> str:
        return {"meta": "assay_meta"}[role]


def test_passing_rows_measured_on_duckdb():
    rows = [
        ("1", "A", T(2026, 3, 1, 0, 0), D(2026, 3, 1), Decimal("0"), 1, True, "x"),
        ("2", "A", T(2026, 3, 1, 1, 0), D(2026, 3, 2), Decimal("100.0"), 3, False, "y"),
        ("3", "B", T(2026, 3, 1, 1, 0), D(2026, 3, 2), Decimal("55.5"), 3, None, "z"),
    ]
    got = details(ALL, rows)
    assert got["KEY"] == (True, "key (station, at) is distinct across all 3 rows, as expected")
    assert got["NULLS"] == (True, "column 'rh' is 0 ppm null (0 of 3 rows), at or below the declared ceiling of 0 ppm")
    assert got["RANGE"] == (True, "column 'rh' lies within [0, 100] across 3 non-null values of 3 rows")
    assert got["GAPS"] == (True, "column 'at' never gaps by more than 3600 across 2 distinct values, the widest between "
                                 "'2026-03-01T00:00:00Z' and '2026-03-01T01:00:00Z', at or below the declared ceiling "
                                 "of 3600, measured in seconds between timestamps")
    assert got["DAYS"] == (True, "column 'day' never gaps by more than 86400 across 2 distinct values, the widest between "
                                 "'2026-03-01' and '2026-03-02', at or below the declared ceiling of 86400, measured in "
                                 "seconds between dates")
    assert got["STEPS"][0] is True and "never gaps by more than 2 across 2 distinct values" in got["STEPS"][1]
    assert got["ROWS"] == (True, "row count 3 satisfies the declared minimum of 1")
    assert got["TEXT_RANGE"] == (False, "column 'station' holds values whose type is not orderable against the "
                                        "declared range [0, 1]")
    assert got["TEXT_GAPS"][0] is False


def test_failing_rows_measured_on_duckdb():
    rows = [
        ("1", "A", T(2026, 3, 1, 0, 0, 0, 500000), D(2026, 3, 1), Decimal("104.5"), 1, True, None),
        ("2", "A", T(2026, 3, 1, 0, 0, 0, 500000), D(2026, 3, 5), None, 10, True, "x"),
        ("3", None, T(2026, 3, 1, 3, 0), D(2026, 3, 5), Decimal("-0.5"), 11, True, "y"),
        ("4", None, T(2026, 3, 1, 3, 0), None, Decimal("200"), 11, True, "z"),
    ]
    got = details(ALL, rows)
    # NULL key parts group together, and the smallest repeating key comes first (NULLs last)
    assert got["KEY"] == (False, "key (station, at) repeats on 4 of 4 rows, first at ('A', '2026-03-01T00:00:00.5Z'), "
                                 "where 0 repeats were expected")
    assert got["NULLS"] == (False, "column 'rh' is 250000 ppm null (1 of 4 rows), above the declared ceiling of 0 ppm")
    assert got["RANGE"] == (False, "column 'rh' holds '-0.5', below the declared minimum of 0")
    assert got["GAPS"] == (False, "column 'at' gaps from '2026-03-01T00:00:00.5Z' to '2026-03-01T03:00:00Z' by 10799.5, "
                                  "above the declared ceiling of 3600, measured in seconds between timestamps")
    assert got["DAYS"] == (False, "column 'day' gaps from '2026-03-01' to '2026-03-05' by 345600, above the declared "
                                  "ceiling of 86400, measured in seconds between dates")
    assert got["STEPS"] == (False, "column 'n' gaps from '1' to '10' by 9, above the declared ceiling of 2, measured in "
                                   "the column's own units between numbers")
    assert got["RESERVED"] == (False, "column 'select' is 250000 ppm null (1 of 4 rows), above the declared ceiling of "
                                      "10 ppm")


def test_empty_and_single_value_tables():
    got = details(ALL, [])
    assert got["ROWS"] == (False, "row count 0 is below the declared minimum of 1")
    assert got["KEY"] == (True, "key (station, at) is distinct across all 0 rows, as expected")
    assert got["GAPS"][0] is True and "holds no non-null value" in got["GAPS"][1]
    one = details(ALL, [("1", "A", T(2026, 3, 1), D(2026, 3, 1), Decimal("1"), 1, True, "x")])
    assert one["GAPS"] == (True, "column 'at' holds one distinct value, '2026-03-01T00:00:00Z', so no consecutive pair "
                                 "exists for a gap to sit between; the declared ceiling of 3600 holds, measured in seconds "
                                 "between timestamps")


@pytest.mark.parametrize(
    "text, t, value",
    [("104.50", "decimal(5,2)", Decimal("104.50")), ("7", "int", 7), ("2026-03-01", "date", D(2026, 3, 1)),
     ("2026-03-01 00:51:00", "timestamp", T(2026, 3, 1, 0, 51)), ("true", "bool", True), ("O'Brien", "string", "O'Brien"),
     (None, "int", None), ("not a number", "int", "not a number")],
)
def test_parse_value(text, t, value):
    assert parse_value(text, t) == value


def test_results_node_and_dependency_only_with_declared_checks():
    from assay.targets.dbt.declared_checks import results_model_sql
    from assay.targets.dbt.outputs import entity_sql

    assert "full_refresh=false" in results_model_sql(_Shop([ALL]), "--")
    assert "schema=\"assay_meta\"" in results_model_sql(_Shop([ALL]), "--")
    assert results_model_sql(_Shop([entity()]), "--") is None
    assert '-- depends_on: {{ ref("assay_check_results") }}' in entity_sql(ALL, _Shop([ALL]), "--")
    assert "assay_check_results" not in entity_sql(entity(), _Shop([entity()]), "--")


def test_generated_project_has_the_results_node_only_when_a_check_is_declared(tmp_path):
    import shutil
    from pathlib import Path

    from assay.api import load_project
    from assay.targets.dbt import generate_dbt

    shop = Path(__file__).resolve().parents[2] / "examples" / "shop"
    files = generate_dbt(load_project(shop))
    assert "full_refresh=false" in files["models/assay/assay_check_results.sql"]
    assert '{{ ref("assay_check_results") }}' in files["models/assay/order/order.sql"]
    # the shop's only declared check removed: no results node, no dependency on it
    copy = tmp_path / "shop"
    shutil.copytree(shop, copy)
    entities = copy / "spec" / "entities.yml"
    text = entities.read_text()
    check = "    checks:\n      - {check_id: enough_orders, kind: row_expectation, enforcement: advisory, min_rows: 1}\n"
    assert check in text
    entities.write_text(text.replace(check, ""))
    files = generate_dbt(load_project(copy))
    assert "models/assay/assay_check_results.sql" not in files
    assert "assay_check_results" not in files["models/assay/order/order.sql"]


class _Shop(_Project):
    def __init__(self, entities):
        self.entities = tuple(entities)

    def schema(self, role: str) -> str:
        return {"meta": "assay_meta", "silver": "silver"}[role]
