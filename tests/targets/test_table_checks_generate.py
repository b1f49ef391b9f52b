"""The check tasks of tables assay only reads (decision 0520): which nodes and macros are
generated, how readers depend on them, and the declared-check macro whose measuring query is
chosen by the runtime types of the relation (decision 0522). That macro is rendered with Jinja
over stand-ins for dbt and the package and run on DuckDB, and must report exactly what the
entity form of the same checks reports for a table of the same types."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import jinja2
import pytest
import yaml

from assay.api import load_project
from assay.checks.declared import DeclaredCheck
from assay.checks.recorded import verdict_of
from assay.ir.model import Column, Entity, Loc, TableDecl
from assay.targets.dbt import generate_dbt
from assay.targets.dbt.declared_checks import declared_query
from assay.targets.dbt.table_checks import declared_table_macro
from tests.targets.test_declared_checks_generate import _Adapter, _Assay

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
TABLES = """\
tables_version: 1
tables:
  bronze.raw_orders:
    grain: [order_ref]
    columns: [order_ref, price]
    checks:
      - {check_id: refs_present, kind: null_ceiling, enforcement: required, columns: [order_ref], max_null_ppm: 0}
  bronze.raw_refunds:
    columns: [id]
    checks:
      - {check_id: some_refunds, kind: row_expectation, enforcement: advisory, min_rows: 1}
  bronze.raw_customers:
    columns: [id]
    checks:
      - {check_id: some_customers, kind: row_expectation, enforcement: advisory, min_rows: 1}
  marts.customer_totals:
    grain: [customer_id]
    columns: [customer_id, total]
    checks:
      - {check_id: one_per_customer, kind: key_uniqueness, enforcement: required}
