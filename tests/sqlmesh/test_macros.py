"""The assay_sqlmesh macros, expanded by SQLMesh's own MacroEvaluator.

DuckDB is the execution oracle: each rendering is run on an in-memory DuckDB and its value
compared with what the semantics demand (docs/internals/pipeline.md). Every other engine's
rendering is parsed back with sqlglot in that engine's dialect (compile-only coverage).
"""

from __future__ import annotations

import datetime as dt
import doctest
import hashlib
from decimal import Decimal

import duckdb
import pytest
import sqlglot
from sqlmesh.core.dialect import parse_one as parse_sqlmesh
from sqlmesh.core.macros import MacroEvaluator

import assay_sqlmesh
from assay.lower.mart import COLUMNS
from assay_sqlmesh import AssayMacroError, render_sql
from assay_sqlmesh import audits, casts, flags, json_text, stopped_counts, temporal, text

DIALECTS = ("bigquery", "databricks", "duckdb", "postgres", "redshift", "snowflake", "spark", "trino")


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    yield c
    c.close()


def value(con, call: str):
    """Expand `call` for DuckDB with a real MacroEvaluator and evaluate it."""
    assay_sqlmesh.register()
    evaluator = MacroEvaluator(dialect="duckdb")
    sql = evaluator.transform(parse_sqlmesh(f"SELECT {call} AS v", dialect="duckdb")).sql(dialect="duckdb")
    return con.execute(sql).fetchone()[0]


