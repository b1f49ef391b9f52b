"""The exact detail sentences and result shapes of document 000."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.checks.detail import (
    CheckResult,
    Verdict,
    _null_ceiling_sentence,
    check_failed_detail,
    continuity_detail,
    key_uniqueness_detail,
    not_evaluated_detail,
    null_ceiling_detail,
    null_ppm,
    render_key,
    render_value,
    row_expectation_detail,
    run_record,
    scan_budget_exceeded_detail,
    status_of,
    time_budget_exceeded_detail,
    truncate_reason,
    value_range_detail,
    value_range_unorderable_detail,
    wire_result,
)

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 3, 1, 0, 51, tzinfo=UTC)
T1 = dt.datetime(2026, 3, 1, 1, 51, tzinfo=UTC)

# --------------------------------------------------------------------------- 000's sentences


def test_key_uniqueness_pass_sentence():
    assert key_uniqueness_detail(["station", "observed_at"], rows=6132, repeating_rows=0) == (
        Verdict(True, "key (station, observed_at) is distinct across all 6132 rows, as expected")
    )


def test_key_uniqueness_fail_sentence():
    v = key_uniqueness_detail(["station", "observed_at"], rows=6132, repeating_rows=4,
                              first_repeat=("NYC", T0))
    assert v == Verdict(
        False,
        "key (station, observed_at) repeats on 4 of 6132 rows, first at "
        "('NYC', '2026-03-01T00:51:00Z'), where 0 repeats were expected",
    )


def test_null_ceiling_sentence_template_of_000():
    # 000 prints 3104 ppm beside 19 of 6132 rows, which no rounding of 19/6132 gives; the
    # template is checked with the document's numbers, the computation separately below.
    assert _null_ceiling_sentence("air_temp_c", 3104, 19, 6132, 20000, True) == (
        "column 'air_temp_c' is 3104 ppm null (19 of 6132 rows), at or below the declared "
        "ceiling of 20000 ppm"
    )
    assert _null_ceiling_sentence("air_temp_c", 3104, 19, 6132, 20000, False) == (
        "column 'air_temp_c' is 3104 ppm null (19 of 6132 rows), above the declared "
        "ceiling of 20000 ppm"
    )


def test_null_ceiling_pass_and_fail():
    assert null_ceiling_detail("air_temp_c", null_rows=19, rows=6132, max_null_ppm=20000) == (
        Verdict(True, "column 'air_temp_c' is 3099 ppm null (19 of 6132 rows), at or below the "
                      "declared ceiling of 20000 ppm")
    )
    v = null_ceiling_detail("air_temp_c", null_rows=19, rows=6132, max_null_ppm=3098)
    assert v == Verdict(False, "column 'air_temp_c' is 3099 ppm null (19 of 6132 rows), above "
                               "the declared ceiling of 3098 ppm")


def test_value_range_pass_sentence():
    v = value_range_detail("relative_humidity_pct", "0", "100", rows=6132, non_null_values=6113)
    assert v == Verdict(True, "column 'relative_humidity_pct' lies within [0, 100] across 6113 "
                              "non-null values of 6132 rows")


def test_value_range_fail_sentence():
    v = value_range_detail("relative_humidity_pct", "0", "100", rows=6132, non_null_values=6113,
                           offending=Decimal("104.5"))
    assert v == Verdict(False, "column 'relative_humidity_pct' holds '104.5', above the "
                               "declared maximum of 100")


def test_value_range_below_minimum_is_derived_exactly():
    v = value_range_detail("x", "0.1", "1", rows=1, non_null_values=1,
                           offending=Decimal("0.09999999999999999999"))
    assert v.detail == "column 'x' holds '0.09999999999999999999', below the declared minimum of 0.1"


def test_value_range_not_orderable():
    v = value_range_unorderable_detail("relative_humidity_pct", "0", "100")
    assert not v.passed
    assert v.detail.endswith("whose type is not orderable against the declared range [0, 100]")


def test_continuity_pass_sentence():
    v = continuity_detail("observed_at", 7200, domain="timestamp", distinct_values=6132,
                          widest_gap=3600, gap_from=T0, gap_to=T1)
    assert v == Verdict(
        True,
        "column 'observed_at' never gaps by more than 3600 across 6132 distinct values, the "
        "widest between '2026-03-01T00:51:00Z' and '2026-03-01T01:51:00Z', at or below the "
        "declared ceiling of 7200, measured in seconds between timestamps",
    )


def test_continuity_fail_sentence():
    t2 = dt.datetime(2026, 3, 1, 6, 51, tzinfo=UTC)
    v = continuity_detail("observed_at", 7200, domain="timestamp", distinct_values=10,
                          widest_gap=18000, gap_from=T1, gap_to=t2)
    assert v == Verdict(
        False,
        "column 'observed_at' gaps from '2026-03-01T01:51:00Z' to '2026-03-01T06:51:00Z' by "
        "18000, above the declared ceiling of 7200, measured in seconds between timestamps",
    )


def test_continuity_numeric_domain_names_the_columns_units():
    v = continuity_detail("seq", 10, domain="numeric", distinct_values=3, widest_gap=Decimal("2.5"),
                          gap_from=Decimal("1"), gap_to=Decimal("3.5"))
    assert v.passed
    assert v.detail.endswith("measured in the column's own units between numbers")
    assert "never gaps by more than 2.5" in v.detail and "between '1' and '3.5'" in v.detail


def test_continuity_with_no_value_or_one_value_passes_and_says_so():
    none = continuity_detail("observed_at", 7200, domain="timestamp", distinct_values=0)
    one = continuity_detail("observed_at", 7200, domain="date", distinct_values=1,
                            gap_from=dt.date(2026, 3, 1))
    assert none.passed and one.passed
    assert none.detail == (
        "column 'observed_at' holds no non-null value, so no consecutive pair exists for a gap "
        "to sit between; the declared ceiling of 7200 holds, measured in seconds between "
        "timestamps"
    )
    assert "holds one distinct value, '2026-03-01'" in one.detail
    assert one.detail.endswith("measured in seconds between dates")


def test_continuity_gap_equal_to_ceiling_passes():
    assert continuity_detail("t", 60, domain="timestamp", distinct_values=2, widest_gap=60,
                             gap_from=T0, gap_to=T0 + dt.timedelta(seconds=60)).passed
    assert not continuity_detail("t", 60, domain="timestamp", distinct_values=2,
                                 widest_gap=60.5, gap_from=T0, gap_to=T1).passed


def test_continuity_unknown_domain():
    with pytest.raises(ValueError):
        continuity_detail("t", 1, domain="seconds", distinct_values=0)


def test_row_expectation_sentences():
    assert row_expectation_detail(6132, min_rows=24, max_rows=1000000) == Verdict(
        True, "row count 6132 satisfies the declared bounds [24, 1000000]")
    assert row_expectation_detail(11, min_rows=24, max_rows=1000000) == Verdict(
        False, "row count 11 is below the declared minimum of 24")
    assert row_expectation_detail(2000000, max_rows=1000000) == Verdict(
        False, "row count 2000000 is above the declared maximum of 1000000")
    assert row_expectation_detail(30, min_rows=24).detail == (
        "row count 30 satisfies the declared minimum of 24")
    assert row_expectation_detail(30, max_rows=50).detail == (
        "row count 30 satisfies the declared maximum of 50")


def test_scan_budget_sentence_of_000():
    v = scan_budget_exceeded_detail(91234567890)
    assert v == Verdict(False, "not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: estimated scan of "
                               "91234567890 bytes exceeds the 68719476736-byte ceiling")


def test_time_budget_sentence():
    v = time_budget_exceeded_detail()
    assert not v.passed and v.detail.startswith("not_evaluated: CHECK_TIME_BUDGET_EXCEEDED: ")
    assert "900-second ceiling" in v.detail


def test_not_evaluated_prefix():
    assert not_evaluated_detail("X", "why").detail == "not_evaluated: X: why"


# --------------------------------------------------------------------------- ppm rounding


def test_ppm_rounds_up_so_a_single_null_is_never_zero():
    assert null_ppm(1, 10_000_000) == 1
    assert null_ppm(0, 10) == 0
    assert null_ppm(0, 0) == 0
    assert null_ppm(1, 3) == 333334
    assert null_ppm(10, 10) == 1_000_000


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=10_000_000), st.data())
def test_printed_ppm_always_agrees_with_the_verdict(rows, data):
    nulls = data.draw(st.integers(min_value=0, max_value=rows))
    ceiling = data.draw(st.integers(min_value=0, max_value=1_000_000))
    v = null_ceiling_detail("c", null_rows=nulls, rows=rows, max_null_ppm=ceiling)
    ppm = null_ppm(nulls, rows)
    assert ppm == math.ceil(Fraction(nulls * 1_000_000, rows))
    assert v.passed is (Fraction(nulls, rows) * 1_000_000 <= ceiling)
    assert v.passed is (ppm <= ceiling)
    assert ("at or below" in v.detail) is v.passed


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize("value, shown", [
    (None, "NULL"),
    ("NYC", "'NYC'"),
    ("it's", "'it''s'"),
    (T0, "'2026-03-01T00:51:00Z'"),
    (dt.datetime(2026, 3, 1, 0, 51), "'2026-03-01T00:51:00Z'"),
    (dt.datetime(2026, 3, 1, 2, 51, tzinfo=dt.timezone(dt.timedelta(hours=2))),
     "'2026-03-01T00:51:00Z'"),
    (dt.datetime(2026, 3, 1, 0, 51, 0, 250000, tzinfo=UTC), "'2026-03-01T00:51:00.25Z'"),
    (dt.date(2026, 3, 1), "'2026-03-01'"),
    (Decimal("104.50"), "'104.5'"),
    (Decimal("1E+2"), "'100'"),
    (104.5, "'104.5'"),
    (7, "'7'"),
    (True, "true"),
])
def test_render_value(value, shown):
    assert render_value(value) == shown


def test_render_key_keeps_numbers_bare():
    assert render_key(["NYC", T0]) == "('NYC', '2026-03-01T00:51:00Z')"
    assert render_key([7, None, Decimal("1.50")]) == "(7, NULL, 1.5)"
    assert render_key(["NYC"]) == "('NYC')"


# --------------------------------------------------------------------------- results


def test_check_failed_detail():
    assert check_failed_detail("ENOUGH_ROWS", "row count 11 is below the declared minimum of 24") == (
        "ENOUGH_ROWS: row count 11 is below the declared minimum of 24")


def test_wire_and_run_record_shapes_of_000():
    detail = "key (station, observed_at) is distinct across all 6132 rows, as expected"
    r = CheckResult.of("GRAIN_UNIQUE", Verdict(True, detail))
    assert r.wire() == {"check_id": "GRAIN_UNIQUE", "passed": True, "detail": detail}
    assert r.run_record() == {"name": "GRAIN_UNIQUE", "status": "passed", "reason": detail}
    assert "passed" not in r.run_record() and "status" not in r.wire()


def test_scope_is_on_the_wire_only_when_recorded():
    assert "scope" not in wire_result("A", True, None)
    assert wire_result("A", True, None, scope="silver.t")["scope"] == "silver.t"


def test_status_is_derived():
    assert status_of(False, "not_evaluated: X: y") == "not_evaluated"
    assert status_of(False, "row count 11 is below the declared minimum of 24") == "failed"
    assert status_of(True, None) == "passed"
    assert status_of(False, "whatever", worker_status="not_evaluated") == "not_evaluated"
    ne = CheckResult.of("HUMIDITY_IN_RANGE", scan_budget_exceeded_detail(91234567890))
    assert ne.wire()["passed"] is False and ne.status == "not_evaluated"
    assert ne.run_record()["status"] == "not_evaluated"


def test_run_record_without_detail_has_no_reason():
    assert run_record({"check_id": "A", "passed": True, "detail": None}) == {
        "name": "A", "status": "passed"}


def test_reason_is_truncated_to_1024_characters():
    long = "x" * 2000
    reason = truncate_reason(long)
    assert len(reason) == 1024 and reason.endswith("…")
    assert truncate_reason("y" * 1024) == "y" * 1024
    assert run_record(wire_result("A", False, long))["reason"] == reason


def test_failure_detail_of_a_result():
    r = CheckResult.of("ENOUGH_ROWS", row_expectation_detail(11, min_rows=24))
    assert r.failure_detail() == "ENOUGH_ROWS: row count 11 is below the declared minimum of 24"


def test_singular_counts():
    assert key_uniqueness_detail(["k"], rows=1, repeating_rows=0).detail == (
        "key (k) is distinct across all 1 row, as expected")
    assert "(1 of 1 row)" in null_ceiling_detail("c", null_rows=1, rows=1, max_null_ppm=0).detail
