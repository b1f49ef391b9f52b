"""Renders every public macro of the `assay` dbt package for every engine it supports and
parses the SQL with sqlglot in that engine's dialect.

Only DuckDB and Postgres run for real (test_dbt_package_integration.py). This catches what
would otherwise surface only at a user's site: a Jinja error in a branch no CI engine takes,
a dispatch that falls through to the wrong parent (Databricks -> Spark, Redshift -> Postgres),
or SQL the dialect cannot parse. It runs the package's Jinja with a stand-in for the few dbt
context members the macros use, so it needs no adapter plugin; where dbt-spark is installed, dbt's
`dateadd` on Spark is dbt-spark's own, so the Spark primitive table runs what a build runs
(decision 0994).
"""

from __future__ import annotations

import datetime
import functools
import importlib
import json
import re
from pathlib import Path

import jinja2
import pytest
import sqlglot

MACROS = Path(__file__).resolve().parents[2] / "dbt_package" / "macros"
OWN_DIRS = ["_internal", "types", "temporal", "text", "flags", "keys", "json", "audits", "checks", "incremental"]

# dbt's dispatch order: the adapter, its declared parents, then default.
PREFIXES = {
    "duckdb": ["duckdb"], "postgres": ["postgres"], "redshift": ["redshift", "postgres"],
    "snowflake": ["snowflake"], "bigquery": ["bigquery"], "spark": ["spark"],
    "databricks": ["databricks", "spark"], "trino": ["trino"],
}
NO_NFC = {"redshift", "snowflake"}  # Spark/Databricks: ICU4J through reflect()

FLAGS = [["amount_negative", "amount < 0"], ["status_unknown", "status <> 'x'"]]
CALLS = {
    "sql_type": [("decimal(12,4)",), ("timestamp",), ("variant",)],
    "try_cast": [(t,) for t in ("int", "decimal(10,2)", "date", "timestamp", "bool", "string", "variant")],
    "parse_ts": [("ISO8601",), ("ISO8601_INSTANT",), ("%d %b %Y %H:%M:%S.%f",), ("%Y%m%d",)],
    "parse_date": [("ISO8601",), ("%d/%m/%y",)],
    "to_utc": [("Europe/Paris",)],
    "utc_now": [()],
    "regex_matches": [(r"^(?:[A-Z]{3})-\d{4}$|^[^\\']*$",)],
    "regex_extract": [(r"(?:a)([a-z]+)-(\d+)", 2), (r"\d+", 0)],
    "char_length": [()],
    "is_nfc": [()],
    "charset_violates": [([[0, 31], [127, 159], [0x1F300, 0x1FAFF]], "forbid"), ([[32, 126]], "allow"), ([], "allow")],
    "quality_flags": [(FLAGS,), ([],)],
    "quality_ok": [()],
    "flags_contain": [("amount_negative",)],
    "flags_to_text": [()],
    "reject_id": [("bronze.orders",), ("bronze.orders", "export")],
    "unknown_member": [("c.id",)],
    "json_object": [([["id", "x"], ["note", "y"]],)],
    "json_extract_text": [(["a", "we'ird"],)],
    "json_valid": [()],
    "json_path_blocked": [(["billed", "amount", "we'ird"],), (["only"],)],
    "string_literal": [],
    "delivery_fingerprint": [("w",), ("null",)],
    "fingerprint_sum": [()],
}


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def _raise_return(value):
    raise _Return(value)


def _raise_compiler_error(msg):
    raise jinja2.TemplateError(msg)


class _Namespace:
    def __init__(self, macros: dict):
        self.__dict__.update(macros)


