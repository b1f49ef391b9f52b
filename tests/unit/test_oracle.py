"""The oracle on cases small enough to check by hand.

The integration tests trust the oracle to say what the warehouse must hold, so every rule of
reference 001 / pipeline.md it encodes is pinned here first, on rows whose outcome a reader can
verify without running anything.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from assay.api import load_project
from tests.support.oracle import (
    MartRow,
    Oracle,
    RejectLedger,
    Undefined,
    Unsupported,
    Warehouse,
    parse_timestamp,
    reject_id,
)

ENTITY = """
spec_version: 1
entities:
  item:
    grain: one row per item
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      price: {type: "decimal(6,2)"}
      cost: {type: "decimal(6,2)"}
      qty: {type: int}
      born: {type: date}
      code: {type: string}
      kind: {type: string}
      label: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 30d}
    quality:
      - {rule: expression, name: cost_below_price, expr: "cost <= price", on_fail: flag}
      - {rule: expression, name: qty_small, expr: "qty < 100", on_fail: quarantine}
"""
MAPPING = """
mapping_version: 1
source: raw_items
target: item
key:
  item_id: {from: "$.id", transform: [trim, upper]}
fields:
  price:
    from: "$.price"
    transform: [{to_decimal: [6, 2]}]
    quality:
      - {rule: range, min: 0, on_fail: quarantine}
      - {rule: range, max: 100, on_fail: flag}
  cost: {from: "$.cost", transform: [{to_decimal: [6, 2]}]}
  qty: {from: "$.qty", transform: [to_int]}
  born:
    from: "$.born"
    transform: [{parse_date: ISO8601}]
    quality:
      - {rule: not_null, on_fail: quarantine}
  code:
    from: "$.code"
    quality:
      - {rule: pattern, regex: "^[A-Z]{2}[0-9]$", on_fail: flag}
      - {rule: unique, on_fail: flag}
  kind:
    from: "$.kind"
    transform: [lower, {enum_map: [a, alpha, b, beta]}]
    quality:
      - {rule: in_enum, on_fail: quarantine}
  label:
    from: "$.label"
    transform: [to_string]
    quality:
      - {rule: length, max: 3, on_fail: flag}
      - {rule: in_set, values: [x, yy, zzz, long], on_fail: flag}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
T0 = "2026-01-01T10:00:00Z"
T1 = "2026-01-01T11:00:00Z"
T2 = "2026-01-01T12:00:00Z"


@pytest.fixture
def project(write_spec):
    return load_project(write_spec({"entity.yaml": ENTITY, "mapping.yaml": MAPPING}, base=False))


def row(srid, id="A", *, load="l1", at=T0, price="10.00", cost="1.00", qty="1", born="2025-01-01", code=None, kind="a", label="x"):
    return {
        "_load_id": load, "_ingested_at": at, "_source_row_id": srid, "id": id, "price": price, "cost": cost,
        "qty": qty, "born": born, "code": code, "kind": kind, "label": label,
    }


def judge(project, *rows):
    return Oracle(project).build({"raw_items": list(rows)})["item"]


def one(project, **kw):
    (staged,) = judge(project, row("s1", **kw)).rows
    return staged


# ---------------------------------------------------------------- extract + transform


@pytest.mark.parametrize(
    "text, value",
    [("12.345", Decimal("12.35")), ("12.344", Decimal("12.34")), ("-12.345", Decimal("-12.35")),
     ("-0", Decimal("0.00")), ("7", Decimal("7.00")), ("0012.5", Decimal("12.50"))],
)
def test_to_decimal_rounds_half_away_from_zero(project, text, value):
    staged = one(project, price=text)
    assert staged.values["price"] == value and "price" not in staged.markers


@pytest.mark.parametrize("text", ["12,50", "", "NULL", "NaN", "Infinity", "€1", "(4.00)", "1 234.5", "١٢", "10000", "9999.995"])
def test_to_decimal_failure_is_a_marker_not_a_value(project, text):
    staged = one(project, price=text)
    assert staged.values["price"] is None
    assert "price_coercible" in staged.failed_rules and staged.route == "quarantined"


@pytest.mark.parametrize("text", ["1e3", " 12.5", "12.5 ", "+1", ".5", "5."])
def test_numbers_the_contract_does_not_pin_are_undefined(project, text):
    with pytest.raises(Undefined):
        one(project, price=text)


def test_null_never_casts_so_never_marks(project):
    staged = one(project, price=None)
    assert staged.values["price"] is None and not staged.markers
    assert staged.route == "kept"


@pytest.mark.parametrize(
    "text, ok", [("2024-02-29", True), ("2023-02-29", False), ("2025-02-30", False), ("20251231", False),
                 ("", False), ("31/12/2025", False), ("0000-00-00", False), ("2025-13-01", False), ("9999-12-31", True)],
)
def test_parse_date_is_strict(project, text, ok):
    staged = one(project, born=text)
    assert ("born" in staged.markers) is not ok
    if ok:
        assert staged.values["born"] == dt.date.fromisoformat(text)


