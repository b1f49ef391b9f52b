"""SQL check files (document 002 and the implicit facts of reference/README.md)."""

from __future__ import annotations

import textwrap

import pytest
import sqlglot

from assay.checks.sqlfile import (
    SqlCheck,
    check_table_limits,
    count_sql,
    parse_check_file,
    refuse_keep,
)

PATH = "checks/silver/station_temperatures/plausible_range.sql"

SAMPLE = textwrap.dedent(
    """\
    /* assay
    on_failure: warn
    description: Temperatures a station can physically report.
    */
    SELECT *
    FROM silver.station_temperatures
    WHERE air_temp_c NOT BETWEEN -90 AND 60;
    """
)


def parse(text, path=PATH, default="block", source="default"):
    return parse_check_file(path, textwrap.dedent(text), default_on_failure=default,
                            default_source=source)


def problems_of(text, **kw):
    check, problems = parse(text, **kw)
    assert check is None
    return problems


def only(text, **kw):
    problems = problems_of(text, **kw)
    assert len(problems) == 1, problems
    assert problems[0].code == "SQL_CHECK_INVALID"
    assert problems[0].file == kw.get("path", PATH)
    return problems[0]


# --------------------------------------------------------------------------- accepted files


def test_the_sample_check_is_read():
    check, problems = parse(SAMPLE)
    assert problems == []
    assert check == SqlCheck(
        name="silver.station_temperatures/plausible_range",
        namespace="silver",
        table="station_temperatures",
        file_name="plausible_range.sql",
        path=PATH,
        sql="SELECT *\nFROM silver.station_temperatures\nWHERE air_temp_c NOT BETWEEN -90 AND 60",
        on_failure="warn",
        on_failure_source="header",
        description="Temperatures a station can physically report.",
        header_line_count=4,
        on_failure_line=2,
        sql_line=5,
    )
    assert check.check_name == "plausible_range"
    assert check.qualified_table == "silver.station_temperatures"
    assert not check.blocking


def test_path_relative_to_the_checks_directory_is_accepted():
    check, problems = parse(SAMPLE, path="silver/station_temperatures/plausible_range.sql")
    assert problems == [] and check.name == "silver.station_temperatures/plausible_range"


def test_checks_dir_may_be_configured():
    check, problems = parse_check_file("quality/silver/t/x.sql", "SELECT * FROM t",
                                       default_on_failure="block", default_source="default",
                                       checks_dir="quality")
    assert problems == [] and check.name == "silver.t/x"


def test_no_header_takes_the_project_default():
    check, problems = parse("SELECT * FROM station_temperatures WHERE station IS NULL",
                            default="warn", source="assay.yml")
    assert problems == []
    assert (check.on_failure, check.on_failure_source) == ("warn", "assay.yml")
    assert check.header_line_count == 0 and check.description is None


def test_no_header_and_no_project_setting_is_block():
    check, _ = parse("SELECT * FROM station_temperatures")
    assert (check.on_failure, check.on_failure_source, check.blocking) == ("block", "default", True)


def test_header_without_on_failure_takes_the_default():
    check, _ = parse("/* assay\ndescription: d\n*/\nSELECT * FROM station_temperatures",
                     default="warn", source="assay.yml")
    assert (check.on_failure, check.on_failure_source, check.description) == ("warn", "assay.yml", "d")


def test_header_on_failure_beats_the_project_default():
    check, _ = parse("/* assay\non_failure: keep\n*/\nSELECT * FROM station_temperatures",
                     default="warn", source="assay.yml")
    assert (check.on_failure, check.on_failure_source) == ("keep", "header")


def test_keep_cannot_be_a_default():
    with pytest.raises(ValueError, match="keep cannot be a default"):
        parse("SELECT * FROM station_temperatures", default="keep")


def test_one_line_comment_on_the_first_line_is_ordinary_sql():
    check, problems = parse("/* assay on_failure: warn */\nSELECT * FROM station_temperatures")
    assert problems == []
    assert check.on_failure == "block" and check.on_failure_source == "default"
    assert check.header_line_count == 0
    assert check.sql.startswith("/* assay on_failure: warn */")


