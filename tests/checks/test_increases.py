"""Change since the last run (issue 20 item 2, decision 0981): the refusals, the lowering into
declared checks, which earlier run the measuring query compares with (run on DuckDB over
hand-made mart, results and events tables), and the recorded verdict's sentences at the edges.
The Jinja twin of the verdict is compared in tests/dbt_package/test_verdict_agreement.py."""

from __future__ import annotations

import jinja2
import duckdb
import pytest

from assay.checks.increases import increase_detail, parse_factor
from assay.checks.recorded import verdict_of
from assay.targets.dbt.declared_checks import declared_query
from tests.support.items import compile_items, problems

# --------------------------------------------------------------------------- refusals


def test_every_change_limit_problem_at_once_with_file_line_and_what_to_write(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds:\n      max_increase: {factor: \"0.5\", floor: -1}\n"
                   "      max_volume_change:\n        factor: x\n        floor: 10\n        on_breach: stop\n        by: 3",
        expr_limit=", max_increase: {factor: \"2\", floor: 1.5, on_breach: warn}",
        range_limit=", max_increase: [2, 50]",
    )
    assert project is None
    assert problems(diagnostics) == [
        ("entities.yml", 12, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states factor '0.5' in max_increase; write the largest allowed ratio "
         "to the previous run as a decimal of at least 1, e.g. factor: \"2\" (twice the previous run's value)"),
        ("entities.yml", 12, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states floor -1 in max_increase; write the change in rows below "
         "which nothing is an alarm as a whole number of rows (0 or more), e.g. floor: 50, so that 1 -> 3 rows is "
         "not a breach"),
        ("entities.yml", 12, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states no on_breach for max_increase; write on_breach: fail (a "
         "breach sets the entity back: it is not published and the previous version stays) or on_breach: warn "
         "(recorded, published) in the mapping, as there is no default"),
        ("entities.yml", 14, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states factor 'x' in max_volume_change; write the largest allowed "
         "ratio to the previous run as a decimal of at least 1, e.g. factor: \"2\" (twice the previous run's value)"),
        ("entities.yml", 16, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states on_breach 'stop' for max_volume_change; write fail (a breach "
         "sets the entity back) or warn (a breach is recorded and the entity is published)"),
        ("entities.yml", 17, "THRESHOLD_INVALID",
         "the thresholds mapping of entity item states max_volume_change.by, which is not a key of "
         "max_volume_change; the accepted keys are factor, floor, on_breach"),
        ("entities.yml", 19, "THRESHOLD_INVALID",
         "expression rule name_not_x of entity item states floor 1.5 in max_increase; write the change in rows "
         "below which nothing is an alarm as a whole number of rows (0 or more), e.g. floor: 50, so that 1 -> 3 "
         "rows is not a breach"),
        ("items.yml", 12, "THRESHOLD_INVALID",
         "the range rule on qty in mapping raw_items states max_increase a list; write it as a mapping with a factor "
         "and a floor, e.g. max_increase: {factor: \"2\", floor: 50, on_breach: fail}"),
    ]


def test_on_breach_is_taken_from_the_rule_or_thresholds_and_a_fail_rule_is_refused(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds: {max_quarantine_rate: \"0.5\", on_breach: warn, max_increase: {factor: 2, floor: 0}}",
        range_limit=", on_breach: fail, max_increase: {factor: \"1.25\", floor: 3}",
    )
    assert problems(diagnostics) == []
    checks = {c.check_id: c for c in project.entity("item").declared_checks}
    assert (checks["QUARANTINE_INCREASE"].enforcement, checks["QUARANTINE_INCREASE"].factor) == ("advisory", "2")
    assert (checks["QTY_RANGE_MIN_INCREASE"].enforcement, checks["QTY_RANGE_MIN_INCREASE"].floor) == ("required", 3)
    assert "QTY_RANGE_MIN_RATE" not in checks  # on_breach alone states no rate

    project, diagnostics, _ = compile_items(tmp_path, expr_fail="fail",
                                       expr_limit=", max_increase: {factor: 2, floor: 0, on_breach: warn}")
    assert project is None
    assert [(f, line, m.split(";")[0]) for f, line, _c, m in problems(diagnostics)] == [
        ("entities.yml", 13, "expression rule name_not_x of entity item fails the run on the first row it fires on "
                             "(on_fail: fail), so no increase is ever recorded")]


def test_a_derived_id_a_declared_check_claims_is_refused(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path, thresholds="    thresholds: {max_volume_change: {factor: 3, floor: 10, on_breach: warn}}",
        checks="    checks:\n      - {check_id: volume_change, kind: row_expectation, enforcement: advisory, min_rows: 1}")
    assert project is None
    [(file, line, code, message)] = problems(diagnostics)
    assert (file, line, code) == ("entities.yml", 11, "DECLARED_CHECK_DUPLICATE")
    assert message.startswith("max_volume_change of entity item is recorded as check VOLUME_CHANGE, and declared "
                              "check VOLUME_CHANGE")


@pytest.mark.parametrize("value, text", [("2", "2"), (2, "2"), (1.5, "1.5"), ("1", "1"), ("10.000001", "10.000001")])
def test_parse_factor_keeps_the_written_decimal(value, text):
    assert parse_factor(value) == text


@pytest.mark.parametrize("value", ["0.99", 0, "-2", "2x", "1e3", True, None, [2], float("inf")])
def test_parse_factor_refuses(value):
    assert parse_factor(value) is None


# --------------------------------------------------------------------------- lowering


def test_limits_lower_after_the_rates_with_derived_ids(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds:\n      max_quarantine_rate: \"0.5\"\n      on_breach: fail\n"
                   "      max_increase: {factor: \"2\", floor: 5}\n"
                   "      max_volume_change: {factor: \"3\", floor: 100, on_breach: warn}",
        expr_limit=", max_increase: {factor: \"2\", floor: 1, on_breach: warn}")
    assert problems(diagnostics) == []
    got = [(c.check_id, c.kind, c.enforcement, c.factor, c.floor, c.rule) for c in project.entity("item").declared_checks]
    assert got == [("QUARANTINE_RATE", "quarantine_rate", "required", None, None, None),
                   ("QUARANTINE_INCREASE", "quarantine_increase", "required", "2", 5, None),
                   ("NAME_NOT_X_INCREASE", "rule_increase", "advisory", "2", 1, "name_not_x"),
                   ("VOLUME_CHANGE", "volume_change", "advisory", "3", 100, None)]


# --------------------------------------------------------------------------- the previous run, on DuckDB

MART = [  # run, started, rule, disposition, evaluated, quarantined, deduped, failed
    ("r1", "2026-01-01 00:00:00", "(entity)", "(entity)", 10, 1, 0, 0), ("r1", "2026-01-01 00:00:00", "name_not_x", "flag", 0, 0, 0, 2),
    ("r2", "2026-01-02 00:00:00", "(entity)", "(entity)", 10, 2, 10, 0), ("r2", "2026-01-02 00:00:00", "name_not_x", "flag", 0, 0, 0, 3),
    # set back (a TABLE_ROLLED_BACK event of the run)
    ("r3", "2026-01-03 00:00:00", "(entity)", "(entity)", 10, 9, 20, 0), ("r3", "2026-01-03 00:00:00", "name_not_x", "flag", 0, 0, 0, 9),
    # a required check failed
    ("r4", "2026-01-04 00:00:00", "(entity)", "(entity)", 10, 8, 30, 0),
    # a fail rule fired
    ("r5", "2026-01-05 00:00:00", "(entity)", "(entity)", 10, 7, 40, 0), ("r5", "2026-01-05 00:00:00", "qty_never", "fail", 0, 0, 0, 1),
    # another entity
    ("r6", "2026-01-06 00:00:00", "(entity)", "(entity)", 99, 99, 99, 0),
    # the current run itself (the mart of a target that built it first)
    ("now", "2026-01-07 00:00:00", "(entity)", "(entity)", 10, 0, 0, 0),
]


def _measure(tmp_path, history: dict, mart=MART, events=(("r3", "item", "TABLE_ROLLED_BACK"),)) -> dict:
    """Run the dbt measuring query (its Jinja rendered with the package's DuckDB spellings) over
    hand-made tables; return {check id: verdict}."""
    project, diagnostics, _ = compile_items(
        tmp_path,
        thresholds="    thresholds:\n      max_increase: {factor: \"2\", floor: 1, on_breach: fail}\n"
                   "      max_volume_change: {factor: \"3\", floor: 1, on_breach: warn}",
        expr_limit=", max_increase: {factor: \"2\", floor: 1, on_breach: warn}")
    assert problems(diagnostics) == []
    sql, descriptors = declared_query(project.entity("item"))
    con = duckdb.connect()
    con.execute("create table cand as select 1 as x")
    con.execute("create table staged as select * from (values (1, 'kept', ['name_not_x']), (1, 'quarantined', []), "
                "(1, 'kept', []), (2, 'deduped', [])) as t(_dedupe_rank, _route, _failed_rules)")
    con.execute("create table mart (run_id varchar, run_started_at timestamp, rule varchar, disposition varchar, "
                "rows_evaluated bigint, rows_quarantined bigint, rows_deduped bigint, rows_failed bigint, entity varchar)")
    for row in mart:
        con.execute("insert into mart values (?, ?, ?, ?, ?, ?, ?, ?, ?)", [*row, "other" if row[0] == "r6" else "item"])
    con.execute("create table results as select 'r4' as run_id, 'item' as table_name, 'required' as enforcement, "
                "false as passed, '{\"rows\": 3}' as measures")
    con.execute("create table events (run_id varchar, table_name varchar, event_type varchar)")
    for e in events:
        con.execute("insert into events values (?, ?, ?)", list(e))

    class Assay:
        sql_type = staticmethod(lambda t: {"int": "bigint", "string": "varchar", "timestamp": "timestamp"}[t])
        flags_contain = staticmethod(lambda col, rule: f"list_contains({col}, '{rule}')")
        string_literal = staticmethod(lambda v: "'" + str(v).replace("'", "''") + "'")

    text = jinja2.Environment().from_string(sql).render(
        assay=Assay, ref=lambda name: "staged", invocation_id="now", candidate="cand", assay_history=history)
    cur = con.execute(text)
    row = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    out = {}
    for d in descriptors:
        measures = {k: row[c] for k, c in d["counts"].items()} | {k: row[c] for k, c in d["texts"].items()}
        out[d["check_id"]] = (measures, verdict_of(d["kind"], {"bounds": d["bounds"]}, measures))
    return out


def test_the_previous_successful_run_skips_set_back_blocked_failed_and_current_runs(tmp_path):
    got = _measure(tmp_path, {"mart": "mart", "results": "results", "events": "events"})
    measures, verdict = got["QUARANTINE_INCREASE"]
    # r5 (a fail rule fired), r4 (a required check failed), r3 (set back) and the current run are
    # passed over: the previous successful run is r2, the one before it r1
    assert measures == {"rows": 1, "evaluated": 3, "failing": 1, "previous_evaluated": 10, "previous_failing": 2,
                        "previous_run": "r2"}
    assert verdict.passed is True
    assert got["NAME_NOT_X_INCREASE"][0] | {} == {"rows": 1, "evaluated": 3, "failing": 1, "previous_failing": 3,
                                                  "previous_run": "r2"}
    volume, verdict = got["VOLUME_CHANGE"]
    assert volume == {"rows": 1, "bronze": 4, "previous_bronze": 20, "earlier_bronze": 10, "previous_run": "r2",
                      "earlier_run": "r1"}
    # bronze shrank (rows pruned): a load of -16 after 10 is a drop
    assert verdict.passed is False and "below both 10 / 3 = 3.3334" in verdict.detail
    assert verdict.detail.startswith("bronze lost 16 rows (a load of -16) since the previous successful run"), verdict.detail


def test_without_the_events_table_a_set_back_run_counts_and_without_the_mart_nothing_is_judged(tmp_path):
    got = _measure(tmp_path, {"mart": "mart", "results": "results", "events": None})
    assert got["QUARANTINE_INCREASE"][0]["previous_run"] == "r3"
    got = _measure(tmp_path, {"mart": None, "results": None, "events": None})
    measures, verdict = got["QUARANTINE_INCREASE"]
    assert measures["previous_run"] is None and verdict.passed is True
    assert "no earlier successful run of the entity is recorded" in verdict.detail


# --------------------------------------------------------------------------- sentences


def _rule(now, prev, run="r1", factor="2", floor=5):
    return increase_detail("rule_increase", {"rule": "amount_range", "factor": factor, "floor": floor},
                           {"failing": now, "previous_failing": prev, "previous_run": run})


def test_rule_sentences_name_both_runs_the_factor_and_the_floor():
    assert _rule(21, 10) == (False, "rule 'amount_range' fired on 21 rows, against 10 in the previous successful run "
                                    "r1: above both 10 x 2 = 20 (the declared factor) and 10 + 5 = 15 (the declared floor)")
    assert _rule(20, 10).passed is True and "not above both 10 x 2 = 20" in _rule(20, 10).detail
    assert _rule(6, 1).passed is True and _rule(7, 1).passed is False  # 1 -> 6 is the floor, not an alarm
    assert _rule(3, 1, floor=5).passed is True  # 1 -> 3 rows is not an alarm
    assert _rule(5, 0).passed is True and _rule(6, 0).passed is False  # zero previous: the floor decides
    assert _rule(15, 10, factor="1.5", floor=0) == (True, (
        "rule 'amount_range' fired on 15 rows, against 10 in the previous successful run r1: not above both "
        "10 x 1.5 = 15 (the declared factor) and 10 + 0 = 10 (the declared floor)"))
    assert _rule(99, None, run=None) == (True, (
        "rule 'amount_range' fired on 99 rows; no earlier successful run of the entity is recorded, so the increase "
        "is not judged against the declared factor 2 and floor of 5 rows"))
    assert "recorded no count for the rule" in _rule(99, None).detail


def test_quarantine_sentences_and_edges():
    def q(failing, evaluated, prev, prev_evaluated, run="r1", factor="2", floor=3):
        return increase_detail("quarantine_increase", {"factor": factor, "floor": floor},
                               {"failing": failing, "evaluated": evaluated, "previous_failing": prev,
                                "previous_evaluated": prev_evaluated, "previous_run": run})

    assert q(10, 100, 5, 100).passed is True  # exactly twice the rate
    assert q(11, 100, 5, 100) == (False, (
        "quarantined 11 of 100 evaluated rows, a rate of 0.11, against 0.05 (5 of 100) in the previous successful "
        "run r1: above both 0.1 (the previous rate x the declared factor 2) and, by 6 rows of this run's 100, the "
        "previous rate plus the declared floor of 3 rows"))
    assert q(4, 100, 1, 100).passed is True and q(5, 100, 1, 100).passed is False  # at the floor, one above
    assert q(3, 100, 0, 100).passed is True and q(4, 100, 0, 100).passed is False  # zero previous
    assert q(10, 80, 1, 8).passed is True  # the same rate over more rows
    assert "no rows were evaluated in the previous successful run r1" in q(5, 10, 0, 0).detail
    assert "no rows were evaluated in this run" in q(0, 0, 5, 10).detail
    assert q(5, 10, None, None, run=None).passed is True


def test_volume_sentences_both_directions():
    def v(bronze, before, earlier, factor="3", floor=4):
        return increase_detail("volume_change", {"factor": factor, "floor": floor},
                               {"bronze": bronze, "previous_bronze": before, "earlier_bronze": earlier,
                                "previous_run": "r2" if before is not None else None,
                                "earlier_run": "r1" if earlier is not None else None})

    assert v(41, 16, 8) == (False, (
        "loaded 25 rows since the previous successful run r2 (bronze rows 16 -> 41), against 8 rows loaded between "
        "run r1 and run r2: above both 8 x 3 = 24 (the declared factor) and 8 + 4 = 12 (the declared floor)"))
    assert v(40, 16, 8) == (True, (
        "loaded 24 rows since the previous successful run r2 (bronze rows 16 -> 40), against 8 rows loaded between "
        "run r1 and run r2: within the declared factor 3 and floor of 4 rows in both directions"))
    assert v(10, 10, 0) == (False, (
        "loaded 0 rows since the previous successful run r2 (bronze rows 10 -> 10), against 10 rows loaded between "
        "run r1 and run r2: below both 10 / 3 = 3.3334 (the declared factor) and 10 - 4 = 6 (the declared floor)"))
    assert v(16, 12, 0).passed is True and v(15, 12, 0).passed is False
    assert "only one earlier successful run is recorded" in v(100, 10, None).detail and v(100, 10, None).passed
    assert "no earlier successful run of the entity is recorded" in v(100, None, None).detail


def test_an_invalid_enclosing_on_breach_is_refused_once(tmp_path):
    project, diagnostics, _ = compile_items(
        tmp_path, thresholds="    thresholds: {on_breach: stop, max_increase: {factor: 2, floor: 0}}",
        expr_limit=", on_breach: halt, max_increase: {factor: 2, floor: 0}")
    assert project is None
    assert [(line, m.split(";")[0]) for _f, line, _c, m in problems(diagnostics)] == [
        (11, "the thresholds mapping of entity item states on_breach 'stop'"),
        (13, "expression rule name_not_x of entity item states on_breach 'halt' for max_increase"),
    ]
