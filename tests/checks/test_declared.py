"""Declared table checks: the registration refusals of document 000."""

from __future__ import annotations

import dataclasses

from decimal import Decimal

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.checks import Problem
from assay.checks.declared import (
    DECIMAL_BOUND_RE,
    DeclaredCheck,
    is_decimal_bound,
    validate_declared_checks,
)

COLUMNS = {"station", "observed_at", "air_temp_c", "relative_humidity_pct", "relh"}
GRAIN = ["station", "observed_at"]


def lines_for(raw):
    """A line_of that gives item i line 10*(i+1) and key k of item i line 10*(i+1) + order."""

    def line_of(path: tuple) -> int:
        if not path:
            return 1
        base = 10 * (path[0] + 1)
        if len(path) == 1:
            return base
        item = raw[path[0]]
        if isinstance(item, dict) and path[1] in item:
            return base + 1 + list(item).index(path[1])
        raise KeyError(path)

    return line_of


def validate(raw, columns=COLUMNS, grain=GRAIN, owner="entity station_temperatures"):
    return validate_declared_checks(raw, owner=owner, line_of=lines_for(raw), columns=columns,
                                    grain=grain)


def one_problem(raw, **kw) -> Problem:
    checks, problems = validate(raw, **kw)
    assert len(problems) == 1, problems
    return problems[0]


def check(**fields) -> dict:
    base = {"check_id": "c", "enforcement": "required"}
    base.update(fields)
    return base


# --------------------------------------------------------------------------- the 000 examples


def test_the_five_examples_of_000_are_accepted():
    raw = yaml.safe_load(
        """
        - {check_id: grain_unique, kind: key_uniqueness, enforcement: required,
           columns: [station, observed_at], description: One row per station and observation time.}
        - {check_id: temperature_present, kind: null_ceiling, enforcement: required,
           columns: [air_temp_c], max_null_ppm: 20000}
        - {check_id: humidity_in_range, kind: value_range, enforcement: required,
           columns: [relative_humidity_pct], min_value: "0", max_value: "100"}
        - {check_id: hourly_continuity, kind: continuity, enforcement: advisory,
           columns: [observed_at], max_gap_seconds: 7200,
           description: Two consecutive observations more than two hours apart is an outage.}
        - {check_id: enough_rows, kind: row_expectation, enforcement: required,
           min_rows: 24, max_rows: 1000000}
        """
    )
    checks, problems = validate(raw)
    assert problems == []
    assert [c.check_id for c in checks] == [
        "GRAIN_UNIQUE", "TEMPERATURE_PRESENT", "HUMIDITY_IN_RANGE", "HOURLY_CONTINUITY",
        "ENOUGH_ROWS",
    ]
    grain, nulls, rng, cont, rows = checks
    assert grain.columns == ("station", "observed_at") and grain.blocking
    assert nulls.max_null_ppm == 20000
    assert (rng.min_value, rng.max_value) == ("0", "100")
    assert cont.max_gap_seconds == 7200 and not cont.blocking and cont.enforcement == "advisory"
    assert (rows.min_rows, rows.max_rows, rows.columns) == (24, 1000000, ())
    assert grain.description == "One row per station and observation time."
    assert grain.line == 10 and rows.line == 50


def test_declared_check_is_frozen():
    checks, _ = validate([check(kind="key_uniqueness")])
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'kind'"):
        checks[0].kind = "null_ceiling"  # type: ignore[misc]


def test_wrong_column_count_sentence_of_000():
    p = one_problem([check(check_id="temperature_present", kind="null_ceiling",
                           columns=["station", "observed_at", "air_temp_c"], max_null_ppm=1)],
                    columns=None)
    assert p.code == "DECLARED_CHECK_INVALID"
    assert p.message == "check TEMPERATURE_PRESENT reads exactly one column and names 3"
    assert p.line == 14  # the columns key (fourth key of the first item)


def test_bound_the_kind_does_not_read_sentence_of_000():
    p = one_problem([check(check_id="grain_unique", kind="key_uniqueness",
                           columns=["station", "observed_at"], max_rows=100)])
    assert p.code == "DECLARED_CHECK_INVALID"
    assert p.message == (
        "check GRAIN_UNIQUE is a key_uniqueness check and states max_rows, which a check of "
        "that kind does not read; a bound that is never evaluated would be reported as "
        "satisfied, so state it on a check whose kind reads it"
    )
    assert p.line == 15


