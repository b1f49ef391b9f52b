"""The verdict of a declared check is decided twice: in Jinja, by the package's
`_declared_measures` + `_declared_verdict` (what the `assay_entity` materialization publishes or
refuses on), and in Python, by `assay.checks.recorded.verdict_of` (what `assay checks` reports
from the recorded row). They must agree.

A table of measurements (one row per case, shaped like the row of a generated measuring query)
is seeded into DuckDB; a real `dbt run-operation` reads it and runs the Jinja macros on every
row exactly as `_run_declared_checks` does; the Python verdict is computed from the same
measures as `_record_check_results` records them. Every kind, passing and failing, with the
edges: zero rows, ppm rounding, bounds equal to the measured value. SQL check files (kind
`sql`) are compared the same way through `_sql_check_passed`.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from assay.checks.recorded import verdict_of
from assay.privacy import HIDDEN
from assay.targets.dbt.declared_checks import with_sentences
from tests.support import dbtserver

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dbt_package"

pytestmark = pytest.mark.slow

COLUMNS = ["case_id", "check_json", "n_rows", "n_nulls", "n_values", "n_outside", "n_repeats", "n_distinct",
           "n_evaluated", "n_failing", "n_prev_evaluated", "n_prev_failing", "n_bronze", "n_prev_bronze",
           "n_earlier_bronze", "prev_run", "earlier_run",
           "first_value", "min_value", "max_value", "side_value", "key_1", "key_2", "key_3", "only_value", "gap_num", "gap_text",
           "gap_from", "gap_to", "failing_rows", "outcome_json", "n_history", "n_learnt", "a_observed", "a_median",
           "a_low", "a_high", "a_season", "a_run_date"]
TYPES = {"case_id": "bigint", "check_json": "varchar", "gap_num": "decimal(38,6)", "failing_rows": "bigint",
         **{c: "bigint" for c in COLUMNS if c.startswith("n_")},
         **{c: "varchar" for c in ("first_value", "min_value", "max_value", "side_value", "key_1", "key_2", "key_3", "only_value",
                                   "gap_text", "gap_from", "gap_to", "outcome_json", "prev_run", "earlier_run",
                                   "a_observed", "a_median", "a_low", "a_high", "a_season", "a_run_date")}}


def _check(kind: str, columns: list[str], types: list[str], bounds: dict, **extra) -> dict:
    """A descriptor as generator/assay/targets/dbt/declared_checks.py writes it."""
    desc = {"check_id": kind.upper(), "kind": kind, "enforcement": "required", "blocking": True, "position": 1,
            "columns": columns, "types": types, "bounds": bounds, "counts": {"rows": "n_rows"}, "texts": {}}
    if kind == "null_ceiling":
        desc["counts"]["nulls"] = "n_nulls"
    elif kind == "value_range":
        desc["orderable"] = extra.pop("orderable", True)
        if desc["orderable"]:
            desc["counts"].update(values="n_values", outside="n_outside")
            desc["texts"].update(first="first_value", min="min_value", max="max_value")
        if extra.pop("private", False):  # a pii column: its values read as the marker, its side measured
            desc["texts"]["side"] = "side_value"
    elif kind == "key_uniqueness":
        desc["counts"]["repeats"] = "n_repeats"
        desc["texts"]["key"] = [f"key_{i}" for i in range(1, len(columns) + 1)]
    elif kind == "continuity":
        domain = extra.pop("domain")
        desc["domain"] = domain
        desc["gap_scale"] = {"timestamp": 1_000_000}.get(domain or "", 1)
        if domain is not None:
            desc["counts"]["distinct"] = "n_distinct"
            desc["gap"] = "gap_num"
            desc["texts"].update(only="only_value", gap="gap_text", **{"from": "gap_from", "to": "gap_to"})
    elif kind in ("quarantine_rate", "flag_rate", "rule_rate"):
        desc["counts"].update(evaluated="n_evaluated", failing="n_failing")
    elif kind == "quarantine_increase":
        desc["counts"].update(evaluated="n_evaluated", failing="n_failing", previous_evaluated="n_prev_evaluated",
                              previous_failing="n_prev_failing")
        desc["texts"].update(previous_run="prev_run")
    elif kind == "rule_increase":
        desc["counts"].update(evaluated="n_evaluated", failing="n_failing", previous_failing="n_prev_failing")
        desc["texts"].update(previous_run="prev_run")
    elif kind == "volume_change":
        desc["counts"].update(bronze="n_bronze", previous_bronze="n_prev_bronze", earlier_bronze="n_earlier_bronze")
        desc["texts"].update(previous_run="prev_run", earlier_run="earlier_run")
    elif kind == "anomaly":
        desc["counts"].update(evaluated="n_evaluated", history="n_history", learnt_from="n_learnt")
        if bounds["metric"] != "volume":
            desc["counts"]["failing"] = "n_failing"
        desc["texts"].update(observed="a_observed", median="a_median", low="a_low", high="a_high", season="a_season",
                             run_date="a_run_date")
    elif kind == "sql":
        desc["enforcement"] = bounds["on_failure"]
    desc.update(extra)
    return with_sentences(desc)


ROWS = {"kind": "row_expectation"}
TS = ["ts"], ["timestamp"]


def _continuity(domain, ceiling, distinct, gap=None, lo=None, hi=None, col_type="timestamp"):
    check = _check("continuity", ["c"], [col_type], {"max_gap_seconds": ceiling}, domain=domain)
    row = {"n_rows": max(distinct, 0) + 1, "n_distinct": distinct, "only_value": lo}
    if gap is not None:
        row.update(gap_num=gap, gap_text=str(gap), gap_from=lo, gap_to=hi)
    return check, row


# (name, descriptor, measured row, expected pass)
CASES = [
    # row_expectation
    ("rows_equal_both_bounds", _check("row_expectation", [], [], {"min_rows": 5, "max_rows": 5}), {"n_rows": 5}, True),
    ("rows_below_min", _check("row_expectation", [], [], {"min_rows": 5}), {"n_rows": 4}, False),
    ("rows_above_max", _check("row_expectation", [], [], {"max_rows": 5}), {"n_rows": 6}, False),
    ("rows_equal_max_only", _check("row_expectation", [], [], {"max_rows": 10}), {"n_rows": 10}, True),
    ("zero_rows_min_zero", _check("row_expectation", [], [], {"min_rows": 0}), {"n_rows": 0}, True),
    ("zero_rows_min_one", _check("row_expectation", [], [], {"min_rows": 1, "max_rows": 9}), {"n_rows": 0}, False),
    # null_ceiling: exact ppm, never rounded in the verdict
    ("nulls_zero_rows", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 0}), {"n_rows": 0, "n_nulls": 0}, True),
    ("nulls_one_third_just_below", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 333333}), {"n_rows": 3, "n_nulls": 1}, False),
    ("nulls_one_third_rounded_up", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 333334}), {"n_rows": 3, "n_nulls": 1}, True),
    ("nulls_equal_ceiling", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 250000}), {"n_rows": 4, "n_nulls": 1}, True),
    ("nulls_one_in_a_million_ceiling_zero", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 0}), {"n_rows": 1000000, "n_nulls": 1}, False),
    ("nulls_half_ppm", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 1}), {"n_rows": 2000000, "n_nulls": 1}, True),
    ("nulls_none_ceiling_zero", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 0}), {"n_rows": 10, "n_nulls": 0}, True),
    ("nulls_all", _check("null_ceiling", ["n"], ["int"], {"max_null_ppm": 1000000}), {"n_rows": 7, "n_nulls": 7}, True),
    # value_range
    ("range_inside", _check("value_range", ["amount"], ["decimal(10,2)"], {"min_value": "0", "max_value": "10"}),
     {"n_rows": 3, "n_values": 3, "n_outside": 0, "min_value": "0.00", "max_value": "10.00"}, True),
    ("range_above", _check("value_range", ["amount"], ["decimal(10,2)"], {"min_value": "0", "max_value": "10"}),
     {"n_rows": 3, "n_values": 3, "n_outside": 1, "first_value": "10.01", "min_value": "0.00", "max_value": "10.01"}, False),
    ("range_below", _check("value_range", ["amount"], ["int"], {"min_value": "-5", "max_value": "5"}),
     {"n_rows": 2, "n_values": 2, "n_outside": 2, "first_value": "-6", "min_value": "-7", "max_value": "0"}, False),
    # the value shown as `assay checks` shows it (decision 0945): exact, no trailing zeros, the
    # side told exactly (a float would call these two equal), the pii marker as it is
    ("range_trailing_zeros", _check("value_range", ["humidity"], ["decimal(10,2)"], {"min_value": "0", "max_value": "100"}),
     {"n_rows": 2, "n_values": 2, "n_outside": 1, "first_value": "104.50", "min_value": "1.00", "max_value": "104.50"}, False),
    ("range_negative_below", _check("value_range", ["amount"], ["decimal(10,2)"], {"min_value": "0", "max_value": "9.5"}),
     {"n_rows": 1, "n_values": 1, "n_outside": 1, "first_value": "-0.50", "min_value": "-0.50", "max_value": "-0.50"}, False),
    ("range_exponent_text", _check("value_range", ["ratio"], ["decimal"], {"min_value": "0.001", "max_value": "1"}),
     {"n_rows": 1, "n_values": 1, "n_outside": 1, "first_value": "1e-05", "min_value": "1e-05", "max_value": "1e-05"}, False),
    ("range_below_by_one_part_in_1e20", _check("value_range", ["x"], ["decimal(38,20)"],
                                               {"min_value": "0.10000000000000000002", "max_value": "1"}),
     {"n_rows": 1, "n_values": 1, "n_outside": 1, "first_value": "0.10000000000000000001"}, False),
    ("range_pii_below", _check("value_range", ["salary"], ["int"], {"min_value": "0", "max_value": "10"}, private=True),
     {"n_rows": 2, "n_values": 2, "n_outside": 1, "first_value": HIDDEN, "side_value": "below"}, False),
    ("range_zero_rows", _check("value_range", ["amount"], ["int"], {"min_value": "0", "max_value": "1"}),
     {"n_rows": 0, "n_values": 0, "n_outside": 0}, True),
    ("range_not_orderable", _check("value_range", ["label"], ["string"], {"min_value": "0", "max_value": "1"}, orderable=False),
     {"n_rows": 3}, False),
    # key_uniqueness
    ("key_distinct", _check("key_uniqueness", ["id", "code"], ["int", "string"], {}), {"n_rows": 4, "n_repeats": 0}, True),
    ("key_repeats", _check("key_uniqueness", ["id", "code"], ["int", "string"], {}),
     {"n_rows": 4, "n_repeats": 2, "key_1": "1", "key_2": "a"}, False),
    ("key_repeats_null_part", _check("key_uniqueness", ["id", "code"], ["int", "string"], {}),
     {"n_rows": 4, "n_repeats": 2, "key_1": "1", "key_2": ""}, False),
    ("key_repeats_timestamp_and_quote", _check("key_uniqueness", ["at", "airport"], ["timestamp", "string"], {}),
     {"n_rows": 5, "n_repeats": 3, "key_1": "2026-03-01 00:51:00", "key_2": "O'Hare"}, False),
    ("key_repeats_offset_and_fraction", _check("key_uniqueness", ["at", "seen"], ["timestamp", "timestamp"], {}),
     {"n_rows": 2, "n_repeats": 2, "key_1": "2026-03-01 01:51:00+01", "key_2": "2026-03-01 00:00:00.250"}, False),
    ("key_repeats_decimal_bool_date", _check("key_uniqueness", ["price", "open", "day"], ["decimal(10,2)", "bool", "date"], {}),
     {"n_rows": 9, "n_repeats": 2, "key_1": "1.50", "key_2": "t", "key_3": "2026-03-01"}, False),
    ("key_repeats_pii", _check("key_uniqueness", ["email"], ["string"], {}), {"n_rows": 2, "n_repeats": 2, "key_1": HIDDEN},
     False),
    ("key_zero_rows", _check("key_uniqueness", ["id"], ["int"], {}), {"n_rows": 0, "n_repeats": 0}, True),
    # continuity
    ("gap_ts_equal_ceiling", *_continuity("timestamp", 3600, 2, 3600000000, "2025-01-01 00:00:00", "2025-01-01 01:00:00"), True),
    ("gap_ts_one_microsecond_over", *_continuity("timestamp", 3600, 3, 3600000001, "2025-01-01 00:00:00", "2025-01-01 01:00:00.000001"), False),
    ("gap_ts_subsecond_ceiling_zero", *_continuity("timestamp", 0, 2, 1, "2025-01-01 00:00:00", "2025-01-01 00:00:00.000001"), False),
    ("gap_date_equal_ceiling", *_continuity("date", 86400, 2, 86400, "2025-01-01", "2025-01-02", "date"), True),
    ("gap_date_over", *_continuity("date", 86400, 2, 172800, "2025-01-01", "2025-01-03", "date"), False),
    ("gap_numeric_equal", *_continuity("numeric", 5, 2, "5.00", "1.00", "6.00", "decimal(10,2)"), True),
    ("gap_numeric_over", *_continuity("numeric", 5, 2, "5.01", "1.00", "6.01", "decimal(10,2)"), False),
    ("gap_one_distinct_value", *_continuity("timestamp", 60, 1, None, "2025-01-01 00:00:00"), True),
    ("gap_zero_rows", *_continuity("timestamp", 60, 0), True),
    ("gap_not_measurable", _check("continuity", ["label"], ["string"], {"max_gap_seconds": 60}, domain=None), {"n_rows": 3}, False),
    # rate thresholds (decision 0980): exactly at the limit passes, one row above fails, fewer
    # evaluated rows than min_rows or none at all are not judged (passed)
    *[(name, _check(kind, [], [], {"max_rate": rate, "min_rows": min_rows, **({"rule": "amount_range"} if kind == "rule_rate" else {})}),
       {"n_rows": max(evaluated - failing, 0), "n_evaluated": evaluated, "n_failing": failing}, expected)
      for name, kind, rate, min_rows, evaluated, failing, expected in [
          ("rate_at_the_limit", "quarantine_rate", "0.05", 0, 100, 5, True),
          ("rate_one_row_above", "quarantine_rate", "0.05", 0, 100, 6, False),
          ("rate_below_min_rows", "quarantine_rate", "0.05", 101, 100, 99, True),
          ("rate_at_min_rows_judged", "flag_rate", "0.05", 100, 100, 6, False),
          ("rate_zero_rows", "flag_rate", "0", 0, 0, 0, True),
          ("rate_zero_limit_clean", "flag_rate", "0", 0, 7, 0, True),
          ("rate_zero_limit_one_row", "flag_rate", "0", 0, 7, 1, False),
          ("rate_limit_one_all_rows", "rule_rate", "1", 0, 7, 7, True),
          ("rate_third_just_below", "rule_rate", "0.333333333333333333", 0, 3, 1, False),
          ("rate_third_just_above", "rule_rate", "0.333333333333333334", 0, 3, 1, True),
          ("rate_integer_limit_text", "rule_rate", "0", 0, 1, 1, False),
      ]],
    # change limits (decision 0981): exactly at the factor or the floor passes, one row above both
    # fails; no earlier successful run (or no count of the rule in it) is not judged (passed)
    *[(name, _check("rule_increase", [], [], {"rule": "amount_range", "factor": factor, "floor": floor}),
       {"n_rows": 1, "n_evaluated": 100, "n_failing": now, "n_prev_failing": prev, "prev_run": run}, expected)
      for name, factor, floor, prev, now, run, expected in [
          ("rule_increase_at_factor", "2", 5, 10, 20, "r1", True),
          ("rule_increase_above_factor", "2", 5, 10, 21, "r1", False),
          ("rule_increase_at_floor", "2", 5, 1, 6, "r1", True),
          ("rule_increase_above_floor", "2", 5, 1, 7, "r1", False),
          ("rule_increase_zero_previous_at_floor", "2", 5, 0, 5, "r1", True),
          ("rule_increase_zero_previous_above", "2", 5, 0, 6, "r1", False),
          ("rule_increase_decimal_factor_at", "1.5", 0, 10, 15, "r1", True),
          ("rule_increase_decimal_factor_above", "1.5", 0, 10, 16, "r1", False),
          ("rule_increase_first_run", "2", 5, "", 1000, "", True),
          ("rule_increase_rule_new", "2", 5, "", 1000, "r1", True),
      ]],
    *[(name, _check("quarantine_increase", [], [], {"factor": factor, "floor": floor}),
       {"n_rows": 1, "n_evaluated": ev, "n_failing": q, "n_prev_evaluated": pev, "n_prev_failing": pq, "prev_run": run},
       expected)
      for name, factor, floor, pq, pev, q, ev, run, expected in [
          ("quarantine_increase_at_factor", "2", 3, 5, 100, 10, 100, "r1", True),
          ("quarantine_increase_above_both", "2", 3, 5, 100, 11, 100, "r1", False),
          ("quarantine_increase_at_floor", "2", 3, 1, 100, 4, 100, "r1", True),
          ("quarantine_increase_above_floor", "2", 3, 1, 100, 5, 100, "r1", False),
          ("quarantine_increase_zero_previous_at_floor", "2", 3, 0, 100, 3, 100, "r1", True),
          ("quarantine_increase_zero_previous_above", "2", 3, 0, 100, 4, 100, "r1", False),
          ("quarantine_increase_other_volume", "2", 2, 1, 8, 20, 30, "r1", False),
          ("quarantine_increase_same_rate_more_rows", "2", 2, 1, 8, 10, 80, "r1", True),
          ("quarantine_increase_previous_no_rows", "2", 0, 0, 0, 5, 10, "r1", True),
          ("quarantine_increase_no_rows", "2", 0, 5, 10, 0, 0, "r1", True),
          ("quarantine_increase_first_run", "2", 0, "", "", 9, 10, "", True),
      ]],
    *[(name, _check("volume_change", [], [], {"factor": factor, "floor": floor}),
       {"n_rows": 1, "n_bronze": now, "n_prev_bronze": prev, "n_earlier_bronze": earlier, "prev_run": run,
        "earlier_run": erun}, expected)
      for name, factor, floor, earlier, prev, now, run, erun, expected in [
          ("volume_up_at_factor", "3", 4, 8, 16, 40, "r2", "r1", True),
          ("volume_up_above", "3", 4, 8, 16, 41, "r2", "r1", False),
          ("volume_up_at_floor", "3", 4, 0, 1, 6, "r2", "r1", True),
          ("volume_up_above_floor", "3", 4, 0, 1, 7, "r2", "r1", False),
          ("volume_down_at_factor", "3", 4, 0, 12, 16, "r2", "r1", True),
          ("volume_down_below", "3", 4, 0, 12, 15, "r2", "r1", False),
          ("volume_nothing_loaded", "3", 4, 0, 10, 10, "r2", "r1", False),
          ("volume_zero_previous_at_floor", "3", 4, 10, 10, 14, "r2", "r1", True),
          ("volume_zero_previous_above", "3", 4, 10, 10, 15, "r2", "r1", False),
          ("volume_one_earlier_run", "3", 4, "", 10, 1000, "r1", "", True),
          ("volume_first_run", "3", 4, "", "", 1000, "", "", True),
      ]],
    # anomaly checks judged at build time (decision 1030): the engine's doubles recorded as text;
    # at an edge passes, one ulp beyond fails; fewer earlier runs than min_history, or no observed
    # value, is not judged (passed)
    *[(name, _check("anomaly", [], [], {"metric": metric, "min_history": need, **({"rule": "name_ok"} if metric == "failure_rate" else {})}),
       {"n_rows": 8, "n_evaluated": 8, "n_failing": 1, "n_history": history, "n_learnt": history, "a_observed": obs,
        "a_median": "8.0", "a_low": low, "a_high": high, "a_season": "all", "a_run_date": "2026-02-18"}, expected)
      for name, metric, need, history, obs, low, high, expected in [
          ("anomaly_volume_at_high", "volume", 3, 3, "18.0", "-2.0", "18.0", True),
          ("anomaly_volume_above", "volume", 3, 3, "19.0", "-2.0", "18.0", False),
          ("anomaly_volume_at_low", "volume", 3, 5, "2.0", "2.0", "18.0", True),
          ("anomaly_volume_below", "volume", 3, 5, "1.0", "2.0", "18.0", False),
          ("anomaly_volume_not_enough_history", "volume", 3, 2, "1000.0", "2.0", "18.0", True),
          ("anomaly_volume_first_run", "volume", 3, 0, "", "", "", True),
          ("anomaly_rate_one_ulp_above", "quarantine_rate", 7, 7, "0.7500000000000001", "0.0", "0.75", False),
          ("anomaly_rate_at_high", "quarantine_rate", 7, 7, "0.75", "0.0", "0.75", True),
          ("anomaly_rate_float_sum_edge", "failure_rate", 7, 9, "0.3", "0.1", "0.30000000000000004", True),
          ("anomaly_rate_exponent_above", "failure_rate", 7, 9, "1e-05", "0.0", "9e-06", False),
          ("anomaly_rate_no_band", "failure_rate", 3, 3, "0.5", "", "", True),
      ]],
    # the sentence as `assay checks` says it (assay.checks.anomaly.anomaly_detail): the band
    # printed shrunk to what it allows at the printed precision, a weekday band names the day, a
    # shrinking bronze is a loss, one row and one run are singular, the rule's name quoted
    *[(name, _check("anomaly", [], [], {"metric": metric, "min_history": 3, **({"rule": "it's_ok"} if metric == "failure_rate" else {})}),
       {"n_rows": 8, "n_evaluated": ev, "n_failing": 1, "n_history": 9, "n_learnt": learnt, "a_observed": obs,
        "a_median": median, "a_low": low, "a_high": high, "a_season": season, "a_run_date": day}, expected)
      for name, metric, ev, learnt, obs, median, low, high, season, day, expected in [
          ("anomaly_volume_weekday_above", "volume", 8, 4, "1.0", "12.5", "-3.7", "0.9999999", "weekday", "2026-02-18", False),
          ("anomaly_volume_weekday_one_run", "volume", 8, 1, "5.0", "13.5", "2.5", "18.4", "weekday", "2026-02-22 00:00:00", True),
          ("anomaly_volume_lost_rows", "volume", 8, 5, "-1.0", "40.0", "12.25", "66.75", "all", "2026-02-18", False),
          ("anomaly_volume_lost_many", "volume", 8, 5, "-120.0", "40.0", "-119.5", "66.75", "all", "", False),
          ("anomaly_volume_no_median", "volume", 8, 5, "7.0", "", "2.0", "18.0", "weekday", "not a date", True),
          ("anomaly_rate_one_row_half_even", "quarantine_rate", 1, 6, "0.123450000001", "0.12345", "0.1", "0.2", "all", "2026-02-18", True),
          ("anomaly_rate_below_deep", "failure_rate", 3, 6, "0.00000012", "0.000000125", "0.0000001201", "0.3", "weekday", "2028-02-29", False),
          ("anomaly_rate_exponent_band", "failure_rate", 3, 6, "2.5e-07", "1e-07", "1e-07", "3.0000000000000004e-07", "all", "2026-02-18", True),
      ]],
    # SQL check files (002)
    ("sql_block_clean", _check("sql", [], [], {"on_failure": "block"}), {"n_rows": 0, "failing_rows": 0}, True),
    ("sql_block_rows", _check("sql", [], [], {"on_failure": "block"}), {"n_rows": 1, "failing_rows": 1}, False),
    ("sql_warn_rows", _check("sql", [], [], {"on_failure": "warn"}), {"n_rows": 3, "failing_rows": 3}, True),
    ("sql_keep_rows", _check("sql", [], [], {"on_failure": "keep"}), {"n_rows": 2, "failing_rows": 2}, False),
    # not measured (decisions 0530, 0531): over the byte or time budget, or an unreadable candidate;
    # `outcome_json` is what _run_declared_checks hands _declared_unmeasured
    *[(f"{name}_{kind}", _check(kind, cols, types, bounds, **extra), {"n_rows": 7, "outcome_json": json.dumps(outcome)}, False)
      for name, outcome in [
          ("over_scan_budget", {"status": "not_evaluated", "code": "CHECK_SCAN_BUDGET_EXCEEDED",
                                "estimated_bytes": 91234567890, "ceiling_bytes": 68719476736}),
          ("over_time_budget", {"status": "not_evaluated", "code": "CHECK_TIME_BUDGET_EXCEEDED", "ceiling_seconds": 900}),
          ("unreadable", {"status": "error", "message": 'column "x" does not exist'}),
      ]
      for kind, cols, types, bounds, extra in [
          ("null_ceiling", ["n"], ["int"], {"max_null_ppm": 0}, {}),
          ("value_range", ["amount"], ["int"], {"min_value": "0", "max_value": "1"}, {}),
          ("key_uniqueness", ["id"], ["int"], {}, {}),
          ("continuity", ["c"], ["timestamp"], {"max_gap_seconds": 60}, {"domain": "timestamp"}),
          ("quarantine_rate", [], [], {"max_rate": "0.1", "min_rows": 0}, {}),
      ]],
]
UNMEASURED = {
    "over_scan_budget": "not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: estimated scan of 91234567890 bytes exceeds the "
                        "68719476736-byte ceiling",
    "over_time_budget": "not_evaluated: CHECK_TIME_BUDGET_EXCEEDED: the pass over the stored rows ran past the "
                        "900-second ceiling",
    "unreadable": 'DECLARED_CHECK_UNREADABLE: column "x" does not exist',
}

MACRO = """
{% macro assay_test_verdicts() %}
  {%- set out = [] -%}
  {%- set table = run_query('select * from ' ~ ref('verdict_measurements') ~ ' order by case_id') -%}
  {%- for row in table.rows -%}
    {%- set check = fromjson(row['check_json']) -%}
    {%- if row['outcome_json'] -%}
      {%- set verdict = assay._declared_unmeasured(check, fromjson(row['outcome_json']), row['n_rows'] | int) -%}
      {%- set m = verdict['measures'] -%}
      {%- set passed = verdict['passed'] -%}
      {%- set detail = verdict['detail'] -%}
    {%- elif check['kind'] == 'sql' -%}
      {%- set n = row['failing_rows'] | int -%}
      {%- set m = {'rows': n, 'failing_rows': n} -%}
      {%- set passed = assay._sql_check_passed(n, check['bounds']['on_failure']) -%}
      {%- set detail = '' -%}
    {%- else -%}
      {%- set measured = assay._declared_measures(check, row) -%}
      {%- set m = measured['measures'] -%}
      {%- set verdict = assay._declared_verdict(check, m, measured['gap']) -%}
      {%- set passed = verdict['passed'] -%}
      {%- set detail = verdict['detail'] -%}
    {%- endif -%}
    {%- do out.append({'case_id': row['case_id'] | int, 'passed': passed, 'detail': detail, 'measures': m}) -%}
  {%- endfor -%}
  {%- do print('ASSAY_VERDICTS ' ~ tojson(out)) -%}
{% endmacro %}
"""


@pytest.fixture(scope="module")
def jinja_verdicts(tmp_path_factory) -> dict[int, dict]:
    project = tmp_path_factory.mktemp("verdicts")
    (project / "dbt_project.yml").write_text(
        "name: assay_verdicts\nversion: '0.1.0'\nconfig-version: 2\nprofile: assay_verdicts\n"
        "seeds:\n  assay_verdicts:\n    verdict_measurements:\n      +column_types:\n"
        + "".join(f"        {c}: {t!r}\n" for c, t in TYPES.items()))
    (project / "profiles.yml").write_text(
        "assay_verdicts:\n  target: duckdb\n  outputs:\n    duckdb:\n      type: duckdb\n"
        f"      path: {json.dumps(str(project / 'verdicts.duckdb'))}\n      threads: 1\n")
    (project / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(PACKAGE))}\n")
    (project / "macros").mkdir()
    (project / "macros" / "verdicts.sql").write_text(MACRO)
    (project / "seeds").mkdir()
    with (project / "seeds" / "verdict_measurements.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for i, (_, check, row, _) in enumerate(CASES, 1):
            w.writerow({"case_id": i, "check_json": json.dumps(check), **row})
    out = ""
    for args in (["deps"], ["seed"], ["run-operation", "assay_test_verdicts"]):
        out = dbtserver.in_project(project, *args, check=True).stdout
    line = next(l for l in out.splitlines() if "ASSAY_VERDICTS " in l)
    return {r["case_id"]: r for r in json.loads(line.split("ASSAY_VERDICTS ", 1)[1])}


def test_every_kind_passes_and_fails() -> None:
    kinds = {check["kind"]: set() for _, check, _, _ in CASES}
    for _, check, _, expected in CASES:
        kinds[check["kind"]].add(expected)
    assert set(kinds) == {"row_expectation", "null_ceiling", "value_range", "key_uniqueness", "continuity", "sql",
                          "quarantine_rate", "flag_rate", "rule_rate", "quarantine_increase", "rule_increase",
                          "volume_change", "anomaly"}
    assert all(v == {True, False} for v in kinds.values()), kinds


@pytest.mark.parametrize("i", range(1, len(CASES) + 1), ids=[c[0] for c in CASES])
def test_jinja_and_python_verdicts_agree(jinja_verdicts: dict[int, dict], i: int) -> None:
    name, check, _, expected = CASES[i - 1]
    jinja = jinja_verdicts[i]
    # What _record_check_results writes into check_spec; measures are recorded as Jinja saw them.
    spec = {"columns": check["columns"], "types": check["types"], "bounds": check["bounds"],
            "domain": check.get("domain"), "gap_scale": check.get("gap_scale"), "orderable": check.get("orderable")}
    python = verdict_of(check["kind"], json.loads(json.dumps(spec)), jinja["measures"])
    assert jinja["passed"] is python.passed, (name, jinja, python)
    assert python.passed is expected, (name, python)
    unmeasured = [text for prefix, text in UNMEASURED.items() if name.startswith(prefix)]
    if unmeasured:
        # not measured: both sides write the whole sentence, and it is 000's (0106 for time)
        assert jinja["detail"] == python.detail == unmeasured[0], (name, jinja, python)
        assert jinja["measures"]["rows"] == 7
    elif check["kind"] in ("row_expectation", "null_ceiling", "quarantine_rate", "flag_rate", "rule_rate",
                           "quarantine_increase", "rule_increase", "volume_change", "anomaly"):
        # dbt's error message says `assay checks`' own sentence, word for word: integers, or the
        # engine's decimals read exactly (an anomaly's band rounded as _band_texts rounds it)
        assert jinja["detail"] == python.detail, (name, jinja, python)
    elif check["kind"] in ("value_range", "key_uniqueness", "continuity") and not expected:
        # dbt's error says 000's own sentence: the generator's frame (assay.checks.frames) with the
        # measured values shown as `assay checks` shows them (decision 0945)
        assert jinja["detail"] == python.detail, (name, jinja, python)
        if name == "key_repeats_null_part":  # a missing key part is NULL, never Python's None
            assert "first at (1, NULL)" in jinja["detail"], jinja