def _adapter_dateadd(engine: str):
    """dbt's `dateadd` as the engine's adapter spells it, where that adapter is installed (Spark:
    dbt-spark's, which goes through whole seconds; the Spark primitive table must run what a build
    runs; PostgreSQL: dbt-postgres's interval arithmetic), else a stand-in: the other engines' rows
    come from real dbt builds."""
    stub = lambda part, n, ts: f"DATEADD({part}, {n}, {ts})"  # noqa: E731
    if engine not in ("spark", "postgres"):
        return stub
    try:
        include = importlib.import_module(f"dbt.include.{engine}")
    except ImportError:
        return stub
    utils = Path(include.__file__).resolve().parent / "macros" / "utils"
    env = jinja2.Environment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    found: dict = {}

    def wrap(macro):  # each call ends at its own `return`, as dbt's macros do
        def call(*args):
            try:
                return str(macro(*args))
            except _Return as r:
                return r.value
        return call

    env.globals.update({
        "return": _raise_return,
        "exceptions": _Namespace({"raise_compiler_error": _raise_compiler_error}),
        "adapter": _Namespace({"dispatch": lambda name, namespace=None: found[f"{engine}__{name}"]}),
    })
    for name in ("assert_not_null", "dateadd"):  # a template sees the globals it was made with
        if not (utils / f"{name}.sql").exists():
            continue
        template = env.from_string((utils / f"{name}.sql").read_text(encoding="utf-8"))
        context = template.new_context()
        "".join(template.root_render_func(context))
        found.update({k: wrap(v) for k, v in context.vars.items() if isinstance(v, jinja2.runtime.Macro)})
        env.globals.update(found)
    return found[f"{engine}__dateadd"]


@functools.lru_cache(maxsize=None)
def render_env(engine: str) -> _Namespace:
    env = jinja2.Environment(extensions=["jinja2.ext.do"], undefined=jinja2.StrictUndefined)
    macros: dict = {}
    assay = _Namespace({})  # filled below; modules copy the globals when they are created

    def wrap(macro):
        def call(*args, **kwargs):
            try:
                return str(macro(*args, **kwargs))
            except _Return as r:
                return r.value
        return call

    def dispatch(name, namespace):
        for prefix in PREFIXES[engine] + ["default"]:
            if f"{prefix}__{name}" in macros:
                return macros[f"{prefix}__{name}"]
        raise AssertionError(f"no implementation of {name} for {engine}")

    env.globals.update({
        "return": _raise_return, "execute": True, "modules": _Namespace({"re": re}),
        "exceptions": _Namespace({"raise_compiler_error": _raise_compiler_error}),
        "target": _Namespace({"type": engine, "schema": "analytics"}),
        "var": lambda name, default=None: 150000 if name == "assay_postgres_version_num" else default,
        "adapter": _Namespace({"dispatch": dispatch, "quote": lambda s: f'"{s}"'}),
        "dbt": _Namespace({"dateadd": _adapter_dateadd(engine)}),
        "assay": assay, "tojson": lambda value, sort_keys=False: json.dumps(value, sort_keys=sort_keys),
        "run_started_at": datetime.datetime(2025, 1, 2, 3, 4, 5, 600000),
    })
    for folder in OWN_DIRS:
        for path in sorted((MACROS / folder).glob("*.sql")):
            # rendered by hand: Template.module would hide the _private macros
            template = env.from_string(path.read_text())
            context = template.new_context()
            "".join(template.root_render_func(context))
            for name, value in context.vars.items():
                if isinstance(value, jinja2.runtime.Macro):
                    macros[name] = wrap(value)
    assay.__dict__.update(macros)
    return assay


def rendered(engine: str) -> list[tuple[str, str]]:
    assay = render_env(engine)
    out = []
    for name, cases in CALLS.items():
        for args in cases:
            if name == "is_nfc" and engine in NO_NFC:
                with pytest.raises(jinja2.TemplateError, match="normalization"):
                    assay.is_nfc("v")
                continue
            first = [] if name in ("sql_type", "quality_flags", "json_object", "utc_now") else ["v"]
            out.append((name, getattr(assay, name)(*first, *args)))
    return out