def test_missing_range_bound_sentence_of_000():
    p = one_problem([check(check_id="humidity_in_range", kind="value_range", columns=["relh"],
                           min_value="0")])
    assert p.message == (
        "check HUMIDITY_IN_RANGE bounds the values of column relh and states no max_value; an "
        "unstated bound is not an open one"
    )


# --------------------------------------------------------------------------- the list


@pytest.mark.parametrize("raw, phrase", [({"a": 1}, "a mapping"), ("x", "text"), (None, "empty")])
def test_checks_not_a_list(raw, phrase):
    checks, problems = validate(raw)
    assert checks == [] and len(problems) == 1
    assert problems[0].code == "DECLARED_CHECKS_INVALID"
    assert f"are {phrase}, not a list" in problems[0].message
    assert problems[0].line == 1


def test_more_than_128_checks():
    raw = [check(check_id=f"c{i}", kind="row_expectation", min_rows=1) for i in range(129)]
    checks, problems = validate(raw)
    assert [p.code for p in problems] == ["DECLARED_CHECKS_INVALID"]
    assert "declares 129 checks, more than the 128" in problems[0].message
    assert len(checks) == 129  # every check is still validated and resolved


def test_exactly_128_checks_are_fine():
    raw = [check(check_id=f"c{i}", kind="row_expectation", min_rows=1) for i in range(128)]
    assert validate(raw)[1] == []


def test_item_not_a_mapping():
    p = one_problem(["grain_unique"])
    assert p.code == "DECLARED_CHECK_INVALID"
    assert p.message.startswith("check #1 of entity station_temperatures is text, not a mapping")


# --------------------------------------------------------------------------- ids and keys


def test_duplicate_ids():
    raw = [check(check_id="grain_unique", kind="key_uniqueness"),
           check(check_id="enough", kind="row_expectation", min_rows=1),
           check(check_id="grain_unique", kind="row_expectation", min_rows=1)]
    checks, problems = validate(raw)
    assert [p.code for p in problems] == ["DECLARED_CHECK_DUPLICATE"]
    assert "claim the id GRAIN_UNIQUE (checks #1 and #3)" in problems[0].message
    assert problems[0].line == 31
    assert [c.check_id for c in checks] == ["GRAIN_UNIQUE", "ENOUGH"]


@pytest.mark.parametrize("bad, hint", [("Grain-Unique", "write grain_unique"),
                                       ("1st", "write a name such as grain_unique"),
                                       ("a" * 64, "write a name such as grain_unique")])
def test_invalid_check_id(bad, hint):
    p = one_problem([check(check_id=bad, kind="key_uniqueness")])
    assert "which is not a lower-case identifier [a-z][a-z0-9_]{0,62}" in p.message
    assert p.message.endswith(hint)


def test_longest_check_id_is_accepted():
    assert validate([check(check_id="a" * 63, kind="key_uniqueness")])[1] == []


def test_missing_check_id_kind_and_enforcement_are_all_reported():
    checks, problems = validate([{"columns": ["station"]}])
    messages = [p.message for p in problems]
    assert any("states no check_id" in m for m in messages)
    assert any("states no enforcement; write enforcement: required or enforcement: advisory" in m
               for m in messages)
    assert any("states no kind; write one of key_uniqueness, null_ceiling" in m for m in messages)
    assert checks == []


def test_unknown_kind_lists_the_kinds():
    p = one_problem([check(kind="uniqueness")])
    assert p.message == (
        "check C states kind 'uniqueness', which is not a kind of declared check; the kinds are "
        "key_uniqueness, null_ceiling, value_range, continuity, row_expectation"
    )


def test_unknown_enforcement():
    p = one_problem([check(kind="key_uniqueness", enforcement="block")])
    assert "states enforcement 'block'; write required" in p.message


def test_unknown_key_lists_the_accepted_keys():
    p = one_problem([check(kind="key_uniqueness", severity="high")])
    assert p.message == (
        "check C states severity, which is not a key of a declared check; the accepted keys are "
        "check_id, kind, enforcement, columns, description, max_null_ppm, min_value, max_value, "
        "max_gap_seconds, min_rows, max_rows"
    )