"""
VOID = "/* assay\non_failure: keep\n*/\nselect * from bronze.raw_orders where state = 'void'\n"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, str]:
    spec = tmp_path_factory.mktemp("tc") / "shop"
    shutil.copytree(EXAMPLE, spec)
    (spec / "spec" / "tables.yml").write_text(TABLES)
    (spec / "checks" / "bronze" / "raw_orders").mkdir(parents=True)
    (spec / "checks" / "bronze" / "raw_orders" / "no_void.sql").write_text(VOID)
    first = generate_dbt(load_project(spec))
    assert generate_dbt(load_project(spec)) == first  # deterministic
    return first


def test_one_check_task_and_one_macro_file_per_checked_table(generated):
    tasks = sorted(p for p in generated if p.startswith("models/assay/checks/"))
    assert tasks == ["models/assay/checks/assay_checks__bronze__raw_customers.sql",
                     "models/assay/checks/assay_checks__bronze__raw_orders.sql",
                     "models/assay/checks/assay_checks__bronze__raw_refunds.sql",
                     "models/assay/checks/assay_checks__marts__customer_totals.sql"]
    assert sorted(p for p in generated if p.startswith("macros/assay/table_checks/")) == [
        "macros/assay/table_checks/bronze__raw_customers.sql", "macros/assay/table_checks/bronze__raw_orders.sql", "macros/assay/table_checks/bronze__raw_refunds.sql",
        "macros/assay/table_checks/marts__customer_totals.sql"]
    task = generated["models/assay/checks/assay_checks__bronze__raw_orders.sql"]
    assert "{{ config(materialized='assay_check_task', schema=\"assay_meta\", assay_audits=\"assay_audits__bronze__raw_orders\", " \
           "assay_table=\"bronze.raw_orders\", assay_meta_schema=\"assay_meta\", tags=['assay', 'assay_check_task']) }}" in task
    assert "-- depends_on: {{ ref(\"assay_check_results\") }}" in task
    assert "-- depends_on: {{ ref(\"assay_events\") }}" in task
    assert task.rstrip().endswith("select * from {{ source('bronze', \"raw_orders\") }}")
    own = generated["models/assay/checks/assay_checks__marts__customer_totals.sql"]
    assert own.rstrip().endswith("select * from {{ ref(\"customer_totals\") }}")
    # the opt-in line is a Jinja comment: a config() in a SQL comment would still be rendered
    assert "{# To check this model before it is published" in own and "-- " + "{{ config(materialized='assay_entity'" not in own
    assert own.count("{{ config(") == 1
    # the generated file names the spec files it derives from, the SQL check file included
    assert "from bronze/raw_orders/no_void.sql, spec/tables.yml" in task.splitlines()[0]


def test_readers_of_a_checked_source_depend_on_its_task(generated):
    staged = generated["models/assay/order/order__staged.sql"].splitlines()
    at = next(i for i, line in enumerate(staged) if line.startswith("{{ config("))
    dep = staged.index("-- depends_on: {{ ref(\"assay_checks__bronze__raw_orders\") }}")
    assert at < dep < staged.index("with extracted as (")
    customer = generated["models/assay/customer/customer__staged.sql"]
    assert "assay_checks__bronze__raw_customers" in customer and "assay_checks__bronze__raw_orders" not in customer


def test_sources_results_model_and_macros(generated):
    sources = yaml.safe_load(generated["models/assay/sources.yml"].split("\n", 1)[1])
    names = [t["name"] for t in sources["sources"][0]["tables"]]
    assert "raw_refunds" in names  # only a tables document names it: its check task reads it
    assert "models/assay/assay_check_results.sql" in generated
    macros = generated["macros/assay/table_checks/bronze__raw_orders.sql"]
    for name in ("assay_audits", "assay_checked", "assay_declared", "assay_sqlchecks"):
        assert f"{{% macro default__{name}__bronze__raw_orders(" in macros
    assert "{{ return(source('bronze', \"raw_orders\")) }}" in macros
    # the check file reads the relation it is given, never the name it wrote, under its table's
    # name quoted by the adapter (backticks on Spark)
    assert "'on_failure': \"keep\"" in macros and "\"SELECT * FROM \" ~ candidate ~ \" AS \" ~ adapter.quote(\"raw_orders\") ~ \" WHERE state = 'void'\"" in macros
    # the customer entity redacts raw_customers.phone and reads its pii email from raw_customers.email:
    # rows a check of raw_customers found never hold either (privacy.py)
    customers = generated["macros/assay/table_checks/bronze__raw_customers.sql"]
    assert "{% macro default__assay_capture__bronze__raw_customers() %}\n  {{ return({'redact': [\"email\", \"phone\"]}) }}" in customers
    assert "assay_capture__" not in macros
    refunds = generated["macros/assay/table_checks/bronze__raw_refunds.sql"]
    assert "assay_sqlchecks__" not in refunds


def test_a_spec_with_only_tables_generates_the_results_model(tmp_path):
    spec = tmp_path / "only"
    spec.mkdir()
    (spec / "assay.yml").write_text("name: only\n")
    (spec / "tables.yml").write_text(TABLES)
    out = generate_dbt(load_project(spec))
    assert "models/assay/assay_check_results.sql" in out
    assert "models/assay/assay_events.sql" in out  # check tasks append CHECK_FAILED events
    assert "models/assay/checks/assay_checks__bronze__raw_orders.sql" in out


# --- the runtime-typed measuring query, run on DuckDB ------------------------------------------

class _Return(Exception):
    def __init__(self, value):
        self.value = value


def _raise(value):
    raise _Return(value)


class _CompilerError(Exception):
    pass


class _Exceptions:
    def raise_compiler_error(self, msg):
        raise _CompilerError(msg)


class _TypedAssay(_Assay):
    def __init__(self, types):
        self.types = types

    def relation_assay_types(self, relation):
        return dict(self.types)


def chk(check_id, kind, columns=(), enforcement="required", **bounds) -> DeclaredCheck:
    return DeclaredCheck(check_id=check_id, kind=kind, enforcement=enforcement, columns=tuple(columns),
                         blocking=enforcement == "required", **bounds)


CHECKS = (
    chk("KEY", "key_uniqueness", ["k"]),
    chk("NULLS", "null_ceiling", ["v"], max_null_ppm=0),
    chk("RANGE", "value_range", ["v"], min_value="0", max_value="100"),
    chk("GAPS", "continuity", ["at"], enforcement="advisory", max_gap_seconds=3600),
    chk("ROWS", "row_expectation", min_rows=1),
)


class _Meta:
    entities = ()  # no entity reads the table: no column of it is hidden

    def budget_of(self, table):
        return (64 * 1024**3, 900)

    def schema(self, role):
        return {"meta": "assay_meta", "bronze": "bronze"}[role]


def _env():
    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    env.globals["return"] = _raise
    return env


def _table_macro_measures(types: dict, sql_types: dict, rows: list[tuple]) -> dict:
    text = declared_table_macro(TableDecl("bronze.t", ("k",), ("k", "v", "at"), CHECKS), _Meta())
    module = _env().from_string(text).make_module(
        {"assay": _TypedAssay(types), "adapter": _Adapter(), "exceptions": _Exceptions()})
    with pytest.raises(_Return) as got:
        getattr(module, "default__assay_declared__bronze__t")("cand")
    declared = got.value.value
    return _run(declared["sql"], declared["checks"], sql_types, rows)


def _entity_measures(entity_types: dict, sql_types: dict, rows: list[tuple]) -> dict:
    e = Entity(name="t", grain="g", key=("k",), scd="type1", owner=None, description=None, grants_select=(),
               columns=tuple(Column(c, t) for c, t in entity_types.items()), mappings=(), rules=(), dedupe=(),
               opted_in=False, retention=None, redact=(), materialized="table", declared_checks=CHECKS)
    sql, descriptors = declared_query(e)
    rendered = _env().from_string(sql).render(candidate="cand", assay=_Assay(), adapter=_Adapter())
    return _run(rendered, descriptors, sql_types, rows)


def _run(sql: str, descriptors: list, sql_types: dict, rows: list[tuple]) -> dict:
    con = duckdb.connect()
    con.execute("create table cand (" + ", ".join(f'"{c}" {t}' for c, t in sql_types.items()) + ")")
    con.executemany("insert into cand values (?, ?, ?)", rows)
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    row = dict(zip(names, cur.fetchall()[0]))
    out = {}
    for d in descriptors:
        m = {k: (int(row[c]) if row[c] is not None else None) for k, c in d["counts"].items()}
        for k, c in d["texts"].items():
            m[k] = [row[x] for x in c] if isinstance(c, list) else row[c]
        spec = {k: d.get(k) for k in ("columns", "types", "bounds", "domain", "gap_scale", "orderable")}
        out[d["check_id"]] = tuple(verdict_of(d["kind"], json.loads(json.dumps(spec)), json.loads(json.dumps(m, default=str))))
    return out


T = dt.datetime


@pytest.mark.parametrize("runtime,entity_types,sql_types,rows", [
    # numbers and timestamps: ranged and gapped like an entity's decimal and timestamp columns
    ({"k": "string", "v": "decimal", "at": "timestamp"}, {"k": "string", "v": "decimal(6,1)", "at": "timestamp"},
     {"k": "VARCHAR", "v": "DECIMAL(6,1)", "at": "TIMESTAMP"},
     [("a", Decimal("104.5"), T(2026, 3, 1, 0)), ("a", None, T(2026, 3, 1, 3)), ("b", Decimal("5"), T(2026, 3, 1, 3))]),
    # integers and dates
    ({"k": "int", "v": "int", "at": "date"}, {"k": "int", "v": "int", "at": "date"},
     {"k": "BIGINT", "v": "BIGINT", "at": "DATE"},
     [(1, 7, dt.date(2026, 3, 1)), (2, -1, dt.date(2026, 3, 1)), (3, 50, dt.date(2026, 3, 4))]),
    # text everywhere (a bronze table): the range is not orderable, continuity has no distance
    ({"k": "string", "v": "string", "at": "string"}, {"k": "string", "v": "string", "at": "string"},
     {"k": "VARCHAR", "v": "VARCHAR", "at": "VARCHAR"},
     [("a", "1", "x"), ("a", "2", "y")]),
])
def test_runtime_typed_query_reports_what_the_entity_form_reports(runtime, entity_types, sql_types, rows):
    ours = _table_macro_measures(runtime, sql_types, rows)
    theirs = _entity_measures(entity_types, sql_types, rows)
    assert ours == theirs
    assert set(ours) == {"KEY", "NULLS", "RANGE", "GAPS", "ROWS"}


def test_runtime_typed_query_detail_sentences():
    got = _table_macro_measures({"k": "string", "v": "decimal", "at": "timestamp"},
                                {"k": "VARCHAR", "v": "DECIMAL(6,1)", "at": "TIMESTAMP"},
                                [("a", Decimal("104.5"), T(2026, 3, 1, 0)), ("b", Decimal("5"), T(2026, 3, 1, 3))])
    assert got["RANGE"] == (False, "column 'v' holds '104.5', above the declared maximum of 100")
    assert got["GAPS"][0] is False and "measured in seconds between timestamps" in got["GAPS"][1]
    assert got["KEY"] == (True, "key (k) is distinct across all 2 rows, as expected")


def test_a_declared_column_the_relation_lacks_reads_as_text():
    """The macro still returns: the package's measuring step finds the column missing and records
    every check errored (DECLARED_CHECK_UNREADABLE, decision 0531)."""
    text = declared_table_macro(TableDecl("bronze.t", ("k",), ("k", "v", "at"), CHECKS), _Meta())
    module = _env().from_string(text).make_module(
        {"assay": _TypedAssay({"k": "string", "v": "int"}), "adapter": _Adapter(), "exceptions": _Exceptions()})
    with pytest.raises(_Return) as got:
        getattr(module, "default__assay_declared__bronze__t")("cand")
    by_id = {c["check_id"]: c for c in got.value.value["checks"]}
    assert by_id["GAPS"]["types"] == ["string"] and by_id["GAPS"]["domain"] is None
    assert by_id["RANGE"]["types"] == ["int"] and by_id["RANGE"]["orderable"] is True
    # the missing column is still named, so the engine refuses the query (recorded unreadable)
    assert "count(\"at\") as assay_missing_1" in got.value.value["sql"]
    assert "assay_missing_2" not in got.value.value["sql"]


def test_one_query_for_every_check_of_the_table():
    text = declared_table_macro(TableDecl("bronze.t", ("k",), ("k", "v", "at"), CHECKS), _Meta())
    # one statement, measured once: the only `sql` the package runs for the declared checks
    assert text.count("{% set sql %}") == 1
    measuring = text[text.index("{% set sql %}"): text.index("{% endset %}", text.index("{% set sql %}"))]
    assert measuring.count(";") == 0
    assert declared_table_macro(TableDecl("bronze.t", (), None, ()), _Meta()) == ""


def test_the_rows_a_failing_check_found_are_queried_on_the_relation():
    """`assay check rows`: each row-reading check carries the query of its failing rows."""
    text = declared_table_macro(TableDecl("bronze.t", ("k",), ("k", "v", "at"), CHECKS), _Meta())
    module = _env().from_string(text).make_module(
        {"assay": _TypedAssay({"k": "string", "v": "decimal", "at": "timestamp"}), "adapter": _Adapter(),
         "exceptions": _Exceptions()})
    with pytest.raises(_Return) as got:
        getattr(module, "default__assay_declared__bronze__t")("cand")
    by_id = {c["check_id"]: c for c in got.value.value["checks"]}
    con = duckdb.connect()
    con.execute('create table cand (k varchar, v decimal(6,1), "at" timestamp)')
    con.executemany("insert into cand values (?, ?, ?)", [("a", None, T(2026, 3, 1)), ("a", Decimal("500"), T(2026, 3, 1)),
                                                          ("b", Decimal("1"), T(2026, 3, 1))])
    assert sorted(con.execute(by_id["NULLS"]["rows_sql"]).fetchall()) == [("a", None, T(2026, 3, 1))]
    assert sorted(con.execute(by_id["RANGE"]["rows_sql"]).fetchall()) == [("a", Decimal("500"), T(2026, 3, 1))]
    assert len(con.execute(by_id["KEY"]["rows_sql"]).fetchall()) == 2
    assert "rows_sql" not in by_id["ROWS"]


# --- the package macro that reads the runtime types ------------------------------------------

PACKAGE = Path(__file__).resolve().parents[2] / "dbt_package" / "macros" / "checks" / "relation_assay_types.sql"


@pytest.mark.parametrize("reported,expected", [
    # DuckDB
    ("INTEGER", "int"), ("HUGEINT", "int"), ("DECIMAL(12,2)", "decimal"), ("DOUBLE", "decimal"), ("VARCHAR", "string"),
    ("TIMESTAMP WITH TIME ZONE", "timestamp"), ("DATE", "date"), ("BOOLEAN", "bool"), ("INTERVAL", "string"),
    # PostgreSQL
    ("integer", "int"), ("numeric(12,2)", "decimal"), ("character varying(20)", "string"), ("text", "string"),
    ("timestamp without time zone", "timestamp"), ("double precision", "decimal"), ("jsonb", "string"),
    # Snowflake, BigQuery, Trino
    ("NUMBER(38,0)", "decimal"), ("TIMESTAMP_NTZ", "timestamp"), ("INT64", "int"), ("FLOAT64", "decimal"),
    ("BIGNUMERIC", "decimal"), ("DATETIME", "timestamp"), ("timestamp(6) with time zone", "timestamp"),
])
def test_relation_assay_types_reads_each_engines_type_names(reported, expected):
    class Column:
        def __init__(self, name, data_type):
            self.name, self.data_type = name, data_type

    env = _env()
    module = env.from_string(PACKAGE.read_text()).make_module({
        "adapter": type("A", (), {"get_columns_in_relation": staticmethod(lambda r: [Column("Amount", reported)])})()})
    with pytest.raises(_Return) as got:
        module.default__relation_assay_types("rel")
    # listed as the relation spells it, and folded to lower case as Postgres folds an unquoted name
    assert got.value.value == {"Amount": expected, "amount": expected}


def test_a_bronze_column_a_pii_field_reads_is_measured_as_the_marker(tmp_path):
    # a bronze table's declared checks printed a pii field's bronze value (`first at
    # ('CANARY-SSN-4711')`) and a redacted column's: measured as the marker now (an outside tester)
    from assay.privacy import HIDDEN

    spec = shutil.copytree(EXAMPLE, tmp_path / "spec")
    (spec / "spec" / "tables.yml").write_text(
        "tables_version: 1\ntables:\n  bronze.raw_customers:\n    columns: [email, phone, country]\n    checks:\n"
        "      - {check_id: email_unique, kind: key_uniqueness, enforcement: advisory, columns: [email]}\n"
        "      - {check_id: phone_unique, kind: key_uniqueness, enforcement: advisory, columns: [phone]}\n"
        "      - {check_id: country_unique, kind: key_uniqueness, enforcement: advisory, columns: [country]}\n")
    project = load_project(spec)
    macro = declared_table_macro(next(t for t in project.tables if t.name == "bronze.raw_customers"), project)
    marker = f"'{HIDDEN}'"
    keys = {name: part for name, part in re.findall(r"case when (\w+) is null then null else ('[^']*') end", macro)}
    assert keys.get("email") == marker and keys.get("phone") == marker, macro  # pii, and redacted
    assert "country" not in keys  # a column no entity hides is measured as before