@pytest.mark.parametrize("engine", sorted(PREFIXES))
def test_every_macro_renders_to_sql_the_dialect_parses(engine: str) -> None:
    dialect = {"databricks": "databricks", "spark": "spark"}.get(engine, engine)
    for name, sql in rendered(engine):
        statement = f"SELECT CAST(NULL AS {sql}) FROM t" if name == "sql_type" else f"SELECT {sql} FROM t"
        try:
            sqlglot.parse_one(statement, read=dialect)
        except sqlglot.errors.ParseError as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{engine} {name}: {exc}\n{statement}")


@pytest.mark.parametrize("engine", sorted(PREFIXES))
def test_backslashes_and_quotes_survive_string_literal(engine: str) -> None:
    literal = render_env(engine).string_literal(r"it's \d")
    parsed = sqlglot.parse_one(f"SELECT {literal}", read={"databricks": "databricks"}.get(engine, engine))
    assert parsed.expressions[0].this == r"it's \d"


# Decision 0943: a key path inside a JSON column, beside a whole column.
REDACT = ["phone", "payload.ssn", "payload.a.b", "extra.card"]


@pytest.mark.parametrize("engine", ["duckdb", "postgres", "spark", "databricks"])
def test_row_json_with_key_paths_renders_to_sql_the_dialect_parses(engine: str) -> None:
    sql = render_env(engine).row_json("b", REDACT)
    sqlglot.parse_one(f"SELECT {sql} FROM t AS b", read=engine)
    # each JSON column is rewritten once, with every path of it
    assert sql.count("'payload'") == sql.count("'extra'") >= 1
    assert "'phone'" in sql and "ssn" in sql and "card" in sql


@pytest.mark.parametrize("engine", ["snowflake", "bigquery", "redshift", "trino"])
def test_row_json_with_key_paths_is_refused_where_no_spelling_removes_a_key(engine: str) -> None:
    with pytest.raises(jinja2.TemplateError, match="redact the whole column|list the bronze columns"):
        render_env(engine).row_json("b", REDACT)


def test_parents_are_used_where_an_engine_has_no_form_of_its_own() -> None:
    redshift, databricks = render_env("redshift"), render_env("databricks")
    assert "TRY_CAST(" in redshift.try_cast("v", "date") and "input_is_valid" not in redshift.try_cast("v", "date")
    assert redshift.install_functions().strip() == ""
    assert redshift.quality_flags(FLAGS).startswith("LTRIM(")
    assert "filter(array(" in databricks.quality_flags(FLAGS)
    assert databricks.sql_type("variant") == "STRING"


MAPPINGS = [["orders", "raw_orders", "bronze.raw_orders"], ["orders_eu", "raw_orders_eu", "bronze.raw_orders_eu"]]
QUERIES = {
    "conservation_count_violations": [("silver.orders", "silver.orders__staged", "silver.orders__reject", MAPPINGS),
                                      ("silver.orders", "silver.orders__staged", None, MAPPINGS)],
    "conservation_violations": [("silver.orders", "silver.orders__staged", "silver.orders__reject", MAPPINGS),
                                ("silver.orders", "silver.orders__staged", None, MAPPINGS)],
    "key_uniqueness_violations": [("silver.orders", ["order_id", "line_no"])],
    "fail_rule_violations": [("silver.orders", "amount_negative", "_quality_flags")],
    "check_results_select": [()],
    "check_rows_select": [()],
}


@pytest.mark.parametrize("engine", sorted(PREFIXES))
def test_audit_queries_render_to_sql_the_dialect_parses(engine: str) -> None:
    """The audits and the results-table shape, which only DuckDB and Postgres run for real."""
    assay = render_env(engine)
    dialect = {"databricks": "databricks", "spark": "spark"}.get(engine, engine)
    for name, cases in QUERIES.items():
        for args in cases:
            sql = getattr(assay, name)(*args)
            try:
                sqlglot.parse_one(sql, read=dialect)
            except sqlglot.errors.ParseError as exc:  # pragma: no cover - the message is the point
                pytest.fail(f"{engine} {name}: {exc}\n{sql}")
    for domain in ("timestamp", "date", "numeric"):
        sqlglot.parse_one(f"SELECT {assay.continuity_gap('lo', 'hi', domain)} FROM t", read=dialect)
    assert "2025-01-02 03:04:05.600000" in assay.run_timestamp()