@pytest.mark.parametrize("module", [casts, text, temporal, json_text, flags, audits, stopped_counts], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


def test_every_macro_has_a_runnable_example():
    for name, fn in assay_sqlmesh.macros().items():
        assert fn.__doc__ and ">>> " in fn.__doc__, f"{name} has no docstring example"


# --- casts: strict integer text, clock words, NaN ------------------------------------------
@pytest.mark.parametrize(
    "raw, assay_type, expected",
    [
        ("12", "int", 12),
        (" -7 ", "int", -7),
        ("+7", "int", 7),
        ("12.5", "int", None),
        ("1_000", "int", None),
        ("0x1F", "int", None),
        ("", "int", None),
        ("12.50", "decimal(12,2)", Decimal("12.50")),
        ("12,50", "decimal(12,2)", None),
        ("NaN", "decimal(12,2)", None),
        ("-Infinity", "decimal(12,2)", None),
        ("2025-12-31", "date", dt.date(2025, 12, 31)),
        ("2025-02-30", "date", None),
        ("today", "date", None),
        ("now", "timestamp", None),
        ("epoch", "timestamp", None),
        ("true", "bool", True),
        ("abc", "string", "abc"),
    ],
)
def test_try_cast_yields_null_instead_of_raising(con, raw, assay_type, expected):
    assert value(con, f"@assay_try_cast('{raw}', '{assay_type}')") == expected


def test_try_cast_of_null_is_null(con):
    assert value(con, "@assay_try_cast(NULL, 'int')") is None


def test_coercion_marker_fires_only_when_a_value_was_lost(con):
    assert value(con, "@assay_coercion_failed('x', @assay_try_cast('x', 'int'))") is True
    assert value(con, "@assay_coercion_failed('1', @assay_try_cast('1', 'int'))") is False
    assert value(con, "@assay_coercion_failed(NULL, @assay_try_cast(NULL, 'int'))") is False


def test_unknown_type_is_refused_at_render_time():
    with pytest.raises(Exception, match="unknown logical type"):
        render_sql("@assay_try_cast(x, 'integer')")


def test_postgres_guard_is_the_engines_parser_and_15_uses_the_stand_in():
    assert "PG_INPUT_IS_VALID(" in render_sql("@assay_try_cast(x, 'date')", "postgres")
    pg15 = render_sql("@assay_try_cast(x, 'date')", "postgres", __sqlmesh__vars__={"assay_postgres_version_num": 150000})
    assert "ASSAY_INPUT_IS_VALID(" in pg15
    assert "assay_input_is_valid" in render_sql("@assay_install_functions()", "postgres", __sqlmesh__vars__={"assay_postgres_version_num": 150000})


# --- temporal: strict ISO 8601 --------------------------------------------------------------
@pytest.mark.parametrize(
    "raw, fmt, expected",
    [
        ("2025-12-31", "ISO8601", dt.datetime(2025, 12, 31)),
        ("2025-12-31T10:00:00Z", "ISO8601", dt.datetime(2025, 12, 31, 10)),
        ("2025-12-31 10:00", "ISO8601", dt.datetime(2025, 12, 31, 10)),
        ("2025-12-31T10:00:00+02:00", "ISO8601", dt.datetime(2025, 12, 31, 8)),
        ("2025-12-31T10:00:00-01:30", "ISO8601", dt.datetime(2025, 12, 31, 11, 30)),
        ("2025-12-31T10:00:00.123456Z", "ISO8601", dt.datetime(2025, 12, 31, 10, 0, 0, 123456)),
        ("20251231", "ISO8601", None),
        ("2025-02-30", "ISO8601", None),
        ("2025-12-31T23:59:60Z", "ISO8601", None),
        ("", "ISO8601", None),
        ("0000-01-01", "ISO8601", None),
        ("2025-12-31T10:00:00", "ISO8601_INSTANT", None),
        ("2025-12-31T10:00:00Z", "ISO8601_INSTANT", dt.datetime(2025, 12, 31, 10)),
        ("31/12/2025", "%d/%m/%Y", dt.datetime(2025, 12, 31)),
        ("32/12/2025", "%d/%m/%Y", None),
    ],
)
def test_parse_ts(con, raw, fmt, expected):
    assert value(con, f"@assay_parse_ts('{raw}', '{fmt}')") == expected


@pytest.mark.parametrize("raw, expected", [("2025-12-31", dt.date(2025, 12, 31)), ("2025-12-31T10:00:00Z", None), ("2025-13-01", None)])
def test_parse_date_iso(con, raw, expected):
    assert value(con, f"@assay_parse_date('{raw}', 'ISO8601')") == expected


def test_to_utc(con):
    assert value(con, "@assay_to_utc(CAST('2025-06-01 12:00:00' AS TIMESTAMP), 'Europe/Berlin')") == dt.datetime(2025, 6, 1, 10)


def test_portable_strftime_needs_a_full_date():
    with pytest.raises(Exception, match="needs a year, a month and a day"):
        render_sql("@assay_parse_ts(x, '%H:%M')", "trino")
    with pytest.raises(Exception, match="not supported"):
        render_sql("@assay_parse_ts(x, '%j')", "postgres")


# --- text -----------------------------------------------------------------------------------
def test_regex(con):
    assert value(con, r"@assay_regex_matches('abc12345xyz', '[0-9]{5}')") is True
    assert value(con, r"@assay_regex_matches('abc12345xyz', '^[0-9]{5}$')") is False
    assert value(con, r"@assay_regex_extract('AB-42', '^([A-Z]+)-([0-9]+)$', 2)") == "42"
    # no match is NULL, never ''
    assert value(con, r"@assay_regex_extract('nope', '^([A-Z]+)-([0-9]+)$', 2)") is None


def test_regex_groups_renumbering():
    assert text.regex_groups("^(a)(b)(?:c)$", 2) == ("^(?:a)(b)(?:c)$", 1)
    assert text.regex_groups("^(?:a)(b)$", 1, to_capturing=True) == ("^(a)(b)$", 2)
    assert text.regex_groups(r"[(](x)", 1) == (r"[(](x)", 1)
    with pytest.raises(AssayMacroError):
        text.regex_groups("(a)", 2)


def test_length_nfc_charset(con):
    assert value(con, "@assay_char_length('héllo')") == 5
    assert value(con, "@assay_is_nfc('é')") is True
    assert value(con, "@assay_is_nfc('e' || chr(769))") is False
    assert value(con, "@assay_charset_violates('Привет', 'U+0400-U+04FF', 'forbid')") is True
    assert value(con, "@assay_charset_violates('Hello', 'U+0400-U+04FF', 'forbid')") is False
    assert value(con, "@assay_charset_violates('Hello', 'U+0041-U+005A,U+0061-U+007A', 'allow')") is False
    assert value(con, "@assay_charset_violates('Hello!', 'U+0041-U+005A,U+0061-U+007A', 'allow')") is True
    assert value(con, "@assay_charset_violates(NULL, 'U+0400-U+04FF', 'forbid')") is None


def test_charset_ranges_skip_surrogates_and_clip():
    assert text.clean_ranges([(0xD000, 0xE100)]) == [(0xD000, 0xD7FF), (0xE000, 0xE100)]
    assert text.clean_ranges([(0, 5)], min_cp=1) == [(1, 5)]


# --- flags, keys, JSON ----------------------------------------------------------------------
def test_quality_flags_fire_only_on_true(con):
    got = value(con, "@assay_quality_flags(('a_rule', TRUE), ('b_rule', NULL), ('c_rule', FALSE), ('d_rule', 1 = 1))")
    assert got == ["a_rule", "d_rule"]
    assert value(con, "@assay_quality_flags()") == []
    assert value(con, "@assay_quality_ok(@assay_quality_flags())") is True
    assert value(con, "@assay_flags_contain(['a_b', 'c'], 'a')") is False
    assert value(con, "@assay_flags_to_text(['a', 'b'])") == "a,b"


def test_quality_flags_refuse_unsorted_or_odd_names():
    with pytest.raises(Exception, match="sorted"):
        render_sql("@assay_quality_flags(('b', x), ('a', y))")
    with pytest.raises(Exception, match=r"\[a-z0-9_\]"):
        render_sql("@assay_quality_flags(('Bad-Name', x))")


def test_string_form_of_flags_agrees_with_the_array_form():
    sql = render_sql("@assay_quality_flags(('a', TRUE), ('b', FALSE), ('c', TRUE))", "redshift")
    assert "TRIM(" in sql and "ARRAY" not in sql
    con = duckdb.connect()
    assert con.execute(f"SELECT {sqlglot.transpile(sql, read='redshift', write='duckdb')[0]}").fetchone()[0] == "a,c"


def test_reject_id_and_unknown_member(con):
    assert value(con, "@assay_reject_id('raw_orders', 'row-1')") == hashlib.md5(b"raw_orders|row-1").hexdigest()
    # a relation two mappings of one entity read (decision 0947)
    assert value(con, "@assay_reject_id('raw_meter', 'r1', 'export')") == hashlib.md5(b"raw_meter:export|r1").hexdigest()
    assert value(con, "@assay_unknown_member('C-9', NULL)") == "__unknown__"
    assert value(con, "@assay_unknown_member(CAST(NULL AS TEXT), NULL)") is None
    assert value(con, "@assay_unknown_member('C-1', TRUE)") == "C-1"


def test_json_builders(con):
    assert value(con, "@assay_json_object(('k', 'v'), ('n', NULL), ('i', 1))") == '{"k":"v","n":null,"i":1}'
    assert value(con, "@assay_json_extract_text('{\"a\": {\"b\": \"x\"}}', 'a', 'b')") == "x"
    assert value(con, "@assay_json_extract_text('{\"a\": {}}', 'a', 'b')") is None
    con.execute("create or replace table t as select 1 as id, 'x@y' as email, 'n' as name")
    evaluator_sql = render_sql("SELECT @assay_row_json(t, 'email') FROM t AS t")
    assert con.execute(evaluator_sql).fetchone()[0] == '{"id":1,"name":"n"}'


def test_run_identity_comes_from_the_engine_adapter():
    class Adapter:
        dialect = "postgres"
        correlation_id = "SQLMESH_RUN: abc123"

        def fetchone(self, sql):  # the server version, asked once per connection
            return (180001,)

    assay_sqlmesh.register()
    evaluator = MacroEvaluator(dialect="duckdb")
    evaluator.locals["engine_adapter"] = Adapter()
    evaluator.locals["execution_ts"] = "2026-01-06 10:00:00"
    sql = evaluator.transform(parse_sqlmesh("SELECT @assay_run_id(), @assay_run_timestamp(), @assay_try_cast(x, 'int')", dialect="duckdb"))
    rendered = sql.sql(dialect="postgres")
    assert "'SQLMESH_RUN: abc123'" in rendered
    assert "'2026-01-06 10:00:00'" in rendered
    # the engine decides, not the model dialect: Postgres gets its guarded cast
    assert "PG_INPUT_IS_VALID" in rendered


# --- audits on DuckDB -----------------------------------------------------------------------
def test_audit_queries_return_the_violations(con):
    con.execute("create schema if not exists bronze")
    con.execute(
        "create or replace table bronze.raw as select * from (values "
        "('l1', '2026-01-05T10:00:00Z', 'r1'), ('l1', 'not a time', 'r2'), (NULL, '2026-01-05', 'r3'), "
        "('l1', '2026-01-05', 'r4'), ('l1', '2026-01-05', 'r4'), ('l2', '2026-01-06', 'r1')) as v(_load_id, _ingested_at, _source_row_id)"
    )
    # r4 repeats within l1 (corrupt); r1 comes back in l2 (a re-delivery, decision 0014: not a violation)
    rows = con.execute(render_sql("@assay_ingestion_metadata_violations(bronze.raw)")).fetchall()
    assert sorted(rows) == [("duplicate_source_row_id", "r4"), ("duplicate_source_row_id", "r4"), ("missing_metadata", "r3"), ("unparseable_ingested_at", "r2")]
    # Bounded by a staged model's delivery ranks (decision 0412), here ranked by hand: the same rows
    con.execute(
        "create or replace table bronze.ranked as select 'raw' as _mapping, _source_row_id, "
        "try_cast(_ingested_at as timestamp) as _ingested_at, case when _source_row_id is null then 1 else "
        "row_number() over (partition by _source_row_id order by _ingested_at desc, _load_id desc) end as _delivery_rank "
        "from bronze.raw union all select 'other', 'r1', null, 2"  # another mapping's ranks are not read
    )
    ranked = render_sql("@assay_ingestion_metadata_violations(bronze.raw, bronze.ranked, ('raw'))")
    assert "bronze.ranked" in ranked and sorted(con.execute(ranked).fetchall()) == sorted(rows)
    con.execute("insert into bronze.raw values ('l2', 'garbage', NULL), ('l3', 'later', 'r1')")
    con.execute("insert into bronze.ranked values ('raw', NULL, NULL, 1), ('raw', 'r1', NULL, 1)")
    assert sorted(con.execute(ranked).fetchall(), key=repr) == sorted(
        rows + [("missing_metadata", None), ("unparseable_ingested_at", None), ("unparseable_ingested_at", "r1")], key=repr)
    assert sorted(con.execute(ranked).fetchall(), key=repr) == sorted(
        con.execute(render_sql("@assay_ingestion_metadata_violations(bronze.raw)")).fetchall(), key=repr)
    fresh = render_sql("@assay_freshness_violations(bronze.raw, 24)", execution_ts="2026-01-05 20:00:00")
    assert con.execute(fresh).fetchall() == []
    stale = render_sql("@assay_freshness_violations(bronze.raw, 6)", execution_ts="2026-01-06 20:00:00")
    assert len(con.execute(stale).fetchall()) == 1

    # a bronze row is one delivery: (_source_row_id, _load_id); r2 was delivered twice (decision 0014)
    con.execute(
        "create or replace table bronze.raw as select * from (values ('r1', 'l1'), ('r2', 'l1'), ('r2', 'l2'), ('r3', 'l1'), ('r4', 'l1')) "
        "v(_source_row_id, _load_id)"
    )
    con.execute("create or replace table e as select 'm' as _mapping, 'r1' as _source_row_id, 'l1' as _load_id, 'k' as k, ['x'] as _quality_flags")
    con.execute(
        "create or replace table s as select 'm' as _mapping, 'r2' as _source_row_id, 'l1' as _load_id, 'deduped' as _route "
        "union all select 'm', 'r2', 'l2', 'deduped'"
    )
    con.execute(
        "create or replace table rej as select 'raw' as source_relation, 'r3' as _source_row_id, 'l1' as _load_id, NULL::timestamp as resolved_at "
        "union all select 'raw', 'r1', 'l1', NULL::timestamp"
    )
    assert con.execute(render_sql("@assay_fail_rule_violations(e, 'x', _quality_flags)")).fetchall() != []
    con.execute("create or replace table keys as select * from (values ('a', 1), ('a', 1), (NULL, 1), (NULL, 1)) v(k1, k2)")
    assert con.execute(render_sql("@assay_key_uniqueness_violations(keys, (k1, k2))")).fetchall() == [("a", 1, 2)]


def test_coverage_and_reconcile_audits(con):
    con.execute("create or replace table parent as select * from (values ('p1'), ('p2')) v(id)")
    con.execute("create or replace table child as select * from (values ('p1', 1.0), ('p1', 2.0), (NULL, 5.0)) v(pid, amount)")
    coverage = render_sql("@assay_coverage_violations(parent, child, (('pid', 'id')), 1)")
    assert con.execute(coverage).fetchall() == [("p2", 0)]
    recon = render_sql("@assay_reconcile_violations(child, 'amount', 'sum', ('pid'), child, 'amount', 'max', ('pid'), '0.5')")
    # p1: sum 3 vs max 2 differs by more than 0.5; the NULL group agrees with itself
    assert [r[0] for r in con.execute(recon).fetchall()] == ["p1"]


# --- every engine: renders and parses back ---------------------------------------------------
SAMPLES = [
    "@assay_try_cast(x, 'int')",
    "@assay_try_cast(x, 'decimal(38,9)')",
    "@assay_try_cast(x, 'timestamp')",
    "@assay_try_cast(x, 'variant')",
    "@assay_cast(x, 'string')",
    "@assay_coercion_failed(x, @assay_try_cast(x, 'bool'))",
    "@assay_parse_ts(x, 'ISO8601')",
    "@assay_parse_ts(x, '%d/%m/%Y %H:%M')",
    "@assay_parse_ts(x, '%d %b %y')",
    "@assay_parse_date(x, 'ISO8601')",
    "@assay_to_utc(x, 'Europe/Berlin')",
    "@assay_regex_matches(x, '^(?:a|b)[0-9]+$')",
    "@assay_regex_extract(x, '^([A-Z]+)-([0-9]+)$', 2)",
    "@assay_regex_extract(x, '[0-9]+', 0)",
    "@assay_char_length(x)",
    "@assay_charset_violates(x, 'U+0009,U+0400-U+04FF', 'forbid')",
    "@assay_quality_flags(('a', x > 1), ('b', y IS NULL))",
    "@assay_quality_flags()",
    "@assay_quality_ok(f)",
    "@assay_flags_contain(f, 'a_rule')",
    "@assay_flags_to_text(f)",
    "@assay_reject_id('src', s._source_row_id)",
    "@assay_reject_id('src', s._source_row_id, 'm')",
    "@assay_unknown_member(fk, p)",
    "@assay_json_object(('k', s.k), ('n', s.n))",
    "@assay_json_extract_text(b.payload, 'a', 'b')",
    "@assay_json_valid(b.payload)",
    "@assay_json_path_blocked(b.payload, 'a', 'b', 'c')",
    "@assay_json_path_blocked(b.payload, 'only')",
    "@assay_run_id()",
    "@assay_run_timestamp()",
]
QUERIES = [
    "@assay_ingestion_metadata_violations(bronze.raw)",
    "@assay_fail_rule_violations(silver.o, 'r', _quality_flags)",
    "@assay_key_uniqueness_violations(silver.o, (a, \"value\"), TRUE)",
    "@assay_freshness_violations(bronze.raw, 6)",
    "@assay_coverage_violations(silver.p, silver.c, (('c1', 'p1'), ('c2', 'p2')), 2)",
    "@assay_reconcile_violations(silver.o, 'amount', 'sum', ('a', 'b'), silver.o, 'amount', '', ('a', 'b'), '0.01')",
]
REFUSED = {
    ("@assay_is_nfc(x)", d) for d in ("redshift", "snowflake")
} | {("@assay_row_json(b)", d) for d in ("redshift", "snowflake", "trino")}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_macro_renders_valid_sql_for_every_engine(dialect):
    for call in SAMPLES + ["@assay_is_nfc(x)", "@assay_row_json(b)"]:
        if (call, dialect) in REFUSED:
            with pytest.raises(Exception, match="no Unicode normalization|no whole-row JSON"):
                render_sql(f"SELECT {call}", dialect)
            continue
        sql = render_sql(f"SELECT {call}", dialect)
        sqlglot.parse_one(sql, read=dialect)  # raises on SQL the engine's dialect cannot read
    for query in QUERIES:
        sqlglot.parse_one(render_sql(query, dialect), read=dialect)
    # the mart view's pre-statement (decision 1143): a table of the mart's columns, typed for the engine
    created = sqlglot.parse_one(render_sql("@assay_mart_table('assay_meta.assay_stopped_counts')", dialect), read=dialect)
    assert [c.name for c in created.this.expressions] == list(COLUMNS)


def test_type_names_follow_the_engine():
    assert render_sql("@assay_cast(x, 'int')", "snowflake") == "CAST(x AS DECIMAL(19, 0))"
    # NUMERIC holds 29 integer and 9 fraction digits; wider needs BIGNUMERIC (sqlglot drops the parameters)
    assert render_sql("@assay_cast(x, 'decimal(38,9)')", "bigquery") == "CAST(x AS NUMERIC)"
    assert render_sql("@assay_cast(x, 'decimal(38,10)')", "bigquery") == "CAST(x AS BIGNUMERIC)"
    assert render_sql("@assay_cast(x, 'string')", "redshift") == "CAST(x AS VARCHAR(65535))"