def test_parse_date_of_an_instant_is_undefined(project):
    with pytest.raises(Undefined):
        one(project, born="2025-12-31T23:00:00-05:00")


@pytest.mark.parametrize("text, value", [("007", 7), ("-0", 0), ("9223372036854775807", 2**63 - 1)])
def test_to_int_reads_integer_text(project, text, value):
    assert one(project, qty=text).values["qty"] == value


@pytest.mark.parametrize("text", ["1.5", "9223372036854775808", "one", ""])
def test_to_int_refuses_everything_else(project, text):
    assert "qty_coercible" in one(project, qty=text).failed_rules


def test_trim_upper_on_the_key(project):
    assert one(project, id="  ab ").values["item_id"] == "AB"


def test_trim_of_a_tab_and_upper_of_non_ascii_are_undefined(project):
    with pytest.raises(Undefined):
        one(project, id="\tab")
    with pytest.raises(Undefined):
        one(project, id="straße")


def test_parse_timestamp_converts_offsets_to_utc():
    assert parse_timestamp("2026-01-01T10:00:00+03:00") == dt.datetime(2026, 1, 1, 7)
    assert parse_timestamp("2026-01-01 10:00:00.5Z") == dt.datetime(2026, 1, 1, 10, 0, 0, 500000)
    assert parse_timestamp("not a timestamp") is None
    assert parse_timestamp("2025-12-31T23:59:60Z") is None


# ---------------------------------------------------------------- rules


def test_null_belongs_to_not_null_and_a_failed_cast_to_coercible(project):
    assert one(project, born=None).failed_rules == ("born_not_null",)
    assert one(project, born="nope").failed_rules == ("born_coercible",)


def test_range_and_expression_never_fire_on_null(project):
    staged = one(project, price=None, cost=None, qty=None)
    assert staged.failed_rules == ()


def test_expression_compares_typed_values(project):
    assert one(project, price="10.00", cost="10.0").failed_rules == ()
    assert one(project, price="10.00", cost="10.01").failed_rules == ("cost_below_price",)
    assert one(project, qty="100").failed_rules == ("qty_small",)


def test_severity_routes_and_every_fired_rule_is_recorded(project):
    staged = one(project, price="-1", cost="5", label="toolong")
    assert staged.route == "quarantined"
    assert staged.failed_rules == ("cost_below_price", "label_in_set", "label_length_max", "price_range_min")
    kept = one(project, price="200", label="long")
    assert kept.route == "kept" and kept.failed_rules == ("label_length_max", "price_range_max")


def test_in_enum_reads_the_mapped_value(project):
    assert one(project, kind="B").values["kind"] == "beta"
    assert one(project, kind="c").failed_rules == ("kind_in_enum",)


def test_pattern_is_a_substring_search_in_the_portable_subset(project):
    assert one(project, code="AB1").failed_rules == ()
    # RE2's `$` does not match before a final newline and its \d is ASCII.
    assert one(project, code="AB1\n").failed_rules == ("code_pattern",)
    assert one(project, code="ab1").failed_rules == ("code_pattern",)


def test_unique_counts_rank_one_rows_only(project):
    j = judge(
        project,
        row("s1", "A", code="AB1", at=T0),
        row("s2", "A", code="AB1", at=T1),  # same key, newer: s1 is deduped and does not count
        row("s3", "B", code="CD2"),
        row("s4", "C", code="CD2"),
    )
    fired = {r.srid: r.failed_rules for r in j.rows}
    assert fired == {"s1": (), "s2": (), "s3": ("code_unique",), "s4": ("code_unique",)}


def test_expressions_beyond_the_simple_form_refuse_at_construction(write_spec):
    entity = ENTITY.replace(
        "      - {rule: expression, name: qty_small, expr: \"qty < 100\", on_fail: quarantine}",
        "      - {rule: expression, name: qty_small, expr: \"qty + 1 < 100\", on_fail: quarantine}",
    )
    spec = write_spec({"entity.yaml": entity, "mapping.yaml": MAPPING}, base=False)
    with pytest.raises(Unsupported):
        Oracle(load_project(spec))


# ---------------------------------------------------------------- dedupe


def test_dedupe_order_is_total(project):
    j = judge(
        project,
        row("s1", "A", at=T0, load="l9"),
        row("s2", "A", at=T1, load="l1"),  # newest wins, whatever the load id
        row("s3", "B", at=T0, load="l1"),
        row("s4", "B", at=T0, load="l2"),  # tie on time: higher load id wins
        row("s5", "C", at=T0, load="l1"),
        row("s6", "C", at=T0, load="l1"),  # tie on both: higher source row id wins
        row("s7", "D", at="2026-01-01T13:00:00+03:00"),  # 10:00 UTC: older than T1 despite the text
        row("s8", "D", at=T1),
    )
    assert {r.srid: r.rank for r in j.rows} == {"s1": 2, "s2": 1, "s3": 2, "s4": 1, "s5": 2, "s6": 1, "s7": 2, "s8": 1}
    assert {r.srid for r in j.routed("deduped")} == {"s1", "s3", "s5", "s7"}