# An engine's error, as a check file's query on a pii column raises it, and what it may quote.
QUOTED_MESSAGES = [
    "Conversion Error: Could not convert string 'SECRET-SSN-123456' to INT32",
    "Conversion Error: Could not convert string 'x'MIDDLE-LEAK-SECRET'y' to INT32",  # quotes inside the value
    "invalid input syntax for type integer: \"line1\nNEWLINE-LEAK-SECRET tail\"",  # a line break inside it
    "Could not convert string 'unclosed SECRET",  # cut short: the rest is hidden
    'column "ssn" of "person": value \'SECRET\' out of range',
    "Binder Error: no quote at all",
    # values given bare (an outside tester, session 40): numbers go, a type's digits stay
    "Conversion Error: Type INT64 with value 98765432109 can't be cast to the destination type INT32",
    "Out of Range Error: Overflow in multiplication of INT64 (3000000000 * -3000000000)!",
    "Conversion Error: Failed to cast decimal value 123.45 to type INT64",
]


@pytest.mark.parametrize("message", QUOTED_MESSAGES)
def test_quoted_hidden_is_privacy_quoted_hidden(message: str) -> None:
    """The package's `_quoted_hidden` and the generator's `privacy.quoted_hidden` are one rule; no
    quoted secret and no bare number survives either."""
    from assay.privacy import quoted_hidden

    hidden = render_env("duckdb")._quoted_hidden(message)
    assert hidden == quoted_hidden(message)
    assert "SECRET" not in hidden and "LEAK" not in hidden
    for number in ("98765432109", "3000000000", "123.45"):
        assert number not in hidden
    assert "INT64" in hidden or "INT64" not in message


# Engines that give the value bare, with no quote and no digit to find (an outside tester,
# session 42): only the kind of error may be kept.
BARE_MESSAGES = [
    ("Invalid Input Error: Zelda Canaryperson", "Invalid Input Error"),  # DuckDB's error(<pii column>)
    ("Invalid Input Error: missing ): (CANARY-SSN", "Invalid Input Error"),  # a regex built from a value
    ('Invalid Input Error: Could not parse string "CNRY-NAME" according to format specifier "%Y"\nCNRY-NAME\n^\n'
     "Error: Literal does not match, expected -", "Invalid Input Error"),  # strptime's caret excerpt
    ("[CAST_INVALID_INPUT] The value 'CNRY' of the type \"STRING\" cannot be cast to \"INT\". SQLSTATE: 22018",
     "CAST_INVALID_INPUT"),  # Spark's error class
    ('invalid input syntax for type integer: "CNRY-SSN"', "invalid input syntax for type integer"),  # PostgreSQL
]


@pytest.mark.parametrize("message", QUOTED_MESSAGES + [m for m, _ in BARE_MESSAGES])
def test_engine_message_is_privacy_engine_message(message: str) -> None:
    """The package's `_engine_message` (a SQL check's error on a spec with pii fields or
    redactions) and the generator's `privacy.engine_message` are one rule: the kind of error and
    nothing of what follows it."""
    from assay.privacy import engine_message

    kept = render_env("duckdb")._engine_message(message)
    assert kept == engine_message(message)
    for secret in ("SECRET", "LEAK", "Zelda", "CANARY", "CNRY", "98765432109", "3000000000", "123.45"):
        assert secret not in kept


@pytest.mark.parametrize(("message", "kind"), BARE_MESSAGES)
def test_engine_message_keeps_the_kind_of_error(message: str, kind: str) -> None:
    from assay.privacy import MESSAGE_WITHHELD, engine_message

    assert engine_message(message) == f"{kind} ({MESSAGE_WITHHELD})"


def test_a_message_without_a_colon_keeps_its_words_without_its_quotes() -> None:
    from assay.privacy import engine_message

    assert engine_message("division by zero") == "division by zero"
    assert engine_message('column "ssn" does not exist') == "column (a quoted value: not shown) does not exist"
