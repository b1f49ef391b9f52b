"""Expression rules compare values of one kind (validate/expressions.py, `type_mismatches`).

`status > 5` on a text field stopped the build with the engine's own error (DuckDB and
PostgreSQL refuse to bind it; Spark compares as numbers), and `amount > 'abc'` stopped it at the
first row; `flag = 1` is accepted by DuckDB and refused by PostgreSQL. Each is refused at
validation, at the rule, with what to write (an outside tester, session 41)."""

from __future__ import annotations

import pytest

from assay.ir.resolve import compile_spec
from assay.validate.expressions import parse_expression, type_mismatches

TYPES = {"status": "string", "amount": "decimal(12,2)", "qty": "int", "born": "date", "seen": "timestamp",
         "ok": "bool", "doc": "variant", "_load_id": "string", "_ingested_at": "timestamp"}

ACCEPTED = [
    "status = '5'", "amount > '1.5'", "amount >= 0", "-5 < qty", "qty * amount > 0", "born > '2025-01-01'",
    "seen <= '2025-01-01T10:00:00Z'", "born > '2025-01-01 00:00:00'", "born < seen", "ok = 'true'", "status || 'x' = 'y'",
    "length(status) > 5", "doc = 5", "CASE WHEN qty IN (1, 2) THEN amount > 0 ELSE COALESCE(amount, 0) >= 0 OR ok END",
    "cast(status as int) > 5", "_ingested_at > '2025-01-01'", "qty between 1 and 10", "status in ('a', 'b')",
]
REFUSED = {
    "status > 5": ["compares text `status` with the number `5`"],
    "amount <> 'x'": ["compares number `amount` with the text 'x' (no number)"],
    "qty in (1, 'x', 3)": ["compares number `qty` with the text 'x' (no number)"],
    "born > 'yesterday'": ["compares date `born` with the text 'yesterday' (no date)"],
    "seen between '2025-01-01' and 5": ["compares timestamp `seen` with the number `5`"],
    "ok = 1": ["compares boolean `ok` with the number `1`"],
    "amount > status": ["compares number `amount` with text `status`"],
    "status + 1 > 2": ["does arithmetic (`status + 1`) on text `status`"],
    "_load_id > 5": ["compares text `_load_id` with the number `5`"],
}


@pytest.mark.parametrize("text", ACCEPTED)
def test_values_of_one_kind_pass(text):
    tree, problems = parse_expression(text)
    assert problems == [] and type_mismatches(tree, TYPES) == []


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_values_of_two_kinds_are_named(text):
    tree, problems = parse_expression(text)
    assert problems == [] and type_mismatches(tree, TYPES) == REFUSED[text]


def test_refused_at_the_rule_with_what_to_write(write_spec):
    rule = '      - {rule: expression, name: st, expr: "status > 5", on_fail: flag}\n'
    spec = write_spec({})
    path = spec / "entity_orders.yaml"
    text = path.read_text()
    anchor = "on_missing: unknown_member}\n"
    path.write_text(text.replace(anchor, anchor + rule))
    project, diags, _ = compile_spec(spec)
    assert project is None
    assert [(d.file, d.code, d.message) for d in diags] == [(
        "entity_orders.yaml", "SPEC_INVALID",
        "expression rule `st` of entity `orders`: `status > 5` compares text `status` with the number `5`: the "
        "engines judge that differently or refuse it; compare values of one kind (a quoted text with a text field, "
        "a bare number with a number field, a date as 'YYYY-MM-DD'), or declare the field with the type its values "
        "have.")]



@pytest.mark.parametrize(("text", "named"), [("try_cast(status as double) > 1", "DOUBLE"),
                                             ("try_cast(status as timestamptz) is null", "TIMESTAMPTZ")])
def test_a_try_cast_to_a_type_assay_cannot_try_everywhere_is_refused(text, named):
    """assay spells a try-cast per engine to its own types only; sqlglot wrote any other as a plain
    CAST on PostgreSQL, which raised on the value the rule judges (decision 1146)."""
    _tree, problems = parse_expression(text)
    assert problems == [f"`{text}` tries a cast to {named}, which not every engine can try; write try_cast to int, "
                        "decimal(p,s), varchar, boolean, date, timestamp or json."]


@pytest.mark.parametrize("text", ["try_cast(status as int) > 1", "try_cast(status as decimal(5,2)) > 1",
                                  "try_cast(status as date) is null", "status::timestamp is null"])
def test_a_try_cast_to_an_assay_type_passes(text):
    assert parse_expression(text)[1] == []


@pytest.mark.parametrize(("text", "said"), [
    ("regexp_matches(status, 'a(b)')", "a capturing group at position 2 is refused"),
    ("regexp_matches(status, 'x', 'i')", "with options, which not every engine keeps"),
    ("regexp_matches(status, status)", "with a pattern that is not a quoted literal"),
    ("regexp_extract(status, 'x', 1) = 'y'", "which the engines do not judge alike"),
    ("regexp_replace(status, 'x', 'y') = 'z'", "which the engines do not judge alike"),
    ("status similar to 'x'", "which the engines do not judge alike"),
])
def test_a_regex_call_the_engines_judge_apart_is_refused(text, said):
    """decision 1147: RE2, POSIX and Java regexes agree only on the portable subset; sqlglot drops a
    match's options; PostgreSQL has no regexp_extract, Spark's regexp_replace replaces every match."""
    problems = parse_expression(text)[1]
    assert len(problems) == 1 and said in problems[0], problems


@pytest.mark.parametrize("text", ["regexp_matches(status, '[0-9]+')", "status ~ '^a|b$'", "regexp_full_match(status, 'x')",
                                  "not regexp_matches(status, '\\\\d{3}')"])
def test_a_portable_regex_call_passes(text):
    assert parse_expression(text)[1] == []
