"""`assay checks --json` is 000's wire shape for every kind of result (decision 0948).

000: `check_id` matches `^[A-Z][A-Z0-9_]{0,127}$` (the check's own id upper-cased), the fields are
`check_id`, `passed`, `detail` and `scope` ("which relation this check covered"). An outside tester
found a `fail` rule reported as `kwh_not_absurd`, a SQL check file as
`silver.customer/no_test_accounts`, and an extra `table` field on every result. The warehouse here
holds the meta tables as the dbt package writes them (no dbt run): a declared check, a SQL check
file that warned with kept rows, and the CHECK_FAILED event of a `fail` rule's stop.
"""

from __future__ import annotations

import json
import re

from tests.cli.test_check_rows_cmd import invoke, results_warehouse
from tests.cli.test_table_cmd import EVENTS

RUN = "5d1c2f0e-0000-4000-8000-00000000abcd"
WIRE_ID = re.compile(r"[A-Z][A-Z0-9_]{0,127}")


def recorded(tmp_path):
    project, con = results_warehouse(tmp_path)
    at = "2026-12-01 10:00:00"
    con.execute(
        "insert into assay_meta.assay_check_results values "
        "(?, 'customer', 'CUSTOMER_UNIQUE', 1, 'key_uniqueness', 'required', true, 3, ?, ?, ?),"
        "(?, 'customer', 'silver.customer/no_test_accounts', 1001, 'sql', 'warn', true, 1, ?, ?, ?)",
        [RUN, json.dumps({"columns": ["customer_id"], "types": ["string"], "bounds": {}}),
         json.dumps({"rows": 3, "repeats": 0}), at,
         RUN, json.dumps({"columns": [], "types": [], "bounds": {"on_failure": "warn"}}),
         json.dumps({"rows": 1, "failing_rows": 1}), at])
    con.execute("insert into assay_meta.assay_check_rows values "
                "(?, 'customer', 'silver.customer/no_test_accounts', 1, '{\"customer_id\": \"C-9\"}')", [RUN])
    con.execute(EVENTS)
    con.execute("insert into assay_meta.assay_events values ('e1', 'CHECK_FAILED', ?, 'reading', 'kwh_not_absurd', "
                "'1 row failed rule kwh_not_absurd (on_fail: fail)', 1, null, ?)", [RUN, at])
    con.close()
    return project


def test_every_result_has_the_wire_fields_an_upper_cased_id_and_its_scope(tmp_path):
    project = recorded(tmp_path)
    result = invoke("checks", RUN, "--json", "--project", str(project))
    assert result.exit_code == 2, result.output
    items = json.loads(result.stdout)
    assert items == [
        {"check_id": "CUSTOMER_UNIQUE", "passed": True,
         "detail": "key (customer_id) is distinct across all 3 rows, as expected", "scope": "customer"},
        {"check_id": "NO_TEST_ACCOUNTS", "passed": True, "detail": "returned 1 row (warned)", "scope": "customer"},
        {"check_id": "KWH_NOT_ABSURD", "passed": False,
         "detail": "1 row failed rule kwh_not_absurd (on_fail: fail)", "scope": "reading"},
    ]
    assert all(WIRE_ID.fullmatch(i["check_id"]) for i in items)
    # the text lines name each check as the build and `assay check list` do
    text = invoke("checks", RUN, "--project", str(project)).stdout.splitlines()
    # passed on the wire (a warning counts as passed), `warned` on its line (002's check line)
    assert "customer: silver.customer/no_test_accounts: warned: returned 1 row" in text, text
    assert text[-1] == "reading: kwh_not_absurd: FAILED: 1 row failed rule kwh_not_absurd (on_fail: fail)", text


def test_check_rows_finds_a_sql_check_by_either_name_in_any_case(tmp_path):
    project = recorded(tmp_path)
    want = [{"table": "customer", "check_id": "silver.customer/no_test_accounts", "row_number": 1,
             "row": {"customer_id": "C-9"}}]
    for typed in ("NO_TEST_ACCOUNTS", "no_test_accounts", "silver.customer/no_test_accounts",
                  "SILVER.CUSTOMER/NO_TEST_ACCOUNTS"):
        got = invoke("check", "rows", RUN[:8], typed, "--json", "--project", str(project))
        assert got.exit_code == 0, (typed, got.output)
        assert json.loads(got.stdout) == want, typed
    stop = invoke("check", "rows", RUN[:8], "KWH_NOT_ABSURD", "--project", str(project))
    assert stop.exit_code == 0 and "reading: kwh_not_absurd: no rows: it stopped or set back the table" in stop.stderr