def test_description_accepted_on_every_kind_and_never_in_a_refusal():
    secret = "SECRET PROSE 42"
    raw = [
        check(check_id="a", kind="key_uniqueness", description=secret),
        check(check_id="b", kind="null_ceiling", columns=["relh"], max_null_ppm=5,
              description=secret),
        check(check_id="c", kind="value_range", columns=["relh"], min_value="1", max_value="2",
              description=secret),
        check(check_id="d", kind="continuity", columns=["observed_at"], max_gap_seconds=5,
              description=secret),
        check(check_id="e", kind="row_expectation", min_rows=1, description=secret),
        check(check_id="f", kind="row_expectation", description=secret, max_null_ppm=1),
    ]
    checks, problems = validate(raw)
    assert len(checks) == 5 and all(c.description == secret for c in checks)
    assert problems and all(secret not in p.message for p in problems)


# --------------------------------------------------------------------------- columns


def test_key_uniqueness_falls_back_to_grain_for_missing_or_empty_columns():
    checks, problems = validate([check(check_id="a", kind="key_uniqueness"),
                                 check(check_id="b", kind="key_uniqueness", columns=[])])
    assert problems == []
    assert [c.columns for c in checks] == [("station", "observed_at")] * 2


def test_key_uniqueness_without_grain():
    p = one_problem([check(kind="key_uniqueness")], grain=None)
    assert "names no columns and entity station_temperatures has no grain to fall back to" in (
        p.message)


def test_key_uniqueness_grain_wider_than_16():
    p = one_problem([check(kind="key_uniqueness")], grain=[f"g{i}" for i in range(17)],
                    columns=None)
    assert "which names 17 columns; a key_uniqueness check reads at most 16" in p.message


def test_key_uniqueness_17_columns():
    cols = [f"k{i}" for i in range(17)]
    p = one_problem([check(kind="key_uniqueness", columns=cols)], columns=None)
    assert p.message.startswith("check C names 17 columns; a key_uniqueness check names 1 to 16")


def test_key_uniqueness_16_columns_are_fine():
    cols = [f"k{i}" for i in range(16)]
    checks, problems = validate([check(kind="key_uniqueness", columns=cols)], columns=None)
    assert problems == [] and len(checks[0].columns) == 16


@pytest.mark.parametrize("kind, extra", [("null_ceiling", {"max_null_ppm": 1}),
                                         ("value_range", {"min_value": "0", "max_value": "1"}),
                                         ("continuity", {"max_gap_seconds": 1})])
def test_one_column_kinds_with_no_column(kind, extra):
    p = one_problem([check(kind=kind, **extra)])
    assert p.message == "check C reads exactly one column and names none"


def test_row_expectation_refuses_a_named_column():
    p = one_problem([check(kind="row_expectation", columns=["station"], min_rows=1)])
    assert p.message.startswith("check C is a row_expectation check and names column station")


def test_columns_not_a_list():
    p = one_problem([check(kind="null_ceiling", columns="relh", max_null_ppm=1)])
    assert "states columns as text; write a list of column names" in p.message


def test_column_named_twice():
    p = one_problem([check(kind="key_uniqueness", columns=["station", "station"])])
    assert "names column station twice" in p.message


def test_unknown_column():
    raw = [check(kind="null_ceiling", columns=["air_temp"], max_null_ppm=1)]
    p = one_problem(raw)
    assert p.code == "DECLARED_CHECK_COLUMN_UNKNOWN"
    assert p.message == "check C names column air_temp, which entity station_temperatures does not declare"
    checks, _ = validate(raw, columns=None)
    assert checks and checks[0].columns == ("air_temp",)


def test_unknown_columns_of_a_key_are_each_reported():
    _, problems = validate([check(kind="key_uniqueness", columns=["x", "station", "y"])])
    assert [p.code for p in problems] == ["DECLARED_CHECK_COLUMN_UNKNOWN"] * 2