def test_header_only_on_the_first_line():
    check, problems = parse("\n/* assay\non_failure: warn\n*/\nSELECT * FROM station_temperatures")
    assert problems == [] and check.on_failure == "block"  # an ordinary comment


def test_another_tools_header_is_an_ordinary_comment():
    check, problems = parse("/* lakana\non_failure: warn\n*/\nSELECT * FROM station_temperatures")
    assert problems == [] and check.on_failure == "block"


def test_header_may_have_no_keys():
    check, problems = parse("/* assay\n*/\nSELECT * FROM station_temperatures")
    assert problems == [] and check.header_line_count == 2 and check.sql_line == 3


def test_bare_table_name_counts_as_its_own_table():
    check, problems = parse("SELECT s.* FROM station_temperatures AS s WHERE s.x < 0")
    assert problems == []


def test_own_table_in_a_join_or_subquery_counts():
    sql = """
        WITH recent AS (SELECT * FROM silver.station_temperatures WHERE observed_at > now())
        SELECT r.* FROM recent r LEFT JOIN silver.stations s ON s.id = r.station
        WHERE s.id IS NULL
    """
    assert parse(sql)[1] == []


def test_own_table_is_matched_without_regard_to_case():
    assert parse("SELECT * FROM Silver.Station_Temperatures")[1] == []


def test_union_of_selects_is_one_select_statement():
    sql = "SELECT * FROM station_temperatures WHERE a < 0 UNION ALL SELECT * FROM station_temperatures WHERE b < 0"
    assert parse(sql)[1] == []


def test_postgres_only_syntax_falls_back_to_the_postgres_dialect():
    sql = "SELECT * FROM station_temperatures WHERE station ~* '^x' AND payload ->> 'a' IS NULL"
    check, problems = parse(sql)
    assert problems == []


def test_trailing_semicolon_and_comment_do_not_break_the_count_query():
    check, _ = parse("SELECT * FROM station_temperatures; -- the end\n")
    q = count_sql(check)
    assert q.startswith("SELECT COUNT(*) FROM (\n") and q.endswith("\n) AS assay_check")
    assert ";" not in q
    parsed = sqlglot.parse_one(q, read="duckdb")
    assert parsed.find(sqlglot.exp.Count) is not None


def test_count_sql_shape():
    check, _ = parse(SAMPLE)
    assert count_sql(check) == (
        "SELECT COUNT(*) FROM (\nSELECT *\nFROM silver.station_temperatures\n"
        "WHERE air_temp_c NOT BETWEEN -90 AND 60\n) AS assay_check"
    )
    assert count_sql("SELECT 1;") == "SELECT COUNT(*) FROM (\nSELECT 1\n) AS assay_check"
    assert count_sql("SELECT 1", "j") == "SELECT COUNT(j) FROM (\nSELECT 1\n) AS assay_check"


def test_windows_line_endings_and_bom():
    check, problems = parse_check_file(PATH, "\ufeff" + SAMPLE.replace("\n", "\r\n"),
                                       default_on_failure="block", default_source="default")
    assert problems == [] and check.on_failure == "warn"


# --------------------------------------------------------------------------- header refusals


def test_unknown_header_key_lists_the_accepted_keys():
    p = only("/* assay\nseverity: high\n*/\nSELECT * FROM station_temperatures")
    assert p.message == (
        "check silver.station_temperatures/plausible_range: the header block states severity, "
        "which a check's header does not accept; the accepted keys are on_failure and description"
    )
    assert p.line == 2


def test_unknown_on_failure_value_lists_the_right_ones():
    p = only("/* assay\ndescription: x\non_failure: fail\n*/\nSELECT * FROM station_temperatures")
    assert p.message.endswith("on_failure 'fail' is not accepted; write block, warn or keep")
    assert p.line == 3


