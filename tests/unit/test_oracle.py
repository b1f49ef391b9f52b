"""The oracle on cases small enough to check by hand.

The integration tests trust the oracle to say what the warehouse must hold, so every rule of
reference 001 / pipeline.md it encodes is pinned here first, on rows whose outcome a reader can
verify without running anything.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

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
    return write_spec({"entity.yaml": ENTITY, "mapping.yaml": MAPPING}, base=False)


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


def test_trim_removes_unicode_white_space_and_upper_of_non_ascii_is_undefined(project):
    # decision 0960: the White_Space property (U+200B, which it leaves, is the primitive table's)
    assert one(project, id="\tab\u00a0\u3000").values["item_id"] == "AB"
    assert one(project, id="\u2003\nab\u0085").values["item_id"] == "AB"
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
        Oracle(spec)


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
    assert len(j.mart) == 1 + len(Oracle(project).spec.entity("item").rules)


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



# ---------------------------------------------------------------- the oracle's own reading of the spec


def test_the_oracle_imports_nothing_from_the_product():
    import pathlib
    import re

    package = pathlib.Path(__file__).resolve().parents[1] / "support" / "oracle"
    for path in package.glob("*.py"):
        assert not re.search(r"^\s*(from|import)\s+assay", path.read_text(), re.M), path.name


def test_generated_names_and_dispositions_of_the_item_spec(project):
    rules = {r.name: (r.kind, r.disposition, r.mapping, r.implicit) for r in Oracle(project).spec.entity("item").rules}
    assert rules == {
        # implicit coercible on every mapped field (key included), at quarantine: the dedupe order
        # reads only ingestion metadata here
        **{f"{c}_coercible": ("coercible", "quarantine", "raw_items", True)
           for c in ("item_id", "price", "cost", "qty", "born", "code", "kind", "label")},
        "price_range_min": ("range", "quarantine", "raw_items", False),
        "price_range_max": ("range", "flag", "raw_items", False),
        "born_not_null": ("not_null", "quarantine", "raw_items", False),
        "code_pattern": ("pattern", "flag", "raw_items", False),
        "code_unique": ("unique", "flag", "raw_items", False),
        "kind_in_enum": ("in_enum", "quarantine", "raw_items", False),
        "label_length_max": ("length", "flag", "raw_items", False),
        "label_in_set": ("in_set", "flag", "raw_items", False),
        "cost_below_price": ("expression", "flag", None, False),
        "qty_small": ("expression", "quarantine", None, False),
    }
    assert Oracle(project).spec.entity("item").dedupe == ("_ingested_at", "_load_id", "_source_row_id", "_mapping")


NAMES_ENTITY = """
spec_version: 1
entities:
  thing:
    grain: one row per thing
    key: [id]
    fields:
      id: {type: string}
      Label: {type: string}
      amount: {type: "decimal(10,2)"}
    quarantine: {retention: 7d}
    quality:
      - {rule: expression, name: amount_positive, expr: "amount > 0", on_fail: flag}