def test_a_warn_rate_breach_reads_warned_with_its_rows_in_both_commands(tmp_path):
    """Decision 0949 (an outside tester): a `warn` rate breach printed `FAILED` in `assay checks`
    and `warned` in `assay check list`, whose `rows` was empty though the result counted 4. Both
    now say `warned`; the list shows the rows the rate counted; the verdict and exit stay 000's."""
    project, con = results_warehouse(tmp_path)
    spec = json.dumps({"columns": [], "types": [], "bounds": {"max_rate": "0.5", "min_rows": 0}})
    con.execute("insert into assay_meta.assay_check_results values "
                "(?, 'item', 'QUARANTINE_RATE', 1, 'quarantine_rate', 'advisory', false, 5, ?, ?, '2026-12-01 10:00:00'),"
                "(?, 'item', 'FLAG_RATE', 2, 'flag_rate', 'required', true, 5, ?, ?, '2026-12-01 10:00:00')",
                [RUN, spec, json.dumps({"rows": 5, "evaluated": 5, "failing": 4}),
                 RUN, spec, json.dumps({"rows": 5, "evaluated": 5, "failing": 2})])
    con.close()
    result = invoke("checks", RUN, "--project", str(project))
    assert result.exit_code == 2, result.output
    assert result.stdout.splitlines() == [
        "item: QUARANTINE_RATE: warned: quarantined 4 of 5 evaluated rows, a rate of 0.8, above the declared maximum of 0.5",
        "item: FLAG_RATE: passed: flagged 2 of 5 evaluated rows, a rate of 0.4, at or below the declared maximum of 0.5"]
    assert json.loads(invoke("checks", RUN, "--json", "--project", str(project)).stdout)[0]["passed"] is False
    listed = json.loads(invoke("check", "list", "--json", "--project", str(project)).stdout)
    assert sorted((i["check"], i["outcome"], i["rows"]) for i in listed) == [
        ("FLAG_RATE", "passed", 2), ("QUARANTINE_RATE", "warned", 4)]


def test_a_detail_over_several_lines_prints_on_one(tmp_path):
    """An engine's message (a SQL check that errored, a build's stop) may hold line breaks; the text
    output prints one line per check, so a reader can grep it (`table get` prints events the same way)."""
    import duckdb

    project = recorded(tmp_path)
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("update assay_meta.assay_events set why = ? where check_name = 'kwh_not_absurd'",
                ["Binder Error: column x not found\n\nLINE 1: select x"])
    con.close()
    text = invoke("checks", RUN, "--project", str(project)).stdout.splitlines()
    assert text[-1] == "reading: kwh_not_absurd: FAILED: Binder Error: column x not found LINE 1: select x", text


def test_a_spec_without_checks_is_told_why_nothing_is_recorded(tmp_path):
    """After a build of a spec that declares no check, `assay checks` said "run a build": it had run.
    It says what the spec lacks instead (probe Q8)."""
    import shutil
    from pathlib import Path

    from tests.cli.test_check_rows_cmd import results_warehouse

    project, con = results_warehouse(tmp_path)
    con.close()
    spec = tmp_path / "spec"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "shop" / "spec", spec)
    entities = spec / "entities.yml"
    text = entities.read_text()
    checks = "    checks:\n      - {check_id: enough_orders, kind: row_expectation, enforcement: advisory, min_rows: 1}\n"
    assert checks in text
    entities.write_text(text.replace(checks, ""))
    result = invoke("checks", "--project", str(project), "--spec", str(spec))
    assert result.exit_code == 1
    assert "the spec declares no table check" in result.stderr, result.stderr
    # only a `fail` rule: it records a result when it stops a build, which none has (an outside
    # tester, session 37, was told to build after several builds)
    rule = '{rule: expression, name: discount_not_above_amount, expr: "discount <= amount", on_fail: flag}'
    assert rule in entities.read_text()
    entities.write_text(entities.read_text().replace(rule, rule.replace("on_fail: flag", "on_fail: fail")))
    result = invoke("checks", "--project", str(project), "--spec", str(spec))
    assert result.exit_code == 1
    assert "the spec's only checks are `fail` rules, which record a result only when one stops a build" in result.stderr, result.stderr
    # with the example's advisory check, the advice is to build
    result = invoke("checks", "--project", str(project), "--spec", str(Path(__file__).resolve().parents[2] / "examples" / "shop"))
    assert result.exit_code == 1 and "the spec declares no table check" not in result.stderr, result.stderr


def test_a_keep_files_line_says_kept_once(tmp_path):
    # 002: "A keep check reads failed (kept) with the number of rows"; an outside tester read
    # `failed (kept): returned 1 row (kept)`. The wire's detail keeps its word: it has no label.
    project, con = results_warehouse(tmp_path)
    con.execute(
        "insert into assay_meta.assay_check_results values "
        "(?, 'van', 'silver.van/no_nowhere', 1001, 'sql', 'keep', false, 2, ?, ?, '2026-12-01 10:00:00')",
        [RUN, json.dumps({"columns": [], "types": [], "bounds": {"on_failure": "keep"}}),
         json.dumps({"rows": 2, "failing_rows": 2})])
    con.close()
    text = invoke("checks", RUN, "--project", str(project))
    assert text.exit_code == 2, text.output
    assert text.stdout.splitlines() == ["van: silver.van/no_nowhere: failed (kept): returned 2 rows"], text.stdout
    wire = json.loads(invoke("checks", RUN, "--json", "--project", str(project)).stdout)
    assert wire == [{"check_id": "NO_NOWHERE", "passed": False, "detail": "returned 2 rows (kept)", "scope": "van"}]