def test_unclosed_header():
    p = only("/* assay\non_failure: warn\nSELECT * FROM station_temperatures")
    assert "the header block opened on line 1 is never closed" in p.message and p.line == 1


def test_header_that_is_not_yaml_keys():
    assert "holds a list, not keys" in only("/* assay\n- a\n*/\nSELECT * FROM station_temperatures").message
    p = only("/* assay\non_failure: [\n*/\nSELECT * FROM station_temperatures")
    assert "the header block is not YAML" in p.message


def test_header_key_stated_twice():
    p = only("/* assay\non_failure: warn\non_failure: block\n*/\nSELECT * FROM station_temperatures")
    assert "states on_failure twice" in p.message and p.line == 3


def test_description_must_be_text():
    p = only("/* assay\ndescription: [a, b]\n*/\nSELECT * FROM station_temperatures")
    assert "description is not text" in p.message


# --------------------------------------------------------------------------- SQL refusals


def test_two_statements_are_refused_with_the_line_of_the_second():
    p = only(SAMPLE + "\nDELETE FROM silver.station_temperatures;\n")
    assert "holds 2 statements; a check is exactly one SELECT" in p.message
    assert p.line == 9


@pytest.mark.parametrize("sql, what", [
    ("DELETE FROM silver.station_temperatures", "is a DELETE statement"),
    ("UPDATE silver.station_temperatures SET a = 1", "is an UPDATE statement"),
    ("INSERT INTO silver.station_temperatures VALUES (1)", "is an INSERT statement"),
    ("CREATE TABLE x AS SELECT * FROM station_temperatures", "is a CREATE statement"),
    ("DROP TABLE station_temperatures", "is a DROP statement"),
    ("VACUUM", "is a VACUUM statement"),
    ("VALUES (1)", "is a VALUES statement"),
    ("SELECT * INTO t FROM station_temperatures", "holds SELECT ... INTO, which creates a table"),
    ("WITH d AS (DELETE FROM station_temperatures RETURNING *) SELECT * FROM d",
     "holds a DELETE inside it"),
])
def test_only_a_select_is_a_check(sql, what):
    assert what in only(sql).message


def test_sql_that_does_not_parse_reports_the_file_line():
    p = only("/* assay\non_failure: warn\n*/\n\nSELECT *\nFROM\n")
    assert p.message.startswith(
        "check silver.station_temperatures/plausible_range: the SQL does not parse (line 6")
    assert p.line == 6


def test_unterminated_string():
    p = only("SELECT * FROM station_temperatures WHERE a = 'x")
    assert "does not parse" in p.message


def test_check_must_read_its_own_table():
    p = only("/* assay\non_failure: warn\n*/\nSELECT * FROM silver.stations WHERE id IS NULL")
    assert p.message == (
        "check silver.station_temperatures/plausible_range does not read its own table "
        "silver.station_temperatures (it reads silver.stations); a check of a table selects from "
        "it, as silver.station_temperatures or station_temperatures"
    )
    assert p.line == 4


def test_same_table_name_in_another_namespace_is_not_its_own():
    assert "does not read its own table" in only("SELECT * FROM gold.station_temperatures").message


def test_a_cte_named_like_the_table_is_not_the_table():
    p = only("WITH station_temperatures AS (SELECT 1) SELECT * FROM station_temperatures")
    assert "(it reads no table)" in p.message


def test_empty_and_comment_only_files():
    assert "holds no SQL" in only("").message
    assert "holds no SQL after its header" in only("/* assay\non_failure: warn\n*/\n").message
    assert "holds only comments" in only("-- nothing yet\n").message


def test_header_and_sql_problems_are_reported_together():
    problems = problems_of("/* assay\ncolour: red\n*/\nSELECT 1; SELECT 2")
    assert len(problems) == 2
    assert [p.line for p in problems] == [2, 4]


# --------------------------------------------------------------------------- paths and names


