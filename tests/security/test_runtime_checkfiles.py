"""SQL check files may not call what reads host files, the environment or the network, writes
state, or runs SQL from a string (issue 21, item 8): refused by validation with file:line, from the
parsed statement (assay.checks.sqlguard), and the list is the one docs/checks.md documents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.checks.sqlfile import parse_check_file
from assay.checks.sqlguard import REFUSED_FUNCTIONS
from assay.cli.main import cli

PATH = "checks/silver/orders/probe.sql"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def _problems(sql: str) -> list[tuple[int, str]]:
    check, problems = parse_check_file(PATH, sql, default_on_failure="block", default_source="default")
    assert (check is None) == bool(problems)
    return [(p.line, p.message) for p in problems]


def _example(pattern: str) -> str:
    """A name the pattern refuses (a prefix pattern gets a suffix of its family)."""
    return pattern[:-1] + "x" if pattern.endswith("*") else pattern


@pytest.mark.parametrize("rule", REFUSED_FUNCTIONS, ids=lambda r: r.pattern)
def test_every_listed_function_is_refused_in_the_select_list_and_as_a_table(rule):
    name = _example(rule.pattern)
    for sql in (f"select {name}('x') as v from silver.orders",
                f"select * from silver.orders, {name}('x') as f",
                f"select * from silver.orders where 1 = (select count(*) from {name.upper()}('x'))"):
        [(line, message)] = _problems(sql)
        assert line == 1
        assert message.startswith("check silver.orders/probe calls ") and rule.does in message, message
        assert "remove the call" in message


def test_each_refusal_has_its_own_line_and_all_are_reported_at_once():
    sql = ("/* assay\non_failure: warn\n*/\nselect o.*, pg_read_file('/etc/passwd') as f\n"
           "from silver.orders as o\nwhere lo_from_bytea(0, 'x') > 0\n  or getenv('HOME') is not null\n")
    problems = _problems(sql)
    assert [(line, re.search(r"calls (\w+)", m).group(1)) for line, m in problems] == [
        (4, "pg_read_file"), (6, "lo_from_bytea"), (7, "getenv")]


@pytest.mark.parametrize("table", ["'orders.csv'", '"s3://bucket/x.parquet"', "'/etc/passwd'"])
def test_a_file_or_url_read_as_a_table_is_refused(table):
    [(line, message)] = _problems(f"select * from silver.orders\njoin {table} as f on true")
    assert line == 2 and "as a table, which DuckDB takes for a file or URL" in message


@pytest.mark.parametrize("sql", [
    "select * from silver.orders where lower(status) = 'x' and log(amount) > 1",
    "select query, lo, glob_pattern from silver.orders",  # columns named like functions are not calls
    "with q as (select * from silver.orders) select * from q where amount < 0",
    "select * from silver.orders where status like 'read_text%'",
])
def test_ordinary_checks_pass(sql):
    assert _problems(sql) == []


def test_the_documented_list_is_the_refused_list():
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## What a check may call", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([^`]+)` \|", section, flags=re.M)
    assert documented == [r.pattern for r in REFUSED_FUNCTIONS]


def test_assay_validate_refuses_a_check_file_reading_a_host_file(write_spec):
    root = write_spec({"checks/silver/orders/leak.sql": """
        /* assay
        on_failure: warn
        */
        SELECT o.order_id, read_text('/etc/passwd') AS content
        FROM silver.orders AS o
        """})
    result = CliRunner().invoke(cli, ["validate", "--spec", str(root)])
    assert result.exit_code != 0, result.output
    assert "checks/silver/orders/leak.sql:4:" in result.output, result.output
    assert "calls read_text, which reads files or URLs from the machine that runs the build" in result.output


@pytest.mark.parametrize("sql, called", [
    ("select pg_catalog.pg_read_file('/etc/passwd') from silver.orders", "pg_read_file"),
    ("select \"pg_read_file\"('x') from silver.orders", "pg_read_file"),
    ("select * from silver.orders, lateral pg_ls_dir('.') as d", "pg_ls_dir"),
    ("select * from silver.orders where exists (select 1 from read_text('x'))", "read_text"),
    ("select * from silver.orders, main.read_csv('x.csv')", "read_csv"),
    ("select * from silver.orders where status = any(select * from dblink('h', 'select 1') as t(a text))", "dblink"),
    ("select * from silver.orders where x in (select unnest(glob('*')))", "glob"),
])
def test_qualified_quoted_and_nested_calls_are_found(sql, called):
    [(line, message)] = _problems(sql)
    assert line == 1 and f"calls {called}, which" in message


# An outside security tester (session 40, decision 1134) read another DuckDB file with
# `read_duckdb`, wrote host files with `enable_logging`, read settings with `duckdb_settings`,
# ran SQL hidden in a dollar-quoted string on Spark, and had SQLMesh fill a config variable into a
# quoted alias. Each of these is refused now, in a check file and in an expression rule alike.

@pytest.mark.parametrize("sql", [
    "select * from silver.orders cross join some_extension_scan('/work/x') as s",  # no name of the list
    "select * from silver.orders as o, my_schema.my_table_function(1) as f",
])
def test_rows_from_any_function_but_the_pure_ones_are_refused(sql):
    [(line, message)] = _problems(sql)
    assert "reads rows from the function" in message and "the functions a FROM may call are" in message, message


@pytest.mark.parametrize("sql", [
    "select * from silver.orders as o cross join range(3) as r(i) where o.amount < r.i",
    "select * from silver.orders as o, unnest([1, 2]) as u(x) where o.amount = u.x",
    "select * from silver.orders as o, generate_series(1, 3) as g(x) where o.amount = g.x",
])
def test_the_pure_table_functions_stay_allowed(sql):
    assert _problems(sql) == []


@pytest.mark.parametrize("sql, called", [
    ("select o.* from silver.orders as o cross join read_duckdb('/tmp/other.duckdb', table_name => 'secret') as s", "read_duckdb"),
    ("select o.* from silver.orders as o cross join duckdb_settings() as s", "duckdb_settings"),
    ("select o.* from silver.orders as o cross join enable_logging(level => 'info', storage => 'file') as l", "enable_logging"),
    ("select * from silver.orders where reflect('java.lang.System', 'getenv', 'HOME') = '/root'", "reflect"),
    ("select * from silver.orders where java_method('java.lang.System', 'getenv', 'HOME') is not null", "java_method"),
])
def test_the_functions_the_tester_called_are_refused_once_each(sql, called):
    [(line, message)] = _problems(sql)
    assert f"calls {called}, which" in message, message


def test_a_dollar_quoted_string_is_refused():
    """To sqlglot `$a$x\\' or ... $a$` is one literal; written for Spark it ended at `\\'` and the rest
    ran as SQL (the tester's injected predicate set `order` back)."""
    sql = "select * from silver.orders where status = $a$x\\' or 1 = 1 or status = $a$"
    [(line, message)] = _problems(sql)
    assert "writes a dollar-quoted string" in message and "write it as a '...' literal" in message, message


@pytest.mark.parametrize("name", ["tok_@api_token", "gw_@{gateway}", "@this_model", "{% x %}", "{{ 7 * 7 }}", "a{#b"])
def test_a_name_holding_a_sqlmesh_variable_or_jinja_is_refused(name):
    [(line, message)] = _problems(f'select o.order_id, o.status as "{name}" from silver.orders as o')
    assert "SQLMesh substitutes its variables" in message, message


def test_an_expression_rule_is_held_to_the_same_rules():
    from assay.validate.expressions import parse_expression

    for text, said in [("status <> $x${% x %}$x$", "dollar-quoted string"),
                       ('(status collate "x_@api_token") is not null', "SQLMesh substitutes its variables"),
                       ("discount <= amount and status <> $x$a\\' or 1 = 1 or $x$", "dollar-quoted string")]:
        _tree, problems = parse_expression(text)
        assert any(said in p for p in problems), (text, problems)
    assert parse_expression("discount <= amount and status <> 'a''b'")[1] == []