# --------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("kind, cols, bound", [
    ("null_ceiling", ["relh"], "min_rows"),
    ("value_range", ["relh"], "max_null_ppm"),
    ("continuity", ["observed_at"], "max_value"),
    ("row_expectation", [], "max_gap_seconds"),
])
def test_every_kind_refuses_a_bound_it_does_not_read(kind, cols, bound):
    required = {"null_ceiling": {"max_null_ppm": 1}, "value_range": {"min_value": "0",
                "max_value": "1"}, "continuity": {"max_gap_seconds": 1},
                "row_expectation": {"min_rows": 1}}[kind]
    raw = [check(kind=kind, columns=cols, **required, **{bound: 1 if "value" not in bound else "1"})]
    p = one_problem(raw)
    assert f"is a {kind} check and states {bound}, which a check of that kind does not read" in (
        p.message)


def test_a_null_bound_counts_as_not_stated():
    checks, problems = validate([check(kind="key_uniqueness", max_rows=None)])
    assert problems == [] and checks


@pytest.mark.parametrize("ppm", [-1, 1_000_001, 2.5, "20000", True])
def test_max_null_ppm_must_be_an_integer_in_range(ppm):
    p = one_problem([check(kind="null_ceiling", columns=["relh"], max_null_ppm=ppm)])
    assert "which is not an integer between 0 and 1,000,000" in p.message


@pytest.mark.parametrize("ppm", [0, 1_000_000])
def test_max_null_ppm_limits_are_inclusive(ppm):
    assert validate([check(kind="null_ceiling", columns=["relh"], max_null_ppm=ppm)])[1] == []


def test_null_ceiling_without_ceiling():
    p = one_problem([check(kind="null_ceiling", columns=["relh"])])
    assert p.message == ("check C caps the nulls of column relh and states no max_null_ppm; an "
                         "unstated ceiling is not an unlimited one")


@pytest.mark.parametrize("bound", ["1e3", "01", "+1", "1.", ".5", " 1", "1.0000000000000000001",
                                   "1" * 40, "-", "NaN"])
def test_value_range_bound_grammar(bound):
    p = one_problem([check(kind="value_range", columns=["relh"], min_value=bound,
                           max_value="100000000000000000000000000000000000000")])
    assert f"states min_value '{bound}', which is not a decimal string" in p.message


@pytest.mark.parametrize("value, shown", [(0, "a number 0"), (0.5, "a number 0.5")])
def test_value_range_bounds_must_be_quoted(value, shown):
    p = one_problem([check(kind="value_range", columns=["relh"], min_value=value, max_value="1")])
    assert f"states min_value as {shown}; bounds are decimal strings" in p.message
    assert f'min_value: "{value}"' in p.message


def test_value_range_min_above_max_compares_exactly():
    p = one_problem([check(kind="value_range", columns=["relh"], min_value="0.30000000000000001",
                           max_value="0.3")])
    assert "states min_value 0.30000000000000001 above its max_value 0.3" in p.message
    # equal bounds are a one-point range, which is fine, whatever the spelling
    assert validate([check(kind="value_range", columns=["relh"], min_value="1.50",
                           max_value="1.5")])[1] == []


def test_value_range_one_sided_reports_both_missing_bounds():
    _, problems = validate([check(kind="value_range", columns=["relh"])])
    assert [("min_value" in p.message, "max_value" in p.message) for p in problems] == [
        (True, False), (False, True)]


@pytest.mark.parametrize("gap", [0, -5, 1.5, "7200"])
def test_max_gap_seconds_must_be_a_positive_integer(gap):
    p = one_problem([check(kind="continuity", columns=["observed_at"], max_gap_seconds=gap)])
    assert "which is not a positive integer" in p.message


def test_continuity_without_ceiling():
    p = one_problem([check(kind="continuity", columns=["observed_at"])])
    assert "bounds the gaps of column observed_at and states no max_gap_seconds" in p.message


def test_row_expectation_with_neither_bound():
    p = one_problem([check(kind="row_expectation")])
    assert p.message == ("check C is a row_expectation check and states neither min_rows nor "
                         "max_rows; state at least one")