@pytest.mark.parametrize("path, text", [
    ("checks/silver/plausible_range.sql", "is not at checks/<namespace>/<table>/<name>.sql"),
    ("checks/a/b/c/d.sql", "is not at checks/<namespace>/<table>/<name>.sql"),
    ("checks/silver/t/x.txt", "does not end in .sql"),
    ("checks/silver/t/.sql", "has no name before .sql"),
    ("checks/silver/t/(none).sql", "is named (none), a name results reserve"),
    ("checks/silver/t/(unreadable).sql", "is named (unreadable), a name results reserve"),
])
def test_path_refusals(path, text):
    check, problems = parse_check_file(path, "SELECT * FROM t", default_on_failure="block",
                                       default_source="default")
    assert check is None and len(problems) == 1
    assert text in problems[0].message and problems[0].file == path


def test_names_may_hold_spaces_and_non_ascii_letters():
    check, problems = parse_check_file("checks/silver/t/größe ok.sql", "SELECT * FROM t",
                                       default_on_failure="block", default_source="default")
    assert problems == [] and check.name == "silver.t/größe ok"


# --------------------------------------------------------------------------- table-level rules


def _check(name: str, table: str = "t", on_failure: str = "block") -> SqlCheck:
    return SqlCheck(name=f"silver.{table}/{name}", namespace="silver", table=table,
                    file_name=f"{name}.sql", path=f"checks/silver/{table}/{name}.sql",
                    sql="SELECT * FROM t", on_failure=on_failure, on_failure_source="header",
                    description=None, header_line_count=3, on_failure_line=2)


def test_at_most_50_sql_checks_per_table():
    assert check_table_limits([_check(f"c{i:02d}") for i in range(50)]) == []
    problems = check_table_limits([_check(f"c{i:02d}") for i in range(51)]
                                  + [_check("other", table="u")])
    assert len(problems) == 1
    assert problems[0].code == "SQL_CHECKS_INVALID"
    assert "table silver.t has 51 SQL checks, more than the 50" in problems[0].message
    assert problems[0].file == "checks/silver/t/c50.sql"


def test_names_differing_only_in_case_are_refused():
    problems = check_table_limits([_check("Range"), _check("range")])
    assert len(problems) == 1 and "differ only in letter case" in problems[0].message


@pytest.mark.parametrize("materialization, text", [
    ("incremental", "is an incremental model: building it again only adds rows"),
    ("INCREMENTAL_BY_UNIQUE_KEY", "only adds rows"),
    ("snapshot", "only adds rows"),
    ("SCD_TYPE_2_BY_COLUMN", "only adds rows"),
    ("view", "is a view and holds no data to keep"),
    ("VIEW", "is a view and holds no data to keep"),
    ("ephemeral", "holds no data to keep"),
])
def test_keep_is_refused_on_incremental_models_and_views(materialization, text):
    p = refuse_keep(_check("x", on_failure="keep"), materialization)
    assert p is not None and text in p.message
    assert p.code == "SQL_CHECK_INVALID" and p.line == 2 and p.file == "checks/silver/t/x.sql"
    assert p.message.endswith("write on_failure: block or warn")


@pytest.mark.parametrize("materialization", ["table", "FULL", "source", "seed"])
def test_keep_is_allowed_on_tables_and_read_only_tables(materialization):
    assert refuse_keep(_check("x", on_failure="keep"), materialization) is None


def test_block_and_warn_are_allowed_everywhere():
    assert refuse_keep(_check("x", on_failure="block"), "view") is None
    assert refuse_keep(_check("x", on_failure="warn"), "incremental") is None


@pytest.mark.parametrize("sql, said", [
    ("SELECT * FROM station_temperatures WHERE air_temp_c >", "(line 1, column 53): `>` is missing an operand;"),
    ("SELECT * FROM station_temperatures ORDER BY", "`ORDER BY` is missing an operand;"),
])
def test_a_parse_error_is_said_without_sqlglot_class_names(sql, said):
    # an outside tester (session 41): "Required keyword: 'expression' missing for <class
    # 'sqlglot.expressions.core.GT'>"; expression rules already said it in the author's terms
    p = only(sql)
    assert said in p.message and "<class" not in p.message, p.message
