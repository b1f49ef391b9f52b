"""Rate thresholds (issue 20 item 1, decision 0980): the refusals, the lowering into declared
checks, the measuring query's counts and the recorded verdict at its edges."""

from __future__ import annotations

import json

import pytest

from assay.checks.detail import rate_detail, rate_text
from assay.checks.rates import parse_rate
from assay.checks.recorded import verdict_of
from assay.lower.declared_checks import measuring_query
from assay.targets.dbt.spelling import DBT
from tests.support.items import compile_items, problems

# --------------------------------------------------------------------------- refusals


def test_every_threshold_problem_at_once_with_file_line_and_what_to_write(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds:\n      max_quarantine_rate: \"5%\"\n      max_flag_rate: 1.5\n"
                   "      min_rows: -3\n      on_breach: stop\n      max_rate: \"0.1\"",
        expr_limit=", max_rate: 0.1",
        range_limit=", max_rate: \"0.01\", on_breach: warn, min_rows: ten",
    )
    assert project is None
    got = problems(diagnostics)
    assert got == [
        ("entities.yml", 12, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states max_quarantine_rate '5%', which is not a rate between 0 and 1; write "
         "the largest share of evaluated rows allowed as a decimal, e.g. max_quarantine_rate: \"0.05\" for five per "
         "cent (at most 18 decimal places)"),
        ("entities.yml", 13, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states max_flag_rate 1.5, which is not a rate between 0 and 1; write the "
         "largest share of evaluated rows allowed as a decimal, e.g. max_flag_rate: \"0.05\" for five per cent (at "
         "most 18 decimal places)"),
        ("entities.yml", 14, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states min_rows -3; min_rows is a whole number of evaluated rows (0 or more) "
         "below which the rate is not judged, e.g. min_rows: 100"),
        ("entities.yml", 15, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states on_breach 'stop'; write fail (a breach sets the entity back) or warn "
         "(a breach is recorded and the entity is published)"),
        ("entities.yml", 16, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states max_rate, which is not a key of thresholds (a rule's own limit is "
         "max_rate, written on the rule); the accepted keys are max_quarantine_rate, max_flag_rate, min_rows, on_breach, "
             "max_increase, max_volume_change, anomaly"),
        ("entities.yml", 18, "THRESHOLD_INVALID",
         "expression rule name_not_x of entity item states no on_breach; write on_breach: fail (a breach sets the "
         "entity back: it is not published and the previous version stays) or on_breach: warn (recorded, "
         "published), as there is no default"),
        ("items.yml", 12, "THRESHOLD_INVALID",
         "the range rule on qty in mapping raw_items states min_rows 'ten'; min_rows is a whole number of evaluated "
         "rows (0 or more) below which the rate is not judged, e.g. min_rows: 100"),
    ]


def test_keys_without_a_rate_to_judge_are_refused(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds: {min_rows: 5, on_breach: warn}",
        expr_limit=", on_breach: warn",
        range_limit=", max_rate: \"0.5\", on_breach: fail",
    )
    assert project is None
    messages = [m for *_rest, m in problems(diagnostics)]
    assert "the thresholds mapping of entity item states none of max_quarantine_rate, max_flag_rate, max_increase, " \
           "max_volume_change, anomaly; state at least one, or remove thresholds:" in messages
    assert any(m.startswith("expression rule name_not_x of entity item states on_breach but no max_rate") for m in messages)
    # the range rule quarantines: its limit is fine
    assert not any("range rule" in m for m in messages), messages


def test_a_limit_on_a_rule_that_fails_the_run_is_refused(tmp_path):
    project, diagnostics, _ = compile_items(tmp_path, expr_limit=", max_rate: \"0.1\", on_breach: warn", expr_fail="fail")
    assert project is None
    assert [(d.line, d.message) for d in diagnostics] == [(
        13, "expression rule name_not_x of entity item fails the run on the first row it fires on (on_fail: fail), "
            "so a rate is never reached; remove max_rate, or make the rule quarantine or flag its rows and let "
            "max_rate decide the run")]


def test_a_derived_id_a_declared_check_claims_is_refused(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds: {max_quarantine_rate: \"0.1\", on_breach: fail}",
        range_limit=", max_rate: \"0.5\", on_breach: warn",
        checks="    checks:\n      - {check_id: quarantine_rate, kind: row_expectation, enforcement: advisory, min_rows: 1}\n"
               "      - {check_id: qty_range_min_rate, kind: row_expectation, enforcement: advisory, min_rows: 1}",
    )
    assert project is None
    assert problems(diagnostics) == [
        ("entities.yml", 11, "DECLARED_CHECK_DUPLICATE",
         "max_quarantine_rate of entity item is recorded as check QUARANTINE_RATE, and declared check "
         "QUARANTINE_RATE (line 15) already claims that id; give the declared check another check_id, e.g. "
         "quarantine_rate_check"),
        ("items.yml", 12, "DECLARED_CHECK_DUPLICATE",
         "rule qty_range_min's max_rate of entity item is recorded as check QTY_RANGE_MIN_RATE, and declared check "
         "QTY_RANGE_MIN_RATE (line 16) already claims that id; give the declared check another check_id, e.g. "
         "qty_range_min_rate_check"),
    ]


@pytest.mark.parametrize("value, text", [
    ("0.05", "0.05"), (0.05, "0.05"), (0, "0"), (1, "1"), ("1.000", "1.000"), (1e-05, "0.00001"),
    ("0.000000000000000001", "0.000000000000000001"),
])
def test_parse_rate_keeps_the_written_decimal(value, text):
    assert parse_rate(value) == text


@pytest.mark.parametrize("value", ["5%", "1.5", "-0.1", 2, True, None, "0.0000000000000000001", ".5", "1.01", [0.1]])
def test_parse_rate_refuses(value):
    assert parse_rate(value) is None


# --------------------------------------------------------------------------- lowering


def test_limits_lower_into_declared_checks_after_the_declared_ones(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds: {max_flag_rate: 0.2, max_quarantine_rate: \"0.05\", min_rows: 100, on_breach: fail}",
        expr_limit=", max_rate: \"0.01\", on_breach: warn, min_rows: 20",
        range_limit=", max_rate: 0, on_breach: fail",
        checks="    checks:\n      - {check_id: enough_rows, kind: row_expectation, enforcement: advisory, min_rows: 1}",
    )
    assert diagnostics == [], diagnostics
    checks = project.entity("item").declared_checks
    assert [(c.check_id, c.kind, c.enforcement, c.max_rate, c.min_rows, c.rule, c.blocking) for c in checks] == [
        ("ENOUGH_ROWS", "row_expectation", "advisory", None, 1, None, False),
        ("QUARANTINE_RATE", "quarantine_rate", "required", "0.05", 100, None, True),
        ("FLAG_RATE", "flag_rate", "required", "0.2", 100, None, True),
        ("NAME_NOT_X_RATE", "rule_rate", "advisory", "0.01", 20, "name_not_x", False),
        ("QTY_RANGE_MIN_RATE", "rule_rate", "required", "0", 0, "qty_range_min", True),
    ]

    sql, descriptors = measuring_query(project.entity("item"), DBT, "{{ candidate }}")
    # every rate reads the staged relation once, counted as the mart counts it
    assert sql.count('from {{ ref("item__staged") }}') == 1, sql
    assert "sum(case when not (_route = 'deduped') then 1 else 0 end)" in sql
    assert "sum(case when _route in ('quarantined', 'failed') then 1 else 0 end)" in sql
    assert '{{ assay.flags_contain("_failed_rules", "qty_range_min") }}' in sql
    assert [d["counts"] for d in descriptors[1:]] == [
        {"rows": "assay_rows", "evaluated": "assay_evaluated", "failing": "assay_quarantined"},
        {"rows": "assay_rows", "evaluated": "assay_evaluated", "failing": "assay_flagged"},
        {"rows": "assay_rows", "evaluated": "assay_evaluated", "failing": "m4_fires"},
        {"rows": "assay_rows", "evaluated": "assay_evaluated", "failing": "m5_fires"},
    ]
    assert descriptors[3]["bounds"] == {"max_rate": "0.01", "min_rows": 20, "rule": "name_not_x"}


def test_evaluated_rows_are_every_row_not_deduped_late_arrivals_included():
    """The rows a rate's denominator counts are the mart's rows_evaluated (decision 0949): a late
    arrival of an incremental ledger has no dedupe rank and is evaluated (and quarantined)."""
    import duckdb

    from assay.lower.staged import evaluated

    staged = ("(values ('kept', 1), ('failed', 1), ('quarantined', null), ('deduped', null), ('deduped', 2)) "
              "as s(_route, _dedupe_rank)")
    count = duckdb.sql(f"select count(*) from {staged} where {evaluated(DBT)}").fetchone()[0]
    assert count == 3


def test_an_entity_without_limits_measures_as_before(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path, checks="    checks:\n      - {check_id: enough_rows, kind: row_expectation, enforcement: advisory, min_rows: 1}")
    assert diagnostics == []
    sql, _ = measuring_query(project.entity("item"), DBT, "{{ candidate }}")
    assert "assay_s" not in sql and "__staged" not in sql


# --------------------------------------------------------------------------- the verdict


def _recorded(kind, max_rate, evaluated, failing, min_rows=0, rule=None):
    bounds = {"max_rate": max_rate, "min_rows": min_rows, **({"rule": rule} if rule else {})}
    spec = {"columns": [], "types": [], "bounds": bounds, "domain": None, "gap_scale": None, "orderable": None}
    return verdict_of(kind, json.loads(json.dumps(spec)), {"rows": evaluated - failing, "evaluated": evaluated,
                                                           "failing": failing})


def test_exactly_at_the_limit_passes_and_one_row_above_fails():
    assert _recorded("quarantine_rate", "0.05", 200, 10) == (
        True, "quarantined 10 of 200 evaluated rows, a rate of 0.05, at or below the declared maximum of 0.05")
    assert _recorded("quarantine_rate", "0.05", 200, 11) == (
        False, "quarantined 11 of 200 evaluated rows, a rate of 0.055, above the declared maximum of 0.05")


def test_below_min_rows_and_zero_rows_are_not_judged():
    assert _recorded("flag_rate", "0.1", 9, 9, min_rows=10) == (
        True, "flagged 9 of 9 evaluated rows, fewer than the declared min_rows of 10, so the rate is not judged "
              "against the declared maximum of 0.1")
    assert _recorded("flag_rate", "0.1", 10, 9, min_rows=10)[0] is False  # at min_rows: judged
    assert _recorded("rule_rate", "0.1", 0, 0, rule="qty_range_min") == (
        True, "no rows were evaluated, so the rate of rule 'qty_range_min' is not judged against the declared "
              "maximum of 0.1")


def test_a_first_run_is_judged_on_its_own_counts():
    # a rate needs no history: the first build is judged like any other
    assert _recorded("rule_rate", "0.25", 1, 1, rule="name_not_x") == (
        False, "rule 'name_not_x' fired on 1 of 1 evaluated row, a rate of 1, above the declared maximum of 0.25")


def test_the_printed_rate_rounds_up_and_agrees_with_the_verdict():
    # 1/3 against 0.3333: the rate is above, and the printed rate says so (0.3334, not 0.3333)
    assert rate_text(1, 3, "0.3333") == "0.3334"
    assert _recorded("flag_rate", "0.3333", 3, 1) == (
        False, "flagged 1 of 3 evaluated rows, a rate of 0.3334, above the declared maximum of 0.3333")
    # at the limit's own precision when it has more places than four
    assert rate_text(1, 3, "0.333334") == "0.333334"
    assert _recorded("flag_rate", "0.333334", 3, 1)[0] is True
    assert rate_detail("flag_rate", failing=0, evaluated=5, max_rate="0").detail == (
        "flagged 0 of 5 evaluated rows, a rate of 0, at or below the declared maximum of 0")


def test_an_entity_with_thresholds_only_gets_the_checks_machinery_on_both_targets(tmp_path):
    from assay.targets.dbt.declared_checks import declared_macro, results_model_sql
    from assay.targets.sqlmesh.checks import inline_audits, post_statements, staged_tail
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    project, diagnostics, _ = compile_items(tmp_path, thresholds="    thresholds: {max_quarantine_rate: \"0.1\", on_breach: fail}")
    assert diagnostics == []
    item = project.entity("item")
    assert [c.check_id for c in item.declared_checks] == ["QUARANTINE_RATE"]
    # dbt: the measuring macro and the results node exist, as for a declared check
    macro = declared_macro(item, project)
    assert "default__assay_declared__" in macro and '{{ ref("item__staged") }}' in macro
    assert results_model_sql(project, "-- header") is not None
    # SQLMesh: a blocking audit of its own, and the staged model's recorder counts its own table
    low = SqlmeshSpelling("duckdb", project)
    tail = "\n".join(post_statements(item, project, low) + inline_audits(item, project, low))
    assert "name assay_check__quarantine_rate" in tail and "blocking TRUE" in tail
    assert "FROM silver.item__staged" in tail
    assert "FROM @this_model\n" in staged_tail(item, project, low).replace("\r", "")