"""
NAMES_MAPPING_A = """
mapping_version: 1
source: raw_a
target: thing
key: {id: {from: "$.id"}}
fields:
  Label:
    from: "$.label"
    quality:
      - {rule: length, max: 20, on_fail: flag}
      - {rule: length, max: 10, on_fail: quarantine}
      - {rule: length, min: 1, on_fail: flag}
      - {rule: length, max: 5, on_fail: fail}
      - {rule: length, min: 1, max: 9, on_fail: flag}
  amount: {from: "$.amount", transform: [{to_decimal: [10, 2]}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
NAMES_MAPPING_B = """
mapping_version: 1
source: raw_b
name: second_feed
target: thing
key: {id: {from: "$.ref"}}
fields:
  amount:
    from: "$.betrag"
    transform: [{to_decimal: [10, 2]}]
    quality:
      - {rule: range, min: 0, on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def _rules(spec_dir, entity="thing") -> dict:
    from tests.support.oracle import read_spec

    return {r.name: r for r in read_spec(spec_dir).entity(entity).rules}


def test_collisions_are_numbered_in_declaration_order_and_names_fold(write_spec):
    spec = write_spec({"entity.yaml": NAMES_ENTITY, "m_a.yaml": NAMES_MAPPING_A, "m_b.yaml": NAMES_MAPPING_B}, base=False)
    rules = _rules(spec)
    got = {n: (r.kind, r.disposition, r.mapping, r.param("min"), r.param("max")) for n, r in rules.items()}
    assert got == {
        # m_a.yaml comes first: its fields keep the plain names, m_b.yaml's get _2
        "id_coercible": ("coercible", "quarantine", "raw_a", None, None),
        "id_coercible_2": ("coercible", "quarantine", "second_feed", None, None),
        "label_coercible": ("coercible", "quarantine", "raw_a", None, None),  # `Label` folds to `label`
        "label_length_max": ("length", "flag", "raw_a", None, 20),
        "label_length_max_2": ("length", "quarantine", "raw_a", None, 10),
        "label_length_min": ("length", "flag", "raw_a", 1, None),
        "label_length_max_3": ("length", "fail", "raw_a", None, 5),
        "label_length": ("length", "flag", "raw_a", 1, 9),
        "amount_coercible": ("coercible", "quarantine", "raw_a", None, None),
        "amount_coercible_2": ("coercible", "quarantine", "second_feed", None, None),
        "amount_range_min": ("range", "quarantine", "second_feed", 0, None),
        "amount_positive": ("expression", "flag", None, None, None),
    }
    # Renaming the files swaps which mapping is declared first, and so which names get _2.
    spec = write_spec({"entity.yaml": NAMES_ENTITY, "m_b.yaml": NAMES_MAPPING_A, "m_a.yaml": NAMES_MAPPING_B}, base=False)
    rules = _rules(spec)
    assert (rules["amount_coercible"].mapping, rules["amount_coercible_2"].mapping) == ("second_feed", "raw_a")


def test_an_expression_named_like_a_generated_rule_is_refused(write_spec):
    entity = NAMES_ENTITY.replace("name: amount_positive", "name: label_length_max_2")
    spec = write_spec({"entity.yaml": entity, "m_a.yaml": NAMES_MAPPING_A}, base=False)
    with pytest.raises(Unsupported, match="refused spec"):
        _rules(spec)


def test_field_rules_judge_their_own_mapping_only(write_spec):
    spec = write_spec({"entity.yaml": NAMES_ENTITY, "m_a.yaml": NAMES_MAPPING_A, "m_b.yaml": NAMES_MAPPING_B}, base=False)
    meta = {"_load_id": "l1", "_ingested_at": T0}
    build = Oracle(spec).build({
        "raw_a": [{**meta, "_source_row_id": "a1", "id": "X", "label": "ok", "amount": "-1"}],
        "raw_b": [{**meta, "_source_row_id": "b1", "ref": "Y", "betrag": "-1"},
                  {**meta, "_source_row_id": "b2", "ref": "Z", "betrag": "x"}],
    })["thing"]
    got = {(r.mapping, r.srid): (r.route, r.failed_rules) for r in build.rows}
    assert got == {
        ("raw_a", "a1"): ("kept", ("amount_positive",)),  # raw_a has no range rule on amount
        ("second_feed", "b1"): ("quarantined", ("amount_positive", "amount_range_min")),
        ("second_feed", "b2"): ("quarantined", ("amount_coercible_2",)),  # second_feed's coercible
    }


DEDUPE_ENTITY = """
spec_version: 1
entities:
  reading:
    grain: one row per reading
    key: [reading_id]
    fields:
      reading_id: {type: string}
      seq: {type: int}
      value: {type: "decimal(10,2)"}
      code: {type: string}
      taken_on: {type: date}
      batch: {type: string}
    dedupe: {keep: latest_by, field: seq, tie_break: [batch, _load_id]}
    quarantine: {retention: 30d}
"""
DEDUPE_MAPPING = """
mapping_version: 1
source: raw_readings
target: reading
key:
  reading_id: {from: "$.id"}
fields:
  seq: {from: "$.seq", transform: [{nullif: "-"}, to_int]}
  value: {from: "$.value", transform: [{nullif: "n/a"}, {to_decimal: [10, 2]}]}
  code: {from: "$.label", transform: [{regex_extract: ["^([A-Z]+)-", 1]}]}
  taken_on: {from: "$.taken", transform: [{parse_date: ISO8601}]}
  batch: {from: "$.batch", transform: [trim]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def test_implicit_coercible_is_fail_on_the_dedupe_order_and_quarantine_elsewhere(write_spec):
    spec = write_spec({"entity.yaml": DEDUPE_ENTITY, "mapping.yaml": DEDUPE_MAPPING}, base=False)
    rules = _rules(spec, "reading")
    assert {n: (r.disposition, r.implicit) for n, r in rules.items()} == {
        "seq_coercible": ("fail", True),  # the dedupe field: fail, even through nullif
        "batch_coercible": ("fail", True),  # a tie_break column: fail
        "reading_id_coercible": ("quarantine", True),
        "taken_on_coercible": ("quarantine", True),
        # value (nullif) and code (regex_extract) too: the NULL they make on purpose is no failed
        # cast, their casts' failures are (decision 0019)
        "value_coercible": ("quarantine", True),
        "code_coercible": ("quarantine", True),
    }
    from tests.support.oracle import read_spec

    assert read_spec(spec).entity("reading").dedupe == ("seq", "batch", "_load_id", "_source_row_id", "_mapping")


def test_a_weaker_coercible_on_a_dedupe_column_is_refused(write_spec):
    mapping = DEDUPE_MAPPING.replace(
        '  batch: {from: "$.batch", transform: [trim]}',
        '  batch: {from: "$.batch", transform: [trim], quality: [{rule: coercible, on_fail: quarantine}]}',
    )
    spec = write_spec({"entity.yaml": DEDUPE_ENTITY, "mapping.yaml": mapping}, base=False)
    with pytest.raises(Unsupported, match="DedupeDispositionConflict"):
        _rules(spec, "reading")


def test_a_dedupe_column_that_does_not_cast_fails_the_build_even_on_a_loser_and_the_order_reads_typed_values(write_spec):
    spec = write_spec({"entity.yaml": DEDUPE_ENTITY.replace("      code: {type: string}\n", ""),
                       "mapping.yaml": DEDUPE_MAPPING.replace(
                           '  code: {from: "$.label", transform: [{regex_extract: ["^([A-Z]+)-", 1]}]}\n', "")},
                      base=False)

    def r(srid, seq, batch="b", load="l1"):
        return {"_load_id": load, "_ingested_at": T0, "_source_row_id": srid, "id": "R", "seq": seq, "value": "1",
                "taken": "2025-01-01", "batch": batch}

    j = Oracle(spec).build({"raw_readings": [r("s1", "9"), r("s2", "10"), r("s3", "-"), r("s4", "10", batch="a")]})["reading"]
    # 10 > 9 as numbers (not as text); a NULL seq sorts last; batch breaks the tie at 10: "b" > "a"
    assert {s.srid: s.rank for s in j.rows} == {"s2": 1, "s4": 2, "s1": 3, "s3": 4}
    # A seq that does not cast is NULL, so it sorts last and loses its key; the winner would be a
    # guess, so its (fail) coercible rule judges the loser too and stops the run (0018). The
    # loser stays deduped; the rule is in its failed rules.
    j = Oracle(spec).build({"raw_readings": [r("s1", "9"), r("s2", "ten")]})["reading"]
    assert [(s.srid, s.route, s.failed_rules) for s in j.rows] == [("s1", "kept", ()), ("s2", "deduped", ("seq_coercible",))]
    assert j.blocked == ["reading: fail rule seq_coercible fired"]
    j = Oracle(spec).build({"raw_readings": [r("s1", "9"), {**r("s2", "ten"), "id": "Q"}]})["reading"]
    assert [(s.srid, s.route, s.failed_rules) for s in j.rows] == [("s1", "kept", ()), ("s2", "failed", ("seq_coercible",))]
    assert j.blocked == ["reading: fail rule seq_coercible fired"]


# ---------------------------------------------------------------- typed in_set

TYPED_ENTITY = """
spec_version: 1
entities:
  thing:
    grain: one row per thing
    key: [id]
    fields:
      id: {type: string}
      v: {type: "decimal(10,2)"}
      n: {type: int}
      d: {type: date}
    quarantine: {retention: 7d}
"""
TYPED_MAPPING = """
mapping_version: 1
source: raw_things
target: thing
key: {id: {from: "$.id"}}
fields:
  v: {from: "$.v", quality: [{rule: in_set, values: [1.5], on_fail: flag}]}
  n: {from: "$.n", quality: [{rule: in_set, values: [7, "8"], on_fail: flag}]}
  d: {from: "$.d", quality: [{rule: in_set, values: ["2026-01-01"], on_fail: flag}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


@pytest.mark.parametrize(
    "v, n, d, fired",
    [
        ("1.50", "7", "2026-01-01", ()),  # 1.50 is the decimal 1.5: the text "1.50" is not "1.5", the value is
        ("1.5", "08", "2026-01-01", ()),  # 08 is the int 8
        ("1.499", "7", "2026-01-01", ()),  # rounds to 1.50 on the way into decimal(10,2)
        ("2", "7", "2026-01-01", ("v_in_set",)),
        ("1.51", "9", "2026-01-02", ("d_in_set", "n_in_set", "v_in_set")),
        (None, None, None, ()),  # NULL never fires
    ],
)
def test_in_set_compares_values_of_the_column_type(write_spec, v, n, d, fired):
    spec = write_spec({"entity.yaml": TYPED_ENTITY, "mapping.yaml": TYPED_MAPPING}, base=False)
    (staged,) = Oracle(spec).build({"raw_things": [
        {"_load_id": "l1", "_ingested_at": T0, "_source_row_id": "s1", "id": "A", "v": v, "n": n, "d": d}]})["thing"].rows
    assert staged.failed_rules == fired


def test_in_set_values_no_column_value_can_equal_are_refused(write_spec):
    mapping = TYPED_MAPPING.replace("values: [7, \"8\"]", "values: [7, x]")
    spec = write_spec({"entity.yaml": TYPED_ENTITY, "mapping.yaml": mapping}, base=False)
    with pytest.raises(Unsupported):
        Oracle(spec)


# ---------------------------------------------------------------- re-delivery (decision 0014)


def test_a_redelivery_supersedes_the_earlier_delivery_of_its_source_row(project):
    j = judge(
        project,
        row("s1", "A", load="l1", at=T0, price="-1"),  # quarantinable, but superseded: never judged
        row("s1", "A", load="l2", at=T1),  # the latest delivery of s1: kept
        row("s2", "B", load="l1", at=T0),
        row("s2", "B", load="l2", at=T0),  # same instant: the higher _load_id is the later delivery
    )
    got = {(r.srid, r.load_id): (r.superseded, r.rank, r.route, r.failed_rules) for r in j.rows}
    assert got == {
        ("s1", "l1"): (True, None, "deduped", ()),
        ("s1", "l2"): (False, 1, "kept", ()),
        ("s2", "l1"): (True, None, "deduped", ()),
        ("s2", "l2"): (False, 1, "kept", ()),
    }
    assert j.blocked == []  # a repeat across loads is not corrupt ingestion
    assert j.mart[0] == MartRow("item", None, "(entity)", "(entity)", 2, 0, 0, 2)


def test_a_superseded_delivery_takes_no_part_in_the_key_dedupe(project):
    # s1's first delivery is the newest row of key A by _ingested_at, but s1 was re-delivered
    # (later load, older _ingested_at cannot happen for one source row: the re-delivery is later).
    j = judge(
        project,
        row("s1", "A", load="l1", at=T1),
        row("s2", "A", load="l1", at=T2),  # newer row of A: beats s1's latest delivery
        row("s1", "A", load="l3", at=T2, price="bad"),  # s1 re-delivered at the same instant as s2
    )
    got = {(r.srid, r.load_id): (r.rank, r.route) for r in j.rows}
    # latest deliveries s1@l3 and s2@l1 tie on _ingested_at; the tie_break _load_id decides: l3 > l1
    assert got == {("s1", "l1"): (None, "deduped"), ("s2", "l1"): (2, "deduped"), ("s1", "l3"): (1, "quarantined")}


def test_only_a_repeat_within_one_load_is_corrupt_ingestion(project):
    j = judge(project, row("s1", "A", load="l1"), row("s1", "B", load="l1"))
    assert j.rows == [] and j.blocked == ["raw_items: _source_row_id 's1' repeats within _load_id 'l1'"]


def test_a_redelivery_with_a_changed_key(project):
    wh = Warehouse(project)
    first = [row("s1", "A", load="l1", at=T0, price="bad"), row("s2", "C", load="l1", at=T0)]
    wh.build({"raw_items": first})
    rid = reject_id("raw_items", "s1")
    assert wh.ledger.rows[rid].key_values == {"item_id": "A"}

    # The source corrects s1's key to C and breaks it another way; s2 still delivers C.
    second = first + [row("s1", "C", load="l2", at=T1, qty="500")]
    j = wh.build({"raw_items": second})["item"]
    got = {(r.srid, r.load_id): (r.rank, r.route) for r in j.rows}
    assert got == {("s1", "l1"): (None, "deduped"), ("s2", "l1"): (2, "deduped"), ("s1", "l2"): (1, "quarantined")}
    assert j.kept == []  # key A is gone (no source row delivers it now); C's winner is quarantined
    again = wh.ledger.rows[rid]
    assert (again.key_values, again.failed_rules, again.load_id, again.first_seen, again.last_seen, again.open) == (
        {"item_id": "C"}, ("qty_small",), "l2", dt.datetime(2026, 1, 1, 10), dt.datetime(2026, 1, 1, 11), True)
    assert len(wh.ledger.rows) == 1  # one reject row per source row

    # Corrected for good: s1 keeps C, s2 loses it and was never diverted (no reject row for it).
    third = second + [row("s1", "C", load="l3", at=T2)]
    j = wh.build({"raw_items": third})["item"]
    assert [(r.srid, r.load_id) for r in j.kept] == [("s1", "l3")]
    done = wh.ledger.rows[rid]
    assert (done.resolved_in, done.resolution, done.load_id, done.key_values) == (3, "admitted", "l2", {"item_id": "C"})
    assert set(wh.ledger.rows) == {rid}


def test_resolution_and_reopening_follow_the_latest_delivery(project):
    wh = Warehouse(project)
    rid = reject_id("raw_items", "s1")
    bronze = [row("s1", load="l1", at=T0, price="bad")]
    wh.build({"raw_items": bronze})
    bronze.append(row("s1", load="l2", at=T1))  # a corrected re-send, the bad delivery still in bronze
    wh.build({"raw_items": bronze})
    r = wh.ledger.rows[rid]
    assert (r.resolved_in, r.resolution, r.last_seen, r.load_id, r.failed_rules) == (
        2, "admitted", dt.datetime(2026, 1, 1, 10), "l1", ("price_coercible",))  # 0301: the last diversion's account
    wh.build({"raw_items": bronze})  # nothing new: the superseded bad delivery reopens nothing
    assert wh.ledger.rows[rid].resolved_in == 2
    bronze.append(row("s1", load="l3", at=T2, born=None))  # relapse
    wh.build({"raw_items": bronze})
    r = wh.ledger.rows[rid]
    assert (r.open, r.resolution, r.first_seen, r.last_seen, r.failed_rules, r.load_id) == (
        True, None, dt.datetime(2026, 1, 1, 10), dt.datetime(2026, 1, 1, 12), ("born_not_null",), "l3")
    # a replayed delivery is one more delivery: with its original _ingested_at it is older than l3
    bronze.append({**row("s1", load="__replay__", at=T0), "price": "10.00"})
    j = wh.build({"raw_items": bronze})["item"]
    assert [(s.load_id, s.route) for s in j.rows if not s.superseded] == [("l3", "quarantined")]


def test_replay_redelivers_open_rejects_whose_bronze_aged_out(project):
    wh = Warehouse(project)
    wh.build({"raw_items": [row("s1", "A", price="bad"), row("s2", "B", price="bad"), row("s3", "C")]})
    aged = {"raw_items": [row("s2", "B", price="bad"), row("s3", "C")]}
    wh.build(aged)
    out = wh.replay("item", aged)
    assert out == {"raw_items": [{**row("s1", "A", price="bad"), "_load_id": "__replay__"}]}


def test_schemas_come_from_assay_yml(write_spec):
    from tests.support.oracle import read_schemas

    spec = write_spec({"assay.yml": "name: shop\nspecs: spec\nschemas: {silver: refined}\n",
                       "spec/entity.yaml": ENTITY, "spec/mapping.yaml": MAPPING}, base=False)
    assert read_schemas(spec) == {"bronze": "bronze", "silver": "refined", "gold": "gold", "meta": "assay_meta"}
    assert [e.name for e in Oracle(spec).spec.entities] == ["item"]


def test_the_bare_date_cast_trims_spaces_and_refuses_other_white_space():
    """docs/spec.md (decision 0978, amended in session 38), as the oracle reads it."""
    import datetime as dt

    from tests.support.oracle.values import run_chain

    assert run_chain(" 2026-03-01 10:00:00 ", [], "timestamp").value == dt.datetime(2026, 3, 1, 10)
    assert run_chain(" 2026-03-01", [], "date").value == dt.date(2026, 3, 1)
    for bad in ("\t2026-03-01 10:00:00", "2026-03-01t10:00:00", "2026-03-01T10:00:00z"):
        got = run_chain(bad, [], "timestamp")
        assert got.value is None and got.marker, bad