@pytest.mark.parametrize("fields, text", [
    ({"min_rows": -1}, "states min_rows -1; min_rows is a whole number of rows from 0"),
    ({"max_rows": 0}, "states max_rows 0; max_rows is a whole number of rows from 1"),
    ({"min_rows": 10_000_001}, "states min_rows 10000001"),
    ({"max_rows": 10_000_001}, "states max_rows 10000001"),
    ({"min_rows": 100, "max_rows": 10}, "states min_rows 100 over its max_rows 10; no row count "
                                        "satisfies a floor over its ceiling"),
])
def test_row_bounds(fields, text):
    p = one_problem([check(kind="row_expectation", **fields)])
    assert text in p.message


def test_row_bounds_at_their_limits_are_fine():
    raw = [check(check_id="a", kind="row_expectation", min_rows=0),
           check(check_id="b", kind="row_expectation", max_rows=10_000_000),
           check(check_id="c", kind="row_expectation", min_rows=5, max_rows=5)]
    checks, problems = validate(raw)
    assert problems == [] and len(checks) == 3


def test_every_problem_of_one_check_is_reported():
    raw = [check(check_id="bad", kind="null_ceiling", columns=["x", "y"], max_null_ppm=-1,
                 max_rows=5, colour="red")]
    _, problems = validate(raw)
    assert len(problems) >= 4
    assert {p.code for p in problems} >= {"DECLARED_CHECK_INVALID", "DECLARED_CHECK_COLUMN_UNKNOWN"}


def test_line_of_that_raises_falls_back_to_the_nearest_known_line():
    raw = [check(kind="key_uniqueness", unknown=1)]

    def line_of(path):
        if len(path) > 1:
            raise KeyError(path)
        return 7 if path else 3

    _, problems = validate_declared_checks(raw, owner="t", line_of=line_of, columns=None,
                                           grain=GRAIN)
    assert problems[0].line == 7


# --------------------------------------------------------------------------- decimal grammar


_decimals = st.decimals(allow_nan=False, allow_infinity=False, places=6,
                        min_value=Decimal("-1e30"), max_value=Decimal("1e30"))


@settings(max_examples=150, deadline=None)
@given(_decimals)
def test_plain_decimal_text_round_trips_through_the_bound_grammar(value):
    text = format(value, "f") if value != 0 else "0"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text == "-0":
        text = "0"
    assert is_decimal_bound(text), text
    assert Decimal(text) == value
    checks, problems = validate([check(kind="value_range", columns=["relh"], min_value=text,
                                       max_value=text)])
    assert problems == [] and checks[0].min_value == text  # the exact text is kept


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=12))
def test_bound_grammar_accepts_only_what_the_grammar_of_000_accepts(text):
    expected = _bound_by_hand(text)
    assert is_decimal_bound(text) is expected
    assert (DECIMAL_BOUND_RE.fullmatch(text) is not None) is expected


def _bound_by_hand(text: str) -> bool:
    """000's bound grammar read character by character (no regex, nothing shared with the
    checker): an optional '-', then '0' or a non-zero ASCII digit and at most 38 more digits,
    then optionally '.' and 1 to 18 digits."""
    digits = set("0123456789")
    body = text[1:] if text.startswith("-") else text
    whole, dot, frac = body.partition(".")
    if not whole or any(c not in digits for c in whole):
        return False
    if whole != "0" and (whole[0] == "0" or len(whole) > 39):
        return False
    if dot and (not 1 <= len(frac) <= 18 or any(c not in digits for c in frac)):
        return False
    return True


@pytest.mark.parametrize("text,ok", [
    ("0", True), ("-0", True), ("7", True), ("-12.5", True), ("100", True), ("0.000000000000000001", True),
    ("9" * 39, True), ("9" * 40, False), ("1." + "0" * 18, True), ("1." + "0" * 19, False),
    ("", False), ("-", False), ("01", False), ("1.", False), (".5", False), ("+1", False), ("1e3", False),
    (" 1", False), ("1 ", False), ("1\n", False), ("١٢", False), ("1,5", False), ("--1", False), ("NaN", False),
])
def test_bound_grammar_examples_written_by_hand(text, ok):
    assert _bound_by_hand(text) is ok
    assert is_decimal_bound(text) is ok


def test_declared_check_default_fields():
    c = DeclaredCheck(check_id="X", kind="key_uniqueness", enforcement="advisory")
    assert c.columns == () and c.blocking is False and c.max_rows is None