def test_dedupe_runs_before_rules_so_a_corrupt_newer_row_evicts_a_clean_older_one(project):
    j = judge(project, row("s1", "A", at=T0), row("s2", "A", at=T1, price="bad"))
    assert [(r.srid, r.route) for r in j.rows] == [("s1", "deduped"), ("s2", "quarantined")]
    assert j.rows[0].failed_rules == ()  # rules never see a deduped row


def test_null_key_rows_are_partitioned_alone(project):
    j = judge(project, row("s1", None), row("s2", None))
    assert [r.rank for r in j.rows] == [1, 1]


# ---------------------------------------------------------------- audits and mart


def test_ingestion_metadata_problems_block_the_build(project):
    bad = [row("s1"), row("s1", "B"), row(None, "C"), row("s4", "D", at="yesterday")]
    j = judge(project, *bad)
    assert j.rows == [] and len(j.blocked) == 3


def test_mart_rows(project):
    j = judge(project, row("s1", "A", at=T0), row("s2", "A", at=T1, price="-1"), row("s3", "B", price="200"))
    mart = {m.rule: m for m in j.mart}
    assert mart["(entity)"] == MartRow("item", None, "(entity)", "(entity)", 2, 0, 1, 1)
    assert mart["price_range_min"] == MartRow("item", "raw_items", "price_range_min", "quarantine", 0, 1, 0, 0)
    assert mart["price_range_max"].rows_failed == 1
    assert mart["cost_below_price"] == MartRow("item", None, "cost_below_price", "flag", 0, 1, 0, 0)
    assert mart["price_coercible"].rows_failed == 0
    assert len(j.mart) == 1 + len(project.entity("item").rules)


# ---------------------------------------------------------------- the reject table across builds


def test_reject_lifecycle(project):
    wh = Warehouse(project)
    rid = reject_id("raw_items", "s1")
    wh.build({"raw_items": [row("s1", price="bad", at=T0)]})
    first = wh.ledger.rows[rid]
    assert (first.first_seen, first.last_seen, first.failed_rules, first.open) == (
        dt.datetime(2026, 1, 1, 10), dt.datetime(2026, 1, 1, 10), ("price_coercible",), True)
    assert first.key_values == {"item_id": "A"} and first.raw["price"] == "bad"

    # Re-delivered, still bad in another way: last_seen and the reasons move, first_seen does not.
    wh.build({"raw_items": [row("s1", price="-3", at=T1, load="l2")]})
    again = wh.ledger.rows[rid]
    assert (again.first_seen, again.last_seen, again.failed_rules, again.load_id) == (
        dt.datetime(2026, 1, 1, 10), dt.datetime(2026, 1, 1, 11), ("cost_below_price", "price_range_min"), "l2")

    # Corrected: resolved as admitted, and the account of the last diversion is kept.
    wh.build({"raw_items": [row("s1", at=T2, load="l3")]})
    done = wh.ledger.rows[rid]
    assert (done.resolved_in, done.resolution, done.last_seen, done.failed_rules) == (
        3, "admitted", dt.datetime(2026, 1, 1, 11), ("cost_below_price", "price_range_min"))

    # Staying clean changes nothing; going bad again reopens the same row, first_seen intact.
    wh.build({"raw_items": [row("s1", at=T2, load="l3")]})
    assert wh.ledger.rows[rid].resolved_in == 3
    wh.build({"raw_items": [row("s1", qty="x", at="2026-01-02T00:00:00Z", load="l4")]})
    reopened = wh.ledger.rows[rid]
    assert (reopened.open, reopened.resolution, reopened.first_seen) == (True, None, dt.datetime(2026, 1, 1, 10))


def test_a_rejected_row_that_loses_its_key_resolves_as_deduped(project):
    wh = Warehouse(project)
    wh.build({"raw_items": [row("s1", price="bad", at=T0)]})
    wh.build({"raw_items": [row("s1", price="bad", at=T0), row("s2", at=T1)]})
    r = wh.ledger.rows[reject_id("raw_items", "s1")]
    assert (r.resolved_in, r.resolution) == (2, "deduped")


def test_reject_rows_are_never_deleted(project):
    wh = Warehouse(project)
    wh.build({"raw_items": [row("s1", price="bad")]})
    wh.build({"raw_items": []})  # bronze lost the row: the reject row stays as it was
    assert wh.ledger.rows[reject_id("raw_items", "s1")].open


def test_a_blocked_build_is_refused_by_the_ledger(project):
    with pytest.raises(ValueError):
        RejectLedger().apply(Oracle(project).build({"raw_items": [row("s1"), row("s1", "B")]}), 1)

